"""LoCoMo retrieval benchmark: recall under token budgets against flat BM25 and vector baselines.

Per conversation, in a fresh store: every turn goes in through `Memory.remember` (what the
`remember` tool runs), every question of categories 1-4 through `Memory.recall` (what the
`recall` tool runs), and the budget is checked on `packed.text`, the only text the tool returns.
Then a sweep months after the last session sends most turns cold and the questions are asked again.
With `--haystack N`, each conversation is also stored among N unrelated synthetic memories already
cold (written through `tests.bench.fill.fill`, before its turns go in through `remember`) and asked
again at 1,024 tokens: recall_all@1024 alone against with the haystack, in the same run.

    .venv/bin/python -m tests.bench.locomo ../shared/datasets/locomo-dev/locomo-dev.json
    .venv/bin/python -m tests.bench.locomo ../shared/datasets/locomo-dev/locomo-dev.json --haystack 200000
    .venv/bin/python -m tests.bench.locomo ../shared/datasets/locomo-dev/locomo-dev.json --form keywords
    .venv/bin/python -m tests.bench.locomo ../shared/datasets/locomo-dev/locomo-dev.json --form topic

`--unit session` stores each session as one long memory (its turns one per line, as meeting notes or a
transcript are kept; cut where one would pass the tool's 8,000 characters), embedded in pieces: a
session returned whole covers all its turns; one shown by an excerpt (too long for the budget left),
only the turns whose whole text is in the excerpt.

`--form keywords` asks every question as an agent often does, in keywords: the question with its
question words, common function words and punctuation taken out, by one general rule
(`keywords`); the flat baselines are asked the same words. `--form topic` asks only the last three of
those words, where an English question puts what it is about (`topic`): a topic rather than a question,
most often without the person it is about.

The dataset (Maharana et al., ACL 2024, CC BY-NC 4.0) is read from the path given, never copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from tests.bench import packages, synthetic
from tests.bench.fill import fill
from tests.bench.flat import FlatStore
from tiers.memory import Memory, MemorySettings
from tiers.model.catalog import open_embedder
from tiers.model.embedder import LoadingEmbedder, embed_queries, pieces
from tiers.recall import rank as ranking
from tiers.records import MAX_CONTENT_CHARS, MemoryIn, Tier
from tiers.text.terms import words

BUDGETS = (256, 512, 1024, 2048)
HALVES = {"0-3": range(0, 4), "4-6": range(4, 7)}  # tune on the first, confirm on the second
TOP_K = (5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
BUDGET_LIMIT = 50  # the recall tool's default limit when max_tokens is given
SWEEP_AFTER = timedelta(days=183)
HAYSTACK = "haystack"  # the system name of recall with the haystack, in the same tally
HAYSTACK_SETTING = ("1024 tok", BUDGET_LIMIT, 1024)
_SESSION = re.compile(r"^session_(\d+)$")
# Question words and function words a keyword query leaves out: general English, nothing of this dataset.
_FUNCTION_WORDS = frozenset(
    """a an the and or but if of to in on at by for with from about as into over after before during
    is are was were be been being am do does did done have has had having will would shall should can
    could may might must what when where which who whom whose why how that this these those there here
    it its it's i me my we our you your he him his she her they them their any some ever else than then
    so not no yes also just very much many more most such only own same too""".split()  # noqa: SIM905 (a word list)
)
_WORD = re.compile(r"[\w'-]+")


def keywords(question: str) -> str:
    """A question as a keyword query: its words without question and function words, in order."""
    kept = [w for w in _WORD.findall(question) if w.lower() not in _FUNCTION_WORDS]
    return " ".join(kept) or question


TOPIC_WORDS = 3


def topic(question: str) -> str:
    """A question as the topic an agent looks up: the last TOPIC_WORDS of its keywords, where English puts
    what a question is about ("When did Caroline go to the LGBTQ support group?": "LGBTQ support group"),
    most often without who it is about."""
    return " ".join(keywords(question).split()[-TOPIC_WORDS:])


FORMS = {"question": lambda q: q, "keywords": keywords, "topic": topic}


@dataclass(frozen=True)
class Turn:
    dia_id: str
    content: str
    occurred_at: datetime


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass
class Tally:
    """recall_all and recall_frac sums per (system, setting, category)."""

    all: dict[tuple[str, str, int], float] = field(default_factory=lambda: defaultdict(float))
    frac: dict[tuple[str, str, int], float] = field(default_factory=lambda: defaultdict(float))
    count: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    # (system, setting) -> [questions, packed hits, hits that are no turn of the conversation, questions with any]
    packed: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0, 0]))

    def add_packed(self, system: str, setting: str, hits: int, foreign: int) -> None:
        counts = self.packed[(system, setting)]
        for i, value in enumerate((1, hits, foreign, int(foreign > 0))):
            counts[i] += value

    def add(self, system: str, setting: str, question: Question, found: set[str]) -> None:
        hit = len(question.evidence & found)
        self.all[(system, setting, question.category)] += float(hit == len(question.evidence))
        self.frac[(system, setting, question.category)] += hit / len(question.evidence)

    def merge(self, other: Tally) -> None:
        for mine, theirs in ((self.all, other.all), (self.frac, other.frac), (self.count, other.count)):
            for key, value in theirs.items():
                mine[key] += value  # type: ignore[index,assignment]
        for pair, counts in other.packed.items():
            for i, value in enumerate(counts):
                self.packed[pair][i] += value

    def score(self, metric: str, system: str, setting: str, category: int | None) -> float:
        sums = self.all if metric == "all" else self.frac
        cats = [category] if category else list(CATEGORIES)
        total = sum(self.count[c] for c in cats)
        return sum(sums[(system, setting, c)] for c in cats) / max(total, 1)


def parse_session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_turns(conversation: dict[str, Any]) -> list[list[Turn]]:
    """Turns grouped by session, in session order; the content is `speaker: text` plus the image caption."""
    sessions: list[list[Turn]] = []
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    for number in numbers:
        turns = conversation[f"session_{number}"]
        if not turns:
            continue
        when = parse_session_time(conversation[f"session_{number}_date_time"])
        session = []
        for turn in turns:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [shares an image: {turn['blip_caption']}]"
            session.append(Turn(turn["dia_id"], content, when))
        sessions.append(session)
    return sessions


def load_questions(qa: list[dict[str, Any]], known: set[str]) -> tuple[list[Question], int]:
    """Questions of categories 1-4 with their evidence cleaned as the dataset's README says."""
    questions, dropped = [], 0
    for item in qa:
        if item["category"] not in CATEGORIES:
            continue
        ids = {part.strip() for ref in item["evidence"] for part in re.split(r"[;,\s]+", ref) if part.strip()}
        ids &= known
        if not ids:
            dropped += 1
            continue
        questions.append(Question(item["question"], item["category"], frozenset(ids)))
    return questions, dropped


