"""The terms a memory is found by: stemmed words, its dates, the time term; and the dates a query names."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime

import pytest

from tiers.text.terms import (
    MARK,
    TIME_TERM,
    asked_dates,
    date_terms,
    document_terms,
    language,
    length,
    says_a_time,
    words,
)

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_words_are_lower_cased_stemmed_and_without_stop_words() -> None:
    assert words("The groups were running to the painting") == ["group", "run", "paint"]


def test_a_memory_is_indexed_under_its_words_and_the_day_it_happened() -> None:
    terms = document_terms("We painted the fence", WHEN).split()

    assert terms[:2] == ["paint", "fenc"]
    assert set(date_terms(date(2023, 5, 8))) <= set(terms)
    assert TIME_TERM not in terms


def test_a_memory_that_says_a_time_carries_the_time_term_and_the_dates_it_points_to() -> None:
    terms = document_terms("I went to the lake yesterday", WHEN).split()

    assert TIME_TERM in terms
    assert f"{MARK}d2023-05-07" in terms  # yesterday, from the day it was said
    assert f"{MARK}d2023-05-08" in terms


def test_length_counts_words_and_the_time_term_but_not_the_dates() -> None:
    terms = document_terms("I went to the lake yesterday", WHEN).split()

    assert length(terms) == len([t for t in terms if not t.startswith(f"{MARK}d") and t[1] not in "ym"]) == 4
    assert length([]) == 1


def test_a_query_names_a_day_a_month_of_a_year_a_month_or_a_year() -> None:
    assert asked_dates("what happened on 7 May 2023?") == [f"{MARK}d2023-05-07"]
    assert asked_dates("what did we do in October 2023") == [f"{MARK}m2023-10"]
    assert asked_dates("where were they in June") == [f"{MARK}mo6"]
    assert asked_dates("in 2022 they moved") == [f"{MARK}y2022"]
    assert asked_dates("how are you") == []


def test_no_word_of_a_text_can_be_taken_for_a_date_term() -> None:
    assert not any(t.startswith(MARK) for t in words("§y2023 d2023 y2023 the mark"))


# English as people and agents write it, with the traps the other languages' rules could fall into.
_ENGLISH = [
    "I'm allergic to peanuts, so please never book a Thai place without checking.",
    "Caroline: It went great – they approved my application last week!",
    "Melanie: I painted a sunrise over the lake yesterday, it's my favourite so far 🎉",
    "What did Caroline paint in May 2023?",
    "When is the user's dentist appointment?",
    "The user prefers window seats and never flies before 9 am.",
    "We met D'Angelo at the café near the station; the espresso was “fine”.",
    "Crème brûlée at Café Müller was the best dessert of the trip.",
    "I met Ayer at the bar and we talked about the Die Hard screening.",
    "She said c'est la vie and left the meeting early.",
    "L'Oréal shares fell after the report; rock n' roll never dies.",
    "Don't forget the Q&A on Friday at 3pm in room 204.",
    "My daughter Emma starts school on 3 September 2024.",
    "Remember to renew the passport before 12 March.",
    "Deploy the billing service with Kubernetes, not Docker Swarm.",
    "How long ago did we move to Lisbon?",
    "Mi casa es su casa, as the saying goes, and the señor agreed.",
    "We spent August in Porto and September in Berlin.",
    "The budget for 2025-03 was approved on 2025-02-14.",
    "Von Neumann architecture is covered in chapter 4 of the course.",
    "Our team lead, Jean-Luc, wants the demo ready by tomorrow.",
    "Los Angeles traffic was terrible, we were late for the Dodgers game.",
    "I love hiking and I hate crowded beaches.",
    "He is a nurse at St. Mary's and works night shifts.",
    "What is my sister's name?",
    "Did we decide on Postgres or MySQL for Atlas?",
    "Bought an e-bike for 1,200 euros last month.",
    "The recipe calls for pâté, jalapeño and a pinch of za'atar.",
    "La La Land is on TV tonight at 8.",
    "Ask Dave about the Q3 numbers before the board meeting.",
    "it is what it is",
    "peanut allergy",
    "cat name",
    "Where did I park the car?",
    "Is the user vegetarian?",
    "The naïve approach failed; the résumé parser needs a rewrite.",
    "Eine kleine Nachtmusik played at the wedding, which I loved.",
    "The user's son, Noah, is allergic to cats.",
    "Call me Sam; my name is Samantha but nobody uses it.",
    "We have a standing rule: always run the tests before you push.",
]


def test_english_is_indexed_exactly_as_before_other_languages_dates_and_votes_were_read() -> None:
    """Every term, date and time flag of these English texts, hashed as it was at commit dea6450: LoCoMo's figures
    and the terms of every stored English memory depend on it (checked there on LoCoMo dev's 23,849 texts)."""
    found = [[words(t), document_terms(t, WHEN), says_a_time(t)] for t in _ENGLISH]
    assert hashlib.sha256(json.dumps(found, ensure_ascii=False).encode()).hexdigest()[:16] == "667083bcf5e142fc"


@pytest.mark.parametrize(
    ("said", "back"),
    [
        ("昨天我去了医院。", 1),
        ("昨日は歯医者に行った。", 1),
        ("一昨日、京都に着いた。", 2),
        ("上周我们搬家了。", 7),
        ("Ayer fui al médico.", 1),
        ("Fui al médico la semana pasada.", 7),
        ("Gestern war ich beim Arzt.", 1),
        ("Wir waren letzte Woche in Rom.", 7),
        ("Hier, je suis allée chez le médecin.", 1),
        ("Le mois dernier, j'ai changé de banque.", 30),
        ("Вчера я был у врача.", 1),
        ("В прошлом году мы ездили в Казань.", 365),
        ("ذهبت أمس إلى الطبيب.", 1),
        ("سافرنا الأسبوع الماضي إلى دبي.", 7),
    ],
)
def test_a_day_said_relative_to_today_in_another_language_is_indexed_under_its_date(said: str, back: int) -> None:
    terms = document_terms(said, WHEN).split()

    assert TIME_TERM in terms
    assert f"{MARK}d{date.fromordinal(WHEN.date().toordinal() - back).isoformat()}" in terms


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("2027年3月3日我要做什么？", ["d2027-03-03"]),
        ("２０２７年３月３日の予定は？", ["d2027-03-03"]),
        ("2027年3月有什么安排？", ["m2027-3"]),
        ("三月份的会议在哪里？", ["mo3"]),
        ("¿Qué pasa el 3 de marzo de 2027?", ["d2027-03-03"]),
        ("¿Qué hicimos en marzo?", ["mo3"]),
        ("Was ist am 3. März 2027?", ["d2027-03-03"]),
        ("Wohin fahren wir im März 2027?", ["m2027-3"]),
        ("Qu'est-ce qui se passe le 1er mars 2027 ?", ["d2027-03-01"]),
        ("Où étions-nous en avril ?", ["mo4"]),
        ("Что будет 3 марта 2027 года?", ["d2027-03-03"]),
        ("Куда мы едем в марте 2027 года?", ["m2027-3"]),
        ("ماذا يحدث في ٣ مارس ٢٠٢٧؟", ["d2027-03-03"]),
        ("ماذا فعلنا في شهر آذار؟", ["mo3"]),
        ("what is due on 2027-03-03?", ["d2027-03-03"]),
        ("Termin am 03.03.2027?", ["d2027-03-03"]),
    ],
)
def test_a_query_names_a_date_in_iso_form_and_in_other_languages_words(query: str, named: list[str]) -> None:
    assert asked_dates(query) == [MARK + term for term in named]


