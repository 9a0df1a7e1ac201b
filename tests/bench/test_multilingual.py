"""The multilingual benchmark's set is what it says: at least 40 facts in each language with one answer per
question, at least 1,000 ordinary notes that name nobody a fact is about, disjoint halves; and its scoring counts
positions and budgets only. No model and no timing here."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tests.bench import multilingual as ml

_SCRIPTS = {
    "zh": re.compile(r"[\u4e00-\u9fff]"),
    "ja": re.compile(r"[\u3040-\u30ff]"),  # kana: a Japanese text, not a Chinese one
    "ru": re.compile(r"[\u0400-\u04ff]"),
    "ar": re.compile(r"[\u0600-\u06ff]"),
}
_LATIN = re.compile(r"^[\x00-\u024f\u2013\u2014\u2019\u00ab\u00bb\u20ac]*$")


def _script_ok(lang: str, text: str) -> bool:
    if lang in _SCRIPTS:
        return _SCRIPTS[lang].search(text) is not None and (lang == "ja" or not _SCRIPTS["ja"].search(text))
    return _LATIN.match(text) is not None


def test_every_language_has_40_facts_each_with_a_question_in_it() -> None:
    facts, questions = ml.facts(), ml.questions()
    per = Counter(f.lang for f in facts)
    for lang in ml.LANGUAGES:
        assert per[lang] >= 40, lang
        own = [q for q in questions if q.case == lang]
        assert len(own) == per[lang], lang
        assert all(q.lang == lang and q.answer.startswith(f"{lang}-") for q in own)
    assert per["en"] >= 40


def test_both_directions_across_languages_have_40_questions_spread_over_the_seven() -> None:
    questions = ml.questions()
    english = [q for q in questions if q.case == ml.CROSS_EN]
    other = [q for q in questions if q.case == ml.CROSS_XX]
    assert len(english) >= 40 and len(other) >= 40
    assert all(q.lang == "en" and not q.answer.startswith("en-") for q in english)
    assert all(q.lang in ml.LANGUAGES and q.answer.startswith("en-") for q in other)
    assert {q.answer[:2] for q in english} == set(ml.LANGUAGES)
    assert {q.lang for q in other} == set(ml.LANGUAGES)


def test_each_question_names_one_fact_that_exists_once() -> None:
    facts, questions = ml.facts(), ml.questions()
    keys = Counter(f.key for f in facts)
    assert all(count == 1 for count in keys.values())
    assert len({f.text for f in facts}) == len(facts)  # no fact is merged into another as a repeat
    assert all(keys[q.answer] == 1 for q in questions)
    assert len({(q.case, q.text) for q in questions}) == len(questions)
    assert {q.answer for q in questions} == set(keys)  # every fact is asked about


def test_texts_are_in_their_languages_script() -> None:
    for f in ml.facts():
        assert _script_ok(f.lang, f.text), f.text
    for q in ml.questions():
        assert _script_ok(q.lang, q.text), q.text


def test_at_least_1000_distinct_notes_in_all_eight_languages_none_a_fact() -> None:
    notes = ml.ordinary()
    assert len(notes) >= 1_000
    assert len({n.text for n in notes}) == len(notes)
    per = Counter(n.lang for n in notes)
    assert set(per) == set(ml.NOTE_LANGUAGES) and min(per.values()) >= 100
    facts = {f.text for f in ml.facts()}
    assert not facts & {n.text for n in notes}
    assert all("{" not in n.text and "}" not in n.text for n in notes)  # every template filled
    assert all(_script_ok(n.lang, n.text) for n in notes)


def test_notes_name_nobody_a_fact_or_question_is_about() -> None:
    """The people of notes are other people: a note never says something about a fact's subject."""
    told = " ".join([f.text for f in ml.facts()] + [q.text for q in ml.questions()])
    for lang, spec in ml.NOTES.items():
        for person in spec.people:
            for form in {v for k, v in person.items() if k.startswith("p")}:
                assert form not in told, (lang, form)


def test_halves_are_disjoint_and_hold_every_case_and_language() -> None:
    facts, questions, notes = ml.facts(), ml.questions(), ml.ordinary()
    a, b = ml.half_facts(facts, "A"), ml.half_facts(facts, "B")
    assert not {f.key for f in a} & {f.key for f in b} and len(a) + len(b) == len(facts)
    na, nb = ml.half_notes(notes, "A"), ml.half_notes(notes, "B")
    assert not {n.text for n in na} & {n.text for n in nb} and len(na) + len(nb) == len(notes)
    for chosen, kept in ((a, na), (b, nb)):
        keys = {f.key for f in chosen}
        cases = Counter(q.case for q in questions if q.answer in keys)
        assert set(cases) == set(ml.CASES) and min(cases.values()) >= 20
        assert {n.lang for n in kept} == set(ml.NOTE_LANGUAGES)
    limited = ml.half_facts(facts, "A", limit=2)
    assert Counter(f.lang for f in limited) == dict.fromkeys([*ml.LANGUAGES, "en"], 2)


def test_the_timeline_is_in_date_order_within_its_spans() -> None:
    facts, notes = ml.half_facts(ml.facts(), "B"), ml.half_notes(ml.ordinary(), "B")
    dated = ml.timeline(facts, notes)
    assert [d.at for d in dated] == sorted(d.at for d in dated)
    assert sum(d.fact is not None for d in dated) == len(facts) and len(dated) == len(facts) + len(notes)
    assert all(ml.NOW - ml.NOTE_SPAN <= d.at < ml.NOW for d in dated)
    assert all(d.at >= ml.NOW - ml.FACT_SPAN for d in dated if d.fact is not None)
    assert dated == ml.timeline(facts, notes)  # deterministic


@dataclass(frozen=True)
class _Record:
    id: str


@dataclass(frozen=True)
class _Excerpt:
    text: str


@dataclass(frozen=True)
class _Hit:
    record: _Record
    excerpt: _Excerpt | None = None


def test_scoring_counts_positions_and_what_the_budget_shows() -> None:
    assert ml.ranked_first(["a", "b"], "a") and not ml.ranked_first(["b", "a"], "a") and not ml.ranked_first([], "a")
    assert ml.within(["x", "y", "a"], "a") and not ml.within(["x", "y", "z", "a"], "a")
    assert ml.shown([_Hit(_Record("x")), _Hit(_Record("a"))], "a", "the fact")
    assert not ml.shown([_Hit(_Record("x"))], "a", "the fact")
    assert ml.shown([_Hit(_Record("a"), _Excerpt("... the fact ..."))], "a", "the fact")
    assert not ml.shown([_Hit(_Record("a"), _Excerpt("... other words ..."))], "a", "the fact")


def test_the_table_has_a_row_per_case_and_the_totals() -> None:
    a, b = ml.Score(), ml.Score()
    a.cases["zh"] = ml.Tally(n=2, first=1, top=2, budget=2, latencies=[1.0, 3.0])
    b.cases["zh"] = ml.Tally(n=2, first=2, top=2, budget=1, latencies=[2.0])
    both = ml.Score()
    both.merge(a)
    both.merge(b)
    lines = ml.table({"A": a, "B": b, "both": both})
    assert len(lines) == 2 + len(ml.ROWS)
    zh = next(line for line in lines if line.startswith("| Chinese"))
    assert zh == "| Chinese (zh) | 4 | 75.0% | 100.0% | 75.0% | 2.0 | 50.0% | 100.0% |"