def with_values(settings: ranking.RecallSettings, pairs: Sequence[str]) -> ranking.RecallSettings:
    """The settings with each NAME=VALUE given, the value read as the setting's own type."""
    changed: dict[str, object] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        kind = type(getattr(settings, name))
        changed[name] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
    return dataclasses.replace(settings, **changed)


ONLY: list[int] = []  # budgets asked alone (--budgets), where a recall is slow (a reranker); empty: every one


def settings_list() -> list[tuple[str, int, int | None]]:
    """(label, limit, max_tokens) as the recall tool would pass them."""
    if ONLY:
        return [(f"{b} tok", BUDGET_LIMIT, b) for b in ONLY]
    return [(f"{b} tok", BUDGET_LIMIT, b) for b in BUDGETS] + [(f"k={k}", k, None) for k in TOP_K]


def baseline_pack(
    hits: Sequence[Any], limit: int, max_tokens: int | None, grouped: bool, terms: Sequence[str] | None = None
) -> ranking.Packed:
    """A flat ranking packed exactly as recall packs its own (same lines, same budget rule).

    Given the query's `terms`, a long memory that does not fit is shown by an excerpt as recall shows one,
    its pieces chosen by those words alone (a flat store has no piece vectors): the flat baselines with
    excerpts, so that what memtiers gains over them by ranking is told apart from what excerpts give.
    """
    ranked = [
        ranking.Ranked(h.record, 1.0 - i / max(len(hits), 1), h.score, piece_cosines=_no_cosines(h, terms))
        for i, h in enumerate(hits)
    ]
    if terms is None:
        return ranking.pack(ranked, {}, limit, max_tokens, grouped)
    span = ranking.RecallSettings().excerpt_span
    return ranking.pack(ranked, {}, limit, max_tokens, grouped, terms, 1.0, span)