@pytest.mark.parametrize(
    "text",
    [
        "Ich bin hier.",  # "hier" is "here" in German and Dutch
        "Ik ben hier.",
        "Hace frío en la oficina.",  # "hace" without a span of time
        "Il y a un chat dans le jardin.",  # "there is", not "ago"
        "Рабочая среда готова.",  # "environment", not Wednesday
        "I met Ayer at the bar.",  # a name
        "3个月后再说。",  # three months (a span), not March
        "3ヶ月かかります。",
        "2027年2月30日",  # no such day
        "31.02.2027",
        "나는 어제 병원에 갔다.",  # Korean: not understood, never misread
        "मैं कल डॉक्टर के पास गया।",
        "Dün doktora gittim.",
    ],
)
def test_words_that_only_look_like_a_date_name_none_and_unknown_languages_never_fail(text: str) -> None:
    terms = document_terms(text, WHEN).split()

    assert [t for t in terms if t.startswith(f"{MARK}d")] == [f"{MARK}d{WHEN.date().isoformat()}"]
    assert not [t for t in asked_dates(text) if t.startswith(f"{MARK}d")]


@pytest.mark.parametrize(
    ("text", "said_in"),
    [
        ("我习惯用 Obsidian 记笔记，不用 Notion。", "zh"),
        ("パスワード管理には 1Password を使っている。", "ja"),
        ("회의는 목요일이에요.", "ko"),
        ("Лендинг мы собрали на Tilda.", "ru"),
        ("قررنا استخدام Redis للتخزين المؤقت.", "ar"),
        ("Mi jefa se llama Carmen Ortega y es de Sevilla.", "es"),
        ("Das Konzert wurde wegen des Sturms abgesagt.", "de"),
        ("Le concert a été annulé à cause de la tempête.", "fr"),
        ("I read on a Kindle Paperwhite.", "en"),
        ("12:40", "en"),
        ("", "en"),
    ],
)
def test_a_texts_language_by_its_script_and_the_latin_vote(text: str, said_in: str) -> None:
    assert language(text) == said_in


def test_the_date_rules_shortcuts_skip_only_texts_no_rule_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pure logic: the date rules of other languages are skipped for ASCII texts without their words, and each
    numeric form where its character is missing. Every text of the multilingual set, each also with its accents
    and case folded away, and the scale benchmark's English notes, get what every rule tried gives."""
    from tests.bench import multilingual, synthetic
    from tiers.text import dates
    from tiers.text.languages import fold

    texts = [f.text for f in multilingual.facts()] + [q.text for q in multilingual.questions()]
    texts += [n.text for n in multilingual.ordinary(per_language=60)]
    texts += [fold(t) for t in texts] + synthetic.texts(4, 600, exclude=frozenset())
    texts += ["Ayer fui al medico.", "l'an dernier a Lyon", "Wir waren letzte Woche in Rom.", "Am 3.3.2027 in Bonn"]

    def read() -> list[object]:
        return [(dates.says_a_time(t), dates.relative_days(t), dates.named(t), document_terms(t, WHEN)) for t in texts]

    shortcut = read()
    with monkeypatch.context() as patched:
        patched.setattr(dates, "may_hold", lambda *_: True)
        every_rule = read()

    assert shortcut == every_rule
    assert sum(t.isascii() and bool(found[1]) for t, found in zip(texts, every_rule, strict=True)) >= 3