def _no_cosines(hit: Any, terms: Sequence[str] | None) -> tuple[float, ...] | None:
    """For a long memory when excerpts are wanted: a cosine of 0 for each of its pieces."""
    if terms is None:
        return None
    count = len(pieces(hit.record.content))
    return (0.0,) * count if count > 1 else None


def found_ids(packed: ranking.Packed, covers: dict[str, set[str]], texts: dict[str, str] | None = None) -> set[str]:
    """The turns the returned memories hold: all a memory covers when shown whole; of a memory shown by an excerpt
    (a long one over the budget), only the turns whose text (`texts`, by turn id) is in the excerpt itself."""
    out: set[str] = set()
    for hit in packed.hits:
        covered = covers.get(hit.record.id, set())
        if hit.excerpt is not None:
            shown = hit.excerpt.text
            covered = {dia for dia in covered if texts is not None and dia in texts and texts[dia] in shown}
        out |= covered
        dia = hit.record.metadata.get("dia_id")
        if isinstance(dia, str):
            out.add(dia)
    return out


def ask_all(
    memory: Memory,
    questions: list[Question],
    covers: dict[str, set[str]],
    now: datetime,
    tally: Tally,
    system: str,
    latencies: list[float],
    baselines: FlatStore | None,
    settings: Sequence[tuple[str, int, int | None]] | None = None,
    form: str = "question",
    texts: dict[str, str] | None = None,
    flat_excerpts: bool = False,
) -> None:
    """Ask every question at every budget; `texts` (each turn's text by id) checks what an excerpt shows;
    `flat_excerpts`: the flat baselines are also asked showing excerpts (a store of long memories)."""
    for question in questions:
        text = FORMS[form](question.text)
        for label, limit, budget in settings or settings_list():
            start = time.perf_counter()
            packed = memory.recall(text, now, limit=limit, max_tokens=budget)
            latencies.append(time.perf_counter() - start)
            if budget is not None and packed.tokens > budget:
                raise AssertionError(f"recall returned {packed.tokens} tokens over a {budget}-token budget")
            tally.add(system, label, question, found_ids(packed, covers, texts))
            foreign = sum(1 for h in packed.hits if h.record.id not in covers)  # not a turn of this conversation
            tally.add_packed(system, label, len(packed.hits), foreign)
        if baselines is None:
            continue
        grouped = memory.settings.recall.grouped
        vector = embed_queries(memory.embedder, [text])[0]  # as recall embeds it: e5's `query: ` prefix
        lists = {"BM25": baselines.text_search(text, 100), "vector": baselines.vector_search(vector, 100)}
        terms = words(text)
        for name, hits in lists.items():
            for label, limit, budget in settings_list():
                tally.add(name, label, question, found_ids(baseline_pack(hits, limit, budget, grouped), covers))
                if flat_excerpts:
                    packed = baseline_pack(hits, limit, budget, grouped, terms)
                    tally.add(f"{name} + excerpts", label, question, found_ids(packed, covers, texts))


def store_turns(memory: Memory, sessions: Sequence[Sequence[Turn]], now: datetime) -> dict[str, set[str]]:
    """Store every turn through `remember`, one batch per session; which turn ids each record covers."""
    covers: dict[str, set[str]] = defaultdict(set)
    for session in sessions:
        items = [
            MemoryIn(content=t.content, occurred_at=t.occurred_at.isoformat(), metadata={"dia_id": t.dia_id})
            for t in session
        ]
        for turn, stored in zip(session, memory.remember(items, now), strict=True):
            covers[stored.duplicate_of or stored.id].add(turn.dia_id)
    return covers


def store_sessions(memory: Memory, sessions: Sequence[Sequence[Turn]], now: datetime) -> dict[str, set[str]]:
    """Store each session as one long memory (its turns, one per line, as meeting notes or a transcript would be
    kept), at its first turn's time; the record covers every turn id of its session."""
    covers: dict[str, set[str]] = defaultdict(set)
    parts = [part for session in sessions for part in session_parts(session)]
    items = [
        MemoryIn(content="\n".join(t.content for t in part), occurred_at=part[0].occurred_at.isoformat())
        for part in parts
    ]
    for part, stored in zip(parts, memory.remember(items, now), strict=True):
        covers[stored.duplicate_of or stored.id] |= {t.dia_id for t in part}
    return covers


def session_parts(session: Sequence[Turn]) -> list[list[Turn]]:
    """A session's turns in order, cut where one memory would pass the tool's limit on its content."""
    parts: list[list[Turn]] = [[]]
    size = 0
    for turn in session:
        if parts[-1] and size + 1 + len(turn.content) > MAX_CONTENT_CHARS:
            parts.append([])
            size = 0
        parts[-1].append(turn)
        size += len(turn.content) + (1 if len(parts[-1]) > 1 else 0)
    return parts


STORE = {"turn": store_turns, "session": store_sessions}


def turn_texts(sessions: Sequence[Sequence[Turn]]) -> dict[str, str]:
    """Each turn's text by id, its whitespace as recall shows it (runs of it made one space)."""
    return {t.dia_id: " ".join(t.content.split()) for s in sessions for t in s}


def flat_store(memory: Memory, ids: Sequence[str]) -> FlatStore:
    """The same memories in one flat table, for the BM25 and vector baselines."""
    records = list(memory.store.get(list(ids)).values())
    return FlatStore(records, memory.embedder.embed([r.content for r in records]))


@dataclass(frozen=True)
class Haystack:
    """N unrelated synthetic memories, all cold, made from the model's vectors of a pool of texts."""

    size: int
    pool: list[synthetic.Memo]
    vectors: np.ndarray
    seed: int = 1

    def rows(self, now: datetime) -> Any:
        return synthetic.rows(self.size, self.pool, self.vectors, now, cold_share=1.0, seed=self.seed)


def run_in_haystack(
    haystack: Haystack,
    sessions: Sequence[Sequence[Turn]],
    questions: list[Question],
    embedder: LoadingEmbedder,
    settings: MemorySettings,
    tally: Tally,
    latencies: list[float],
    form: str = "question",
    unit: str = "turn",
) -> None:
    """The conversation stored after a cold haystack, its questions asked at 1,024 tokens."""
    now = max(t.occurred_at for s in sessions for t in s) + timedelta(days=1)
    with tempfile.TemporaryDirectory(prefix="memtiers-locomo-haystack-") as tmp:
        memory = Memory(Path(tmp) / "ns", embedder, settings)
        try:
            fill(memory, haystack.rows(now))
            covers = STORE[unit](memory, sessions, now)
            texts = turn_texts(sessions)
            ask_all(memory, questions, covers, now, tally, HAYSTACK, latencies, None, [HAYSTACK_SETTING], form, texts)
        finally:
            memory.close()


def run_conversation(
    sample: dict[str, Any],
    embedder: LoadingEmbedder,
    settings: MemorySettings,
    tally: Tally,
    after: Tally,
    latencies: dict[str, list[float]],
    sweep: bool,
    haystack: Haystack | None = None,
    form: str = "question",
    unit: str = "turn",
) -> dict[str, Any]:
    sessions = load_turns(sample["conversation"])
    turns = [t for s in sessions for t in s]
    questions, dropped = load_questions(sample["qa"], {t.dia_id for t in turns})
    for q in questions:
        tally.count[q.category] += 1
        after.count[q.category] += 1
    now = max(t.occurred_at for t in turns) + timedelta(days=1)
    with tempfile.TemporaryDirectory(prefix="memtiers-locomo-") as tmp:
        memory = Memory(Path(tmp) / "ns", embedder, settings)
        try:
            covers = STORE[unit](memory, sessions, now)
            flat = flat_store(memory, [stored for stored in covers])
            try:
                texts = turn_texts(sessions)
                ask_all(
                    memory,
                    questions,
                    covers,
                    now,
                    tally,
                    "memtiers",
                    latencies["warm"],
                    flat,
                    form=form,
                    texts=texts,
                    flat_excerpts=unit == "session",
                )
            finally:
                flat.close()
            info: dict[str, Any] = {"id": sample["sample_id"], "turns": len(turns), "questions": len(questions)}
            info["dropped"] = dropped
            if sweep:
                at = now + SWEEP_AFTER
                memory.sweep(at)
                info["cold"], info["warm"] = memory.store.count(Tier.COLD), memory.store.count(Tier.WARM)
                ask_all(
                    memory, questions, covers, at, after, "memtiers", latencies["swept"], None, form=form, texts=texts
                )
        finally:
            memory.close()
    if haystack is not None:
        run_in_haystack(haystack, sessions, questions, embedder, settings, tally, latencies[HAYSTACK], form, unit)
    return info


def systems_in(tally: Tally) -> list[str]:
    """memtiers and the flat baselines, each with excerpts where it was given them."""
    found = {system for system, _, _ in tally.all}
    wanted = ["memtiers", "BM25", "vector", "BM25 + excerpts", "vector + excerpts"]
    return [s for s in wanted if s in found or s in ("memtiers", "BM25", "vector")]


def table(tally: Tally, systems: Sequence[str], metric: str) -> list[str]:
    labels = [label for label, _, _ in settings_list()]
    lines = [
        f"| recall_{metric} | cat | " + " | ".join(labels) + " |",
        "| --- | --- |" + " --- |" * len(labels),
    ]
    for system in systems:
        for category in [None, *CATEGORIES]:
            name = "overall" if category is None else f"{category} {CATEGORIES[category]}"
            cells = [f"{tally.score(metric, system, label, category):.3f}" for label in labels]
            lines.append(f"| {system} | {name} | " + " | ".join(cells) + " |")
    return lines


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("dataset", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--no-sweep", action="store_true", help="skip the after-sweep table")
    parser.add_argument("--off", nargs="*", default=[], help="recall techniques to switch off (ablation)")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="recall settings to change (tuning)")
    parser.add_argument("--haystack", type=int, default=0, help="also store each conversation among N cold memories")
    parser.add_argument("--pool", type=int, default=20_000, help="texts the model embeds for the haystack (cached)")
    parser.add_argument("--form", choices=list(FORMS), default="question", help="how each question is asked")
    parser.add_argument("--unit", choices=list(STORE), default="turn", help="store each turn, or each session whole")
    parser.add_argument(
        "--budgets", nargs="*", type=int, default=[], help="ask at these token budgets alone (no k = 5, 10)"
    )
    parser.add_argument("--model", default="default", help="the model, as MEMTIERS_EMBED_MODEL names it")
    args = parser.parse_args(argv)
    ONLY[:] = args.budgets

    data = json.loads(args.dataset.read_text())[: args.conversations]
    embedder = open_embedder(args.model)
    embedder.load()
    embedder.embed(["warm up"])
    haystack = None
    if args.haystack:
        pool = synthetic.memos(1, args.pool)
        haystack = Haystack(args.haystack, pool, synthetic.pool_vectors([m.text for m in pool], embedder))
    recall_settings = with_values(ranking.RecallSettings().without(*args.off), args.set)
    settings = MemorySettings(recall=recall_settings)
    tally, after = Tally(), Tally()
    halves = {half: (Tally(), Tally()) for half in HALVES}
    latencies: dict[str, list[float]] = {"warm": [], "swept": [], HAYSTACK: []}
    started = time.perf_counter()
    infos = []
    for number, sample in enumerate(data):
        mine, mine_after = Tally(), Tally()
        info = run_conversation(
            sample, embedder, settings, mine, mine_after, latencies, not args.no_sweep, haystack, args.form, args.unit
        )
        half = next(h for h, members in HALVES.items() if number in members)
        for whole, swept in (halves[half], (tally, after)):
            whole.merge(mine)
            swept.merge(mine_after)
        infos.append(info)
        print(f"# {info}", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    out = [
        f"LoCoMo retrieval, {args.dataset.name}: {len(data)} conversations, "
        f"{sum(tally.count.values())} questions (categories 1-4; "
        + ", ".join(f"{c}: {tally.count[c]}" for c in CATEGORIES)
        + f"), {sum(i['dropped'] for i in infos)} dropped for having no valid evidence",
        f"model: {embedder.name}; recall settings: {recall_settings.describe()}",
        f"stored: one memory per {args.unit}; questions asked as: {args.form}"
        + (f" (e.g. {FORMS[args.form](data[0]['qa'][0]['question'])!r})" if args.form != "question" else ""),
        f"run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()} {platform.system()}, "
        f"Python {platform.python_version()}, {len(__import__('os').sched_getaffinity(0))} cores, {elapsed:.0f} s",
        f"packages: {packages()}",
        "",
        *table(tally, systems_in(tally), "all"),
        "",
        *table(tally, systems_in(tally), "frac"),
        "",
        f"recall latency (model loaded, {len(latencies['warm'])} calls): "
        f"p50 {percentile(latencies['warm'], 50):.1f} ms, p99 {percentile(latencies['warm'], 99):.1f} ms",
    ]
    out += ["", *halves_lines(halves, not args.no_sweep)]
    if not args.no_sweep:
        cold = sum(i["cold"] for i in infos)
        total = cold + sum(i["warm"] for i in infos)
        out += [
            "",
            f"after `sweep` at {SWEEP_AFTER.days} days past each conversation's last session: "
            f"{cold} of {total} records cold ({cold / max(total, 1):.0%}); default tiers",
            sweep_cost(tally, after),
            *table(after, ["memtiers"], "all"),
            "",
            *table(after, ["memtiers"], "frac"),
            "",
            f"recall latency after the sweep ({len(latencies['swept'])} calls): "
            f"p50 {percentile(latencies['swept'], 50):.1f} ms, p99 {percentile(latencies['swept'], 99):.1f} ms",
        ]
    if haystack is not None:
        out += ["", *haystack_lines(tally, args.haystack, latencies[HAYSTACK])]
    print("\n".join(out))
    return 0


def sweep_cost(before: Tally, after: Tally) -> str:
    """What the sweep costs at 1,024 tokens, in questions and in points (issue 10 bounds it at 1 point)."""
    label = HAYSTACK_SETTING[0]
    found = [round(sum(t.all[("memtiers", label, c)] for c in CATEGORIES)) for t in (before, after)]
    total = sum(before.count[c] for c in CATEGORIES)
    lost = 100 * (found[0] - found[1]) / max(total, 1)
    return (
        f"recall_all at {label}: {found[0]} of {total} questions before the sweep, {found[1]} after it "
        f"(the sweep costs {lost:.2f} points)"
    )


def halves_lines(halves: dict[str, tuple[Tally, Tally]], swept: bool) -> list[str]:
    """recall_all at 1,024 tokens on each half: tune on conversations 0-3, confirm on 4-6."""
    lines = ["| recall_all at 1024 tok | " + " | ".join(f"conversations {h}" for h in halves) + " |"]
    lines.append("| --- |" + " --- |" * len(halves))
    first = next(iter(halves.values()))[0]
    rows = [(system, 0, system) for system in systems_in(first)]
    if swept:
        rows.append(("memtiers after the sweep", 1, "memtiers"))
    for name, which, system in rows:
        cells = [f"{pair[which].score('all', system, '1024 tok', None):.3f}" for pair in halves.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def haystack_lines(tally: Tally, size: int, latencies: list[float]) -> list[str]:
    """recall_all@1024 of each conversation alone against among `size` cold memories, per category."""
    label = HAYSTACK_SETTING[0]
    lines = [
        f"each conversation stored among {size:,} unrelated synthetic memories already cold "
        f"(tests/bench/synthetic.py, written by tests/bench/fill.py), recall_all at {label}:",
        "| cat | alone | with haystack | difference (points) |",
        "| --- | --- | --- | --- |",
    ]
    for category in [None, *CATEGORIES]:
        name = "overall" if category is None else f"{category} {CATEGORIES[category]}"
        alone, among = tally.score("all", "memtiers", label, category), tally.score("all", HAYSTACK, label, category)
        lines.append(f"| {name} | {alone:.3f} | {among:.3f} | {100 * (among - alone):+.1f} |")
    for system, name in (("memtiers", "alone"), (HAYSTACK, "with the haystack")):
        questions, hits, foreign, touched = tally.packed[(system, label)]
        lines.append(
            f"packed hits per question {name}: {hits / max(questions, 1):.1f}, of them haystack rows "
            f"{foreign / max(questions, 1):.1f} ({touched / max(questions, 1):.0%} of questions have one)"
        )
    lines.append(
        f"recall latency with the haystack ({len(latencies)} calls): "
        f"p50 {percentile(latencies, 50):.1f} ms, p99 {percentile(latencies, 99):.1f} ms"
    )
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
