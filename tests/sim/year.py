"""A simulated year of one user against the real memory (LanceDB in a temporary folder, the real model).

    .venv/bin/python -m tests.sim.year --out docs/

writes docs/simulation.md and docs/simulation.png. Deterministic: a fixed seed drives the script of
the year and the record ids, and the clock is injected (every call takes `now`). The sweep timer
runs once per simulated day at 03:00: the server runs it every 10 minutes, but every rule it
applies is measured in days (a 14-day half-life, 90 idle days), so a daily pass makes the same
moves, at most a day later.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import numpy as np

from tests.bench.locomo import with_values
from tests.sim.world import CRITICAL, IDENTITY, PREFERENCES, Ask, Day, script
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import Embedder, FastEmbedder, embed_queries
from tiers.namespace.parts import Parts
from tiers.namespace.search import Search
from tiers.recall import rank as ranking
from tiers.records import MemoryIn, Tier, tokens_of
from tiers.storage.hot import Entry, render

START = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday
RECALL_LIMIT = 10  # the recall tool's default
BUDGET_LIMIT = 50  # the recall tool's limit when it is given only `max_tokens`


@dataclass(frozen=True)
class Setting:
    """What a turn asks each system for: at most `limit` hits, and at most `budget` tokens of them when given."""

    limit: int
    budget: int | None = None

    @property
    def label(self) -> str:
        return f"k = {self.limit}" if self.budget is None else f"{self.budget} tokens"


# The settings each system is swept over for the answer-rate-against-tokens curves: k = 1 to 20 hits, and token
# budgets (as `recall`'s `max_tokens` takes them) from below flat's k = 1 to past its best.
LIMITS = tuple(Setting(k) for k in range(1, 21))
BUDGETS = tuple(Setting(BUDGET_LIMIT, b) for b in (25, 50, 75, 100, 150, 200, 250, 300, 400, 600, 800))
SWEEP = LIMITS + BUDGETS
TOOL = Setting(RECALL_LIMIT)  # what a real turn asks: the tool's default
# The curves: a flat store of k hits; memtiers' recall at limit k as the model reads it, with the hot profile
# (read every turn) and without.
# And memtiers told that the host carries the profile (MEMTIERS_PROFILE_CARRIED=1): the profile plus a recall at
# limit k that repeats none of it (no "profile:" line, none of the memories an entry's value came from).
FLAT, RECALL, WITH_PROFILE = "flat store", "memtiers recall only", "memtiers profile + recall"
LEAN = "memtiers profile + recall, host carries the profile"
SERIES = (FLAT, WITH_PROFILE, RECALL, LEAN)


@dataclass
class Turn:
    day: int
    category: str
    memtiers_tokens: int  # hot profile (read every turn) + the recall's text
    flat_tokens: int  # a flat store's answer with as many hits
    memtiers_answered: bool | None
    flat_answered: bool | None
    # (series, setting) -> (tokens, answer in context) for the same turn evaluated without counting a use
    points: dict[tuple[str, Setting], tuple[int, bool | None]] = field(default_factory=dict)
    # setting -> what memtiers' recall repeats there of the profile the turn already carries:
    # (tokens of its "profile:" line, hits that are sources of a profile entry, tokens of those hits)
    repeated: dict[Setting, tuple[int, int, int]] = field(default_factory=dict)
    # setting -> whether the recall told that the host carries the profile repeated any of it (it must not)
    lean_repeats: dict[Setting, bool] = field(default_factory=dict)


@dataclass
class Result:
    days: int
    seed: int
    cap_tokens: int
    sweep: tuple[Setting, ...] = ()
    said: int = 0
    stored: int = 0
    turns: list[Turn] = field(default_factory=list)
    daily: list[dict[str, float]] = field(default_factory=list)
    moves_by_rule: Counter[str] = field(default_factory=Counter)
    critical: list[dict[str, object]] = field(default_factory=list)
    preferences: list[dict[str, object]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    log_mismatches: list[str] = field(default_factory=list)
    forgotten: int = 0
    protected_chitchat: list[str] = field(default_factory=list)
    final_profile: str = ""
    final_candidates: list[dict[str, object]] = field(default_factory=list)
    final_flags: dict[str, dict[str, object]] = field(default_factory=dict)  # entries a newer memory may update
    seconds: dict[str, float] = field(
        default_factory=lambda: {"remember": 0.0, "recall": 0.0, "sweep": 0.0, "curves": 0.0}
    )

    @property
    def max_hot_tokens(self) -> int:
        return int(max(d["hot_tokens"] for d in self.daily))

    @property
    def critical_found(self) -> float:
        return _share([bool(c["found"]) for c in self.critical])

    @property
    def preferences_right(self) -> float:
        return _share([bool(p["current_in_hot"]) for p in self.preferences])


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 1.0


def _at(day: int, hour: float) -> datetime:
    return START + timedelta(days=day, hours=hour)


def run(
    folder: Path,
    embedder: Embedder,
    days: int = 365,
    seed: int = 20261130,
    settings: MemorySettings | None = None,
    asks_per_day: int = 4,
    progress: Callable[[str], None] = lambda _: None,
    sweep: Sequence[Setting] = SWEEP,
) -> Result:
    """Play the scripted year against a fresh memory in `folder` and measure it.

    `sweep`: the limits and budgets at which every recall turn is also evaluated, uncounted, for the curves.
    """
    settings = settings or MemorySettings()
    ids = random.Random(seed)
    memory = Memory(folder, QueryCache(embedder), settings, new_id=lambda: f"{ids.getrandbits(48):012x}")
    result = Result(days, seed, settings.cap_tokens, tuple(sweep))
    year = script(days, seed, asks_per_day)
    by_content: dict[str, str] = {}
    categories: dict[str, str] = {}
    forgotten: set[str] = set()
    try:
        for day in year:
            _one_day(memory, day, result, by_content, categories, forgotten)
            if day.number % 30 == 0:
                d = result.daily[-1]
                progress(f"day {day.number}: warm {d['warm']:.0f} cold {d['cold']:.0f} hot {d['hot_tokens']:.0f} tok")
        _final_checks(memory, days, result, by_content, categories, forgotten)
    finally:
        memory.close()
    return result


def _one_day(
    memory: Memory,
    day: Day,
    result: Result,
    by_content: dict[str, str],
    categories: dict[str, str],
    forgotten: set[str],
) -> None:
    n = day.number
    started = time.perf_counter()
    if n > 0:  # the timer, in the quiet of the night
        memory.sweep(_at(n, 3))
    result.seconds["sweep"] += time.perf_counter() - started

    morning, afternoon = day.asks[: len(day.asks) // 2], day.asks[len(day.asks) // 2 :]
    for i, ask in enumerate(morning):
        _turn(memory, ask, n, _at(n, 9 + i * 0.5), result)

    started = time.perf_counter()
    noon = _at(n, 12)
    if day.profile_sets:
        memory.set_profile(day.profile_sets, noon)
    for content in day.forgets:
        memory.forget(by_content[content], noon)
        forgotten.add(by_content[content])
    if day.said:
        items = [
            MemoryIn(content=s.content, kind=s.kind, key=s.key, forget_after=s.forget_after, tags=[s.category])
            for s in day.said
        ]
        for said, stored in zip(day.said, memory.remember(items, noon), strict=True):
            by_content[said.content] = stored.id
            categories.setdefault(stored.id, said.category)
        result.said += len(day.said)
    result.seconds["remember"] += time.perf_counter() - started

    for i, ask in enumerate(afternoon):
        _turn(memory, ask, n, _at(n, 14 + i * 0.5), result)

    profile = memory.profile()
    result.daily.append(
        {
            "day": n,
            "warm": memory.store.count(Tier.WARM),
            "cold": memory.store.count(Tier.COLD),
            "hot_entries": len(profile),
            "hot_tokens": memory.hot.tokens(profile),
            "candidates": len(memory.candidates()),
        }
    )


def _turn(memory: Memory, ask: Ask, n: int, now: datetime, result: Result) -> None:
    """One turn that recalls: what memtiers puts in it, against a flat store giving as many hits."""
    started = time.perf_counter()
    profile = memory.profile()
    profile_text = render(profile)
    packed = memory.recall(ask.query, now, limit=RECALL_LIMIT)
    flat = flat_recall(memory, ask.query, len(packed.hits) or RECALL_LIMIT)
    result.seconds["recall"] += time.perf_counter() - started
    context = f"{profile_text}\n{packed.text}".lower()
    turn = Turn(
        day=n,
        category=ask.category,
        memtiers_tokens=tokens_of(profile_text) + packed.tokens,
        flat_tokens=flat.tokens,
        memtiers_answered=None if ask.needle is None else ask.needle.lower() in context,
        flat_answered=None if ask.needle is None else ask.needle.lower() in flat.text.lower(),
    )
    started = time.perf_counter()
    _sweep(memory, ask, now, profile, profile_text, result.sweep, turn)
    result.seconds["curves"] += time.perf_counter() - started
    result.turns.append(turn)


def _sweep(
    memory: Memory,
    ask: Ask,
    now: datetime,
    profile: dict[str, Entry],
    profile_text: str,
    settings: Sequence[Setting],
    turn: Turn,
) -> None:
    """The turn again at every setting, counting no use: a flat store and memtiers' recall, each at that limit
    (and budget)."""
    uncounted = Search(cast(Parts, Uncounted(memory.parts)))
    told = Search(cast(Parts, Uncounted(memory.parts, profile_carried=True)))
    carried = {rid for entry in profile.values() for rid in entry.sources}
    profile_tokens = tokens_of(profile_text)

    def has(text: str) -> bool | None:
        return None if ask.needle is None else ask.needle.lower() in text.lower()

    for at in settings:
        k, budget = at.limit, at.budget
        flat = flat_recall(memory, ask.query, k, budget)
        packed = uncounted.recall(ask.query, now, limit=k, max_tokens=budget)
        turn.points[(FLAT, at)] = (flat.tokens, has(flat.text))
        turn.points[(RECALL, at)] = (packed.tokens, has(packed.text))
        turn.points[(WITH_PROFILE, at)] = (profile_tokens + packed.tokens, has(f"{profile_text}\n{packed.text}"))
        line = ranking.render_profile(packed.profile) if packed.profile else ""
        again = [h for h in packed.hits if h.record.id in carried]
        grouped = memory.settings.recall.grouped
        lean = told.recall(ask.query, now, limit=k, max_tokens=budget)
        turn.points[(LEAN, at)] = (profile_tokens + lean.tokens, has(f"{profile_text}\n{lean.text}"))
        turn.lean_repeats[at] = bool(lean.profile) or any(h.record.id in carried for h in lean.hits)
        turn.repeated[at] = (
            tokens_of(line),
            len(again),
            sum(tokens_of(ranking.render_hit(h, grouped)) for h in again),
        )


class Uncounted:
    """A namespace's parts as recall sees them, but recording no use: the real recall, leaving heat alone."""

    def __init__(self, parts: Parts, profile_carried: bool = False) -> None:
        self._parts = parts
        self.ledger = _NoUses(parts.ledger)
        recall = replace(parts.settings.recall, profile_carried=profile_carried)
        self.settings = replace(parts.settings, recall=recall)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parts, name)


class _NoUses:
    def __init__(self, ledger: Any) -> None:
        self._ledger = ledger

    def touch(self, rids: Any, at: datetime, *, repeat: bool = False) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)


class QueryCache:
    """The embedder, remembering its last few queries' vectors (one text, or a query's two forms): the baselines and the
    sweep reuse the turn's query vectors."""

    def __init__(self, inner: Embedder, size: int = 8) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self._recent: dict[tuple[str, ...], np.ndarray] = {}
        self._size = size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        key = tuple(texts)
        if key in self._recent:
            return self._recent[key]
        vectors = embed_queries(self.inner, texts)
        if len(key) > 2:
            return vectors
        if len(self._recent) >= self._size:
            del self._recent[next(iter(self._recent))]
        self._recent[key] = vectors
        return vectors


def flat_recall(memory: Memory, query: str, hits: int, max_tokens: int | None = None) -> ranking.Packed:
    """A flat store: every memory in one pool, no profile, no tiers, the same ranking and packing (its best `hits`,
    as many of them as fit `max_tokens`); counts no use."""
    ranked = memory.rank(query, hits, tiers=[Tier.WARM, Tier.COLD])
    return ranking.pack(ranked, {}, hits, max_tokens, memory.settings.recall.grouped)


def _final_checks(
    memory: Memory,
    days: int,
    result: Result,
    by_content: dict[str, str],
    categories: dict[str, str],
    forgotten: set[str],
) -> None:
    end = _at(days, 12)
    profile = memory.profile()
    profile_text = render(profile)
    result.final_profile = profile_text
    candidates = list(memory.candidates())
    shown = memory.store.get([str(c["id"]) for c in candidates])
    result.final_candidates = [c | {"content": shown[c["id"]].content if c["id"] in shown else "?"} for c in candidates]
    result.final_flags = dict(memory.flags())
    log = memory.moves(limit=10**7)
    result.moves_by_rule.update(f"{m.src} -> {m.dst} {m.rule.split(':')[0]}" for m in log)
    history = {m.rid for m in log if m.src == "hot" and m.dst == "warm"}
    expected = (set(by_content.values()) | history) - forgotten
    found = {}
    for chunk in _chunks(sorted(expected), 500):
        found.update(memory.store.get(chunk))
    result.stored = memory.store.count()
    result.forgotten = len(forgotten)
    result.lost = sorted(expected - set(found))
    if result.stored != len(found):
        result.lost.append(f"{result.stored - len(found)} rows nobody asked for")
    result.log_mismatches = _log_mismatches(memory, found)
    result.protected_chitchat = sorted(
        r.content for r in found.values() if categories.get(r.id) == "chitchat" and r.protected
    )

    for when, content, hint, situation, needle, lookup in CRITICAL:
        if when >= days:
            continue
        record = found.get(by_content[content])
        answers = [memory.recall(q, end, limit=RECALL_LIMIT).text for q in (lookup, situation)]
        in_turn = [needle.lower() in f"{profile_text}\n{text}".lower() for text in answers]
        result.critical.append(
            {
                "day": when,
                "content": content,
                "hint": hint.value if hint else "rules",
                "tier": record.tier.value if record else "LOST",
                "protected": bool(record and record.protected),
                "lookup": lookup,
                "found": in_turn[0],
                "situation": situation,
                "found_in_situation": in_turn[1],
            }
        )
    for key, changes in PREFERENCES.items():
        said = [(d, c) for d, c, _ in changes if d < days]
        if said:
            _check_preference(key, said, profile, result)
    for key in {k for _, _, k, _, _ in IDENTITY if k}:
        said = [(d, c) for d, c, k, _, _ in IDENTITY if k == key and d < days]
        if said:
            _check_preference(key, said, profile, result)


def _check_preference(key: str, said: list[tuple[int, str]], profile: dict, result: Result) -> None:  # type: ignore[type-arg]
    current = said[-1][1]
    value = profile[key].value if key in profile else None
    result.preferences.append(
        {
            "key": key,
            "current": current,
            "in_hot": value,
            "current_in_hot": value == current,
            "stale_in_hot": value is not None and value != current and value in {c for _, c in said},
        }
    )


def _log_mismatches(memory: Memory, found: dict) -> list[str]:  # type: ignore[type-arg]
    """Records whose tier is not where their last logged move put them (a source of the profile lives in warm)."""
    last: dict[str, str] = {}
    for move in reversed(memory.moves(limit=10**7)):
        if not move.rid.startswith("hot:"):
            last[move.rid] = "warm" if move.dst == "hot" else move.dst
    return [rid for rid, record in found.items() if last.get(rid) != record.tier.value]


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


# the report


@dataclass(frozen=True)
class Point:
    """One point of a curve: a system at one setting (k hits, or a token budget), over every recall turn."""

    series: str
    setting: Setting
    tokens: float  # mean tokens per recall turn (every turn)
    rate: float  # share of the turns with a known answer that had it in their context


def curve(turns: Sequence[Turn], series: str, settings: Sequence[Setting]) -> list[Point]:
    out = []
    for at in settings:
        values = [t.points[(series, at)] for t in turns]
        known = [bool(answered) for _, answered in values if answered is not None]
        out.append(Point(series, at, statistics.mean(tokens for tokens, _ in values), _share(known)))
    return out


def best_within(points: Sequence[Point], tokens: float) -> float | None:
    """The best answer rate a curve reaches at no more than `tokens` per turn (None: it has no point that cheap)."""
    rates = [p.rate for p in points if p.tokens <= tokens]
    return max(rates) if rates else None


@dataclass(frozen=True)
class Goal:
    """The issue's two marks for one memtiers curve against the flat store's."""

    flat: list[Point]
    flat_best: Point  # the flat store's best answer rate, at its cheapest setting reaching it
    reaching: Point | None  # memtiers' cheapest point with at least that rate
    below: list[Point]  # flat points that memtiers, at no more tokens per turn, has a lower rate than
    absent: list[Point]  # flat points cheaper than every memtiers point

    @property
    def share(self) -> float | None:
        return None if self.reaching is None else self.reaching.tokens / self.flat_best.tokens

    @property
    def above_everywhere(self) -> bool:
        return not self.below and not self.absent

    @property
    def holds(self) -> bool:
        return self.above_everywhere and self.share is not None and self.share <= 0.5


def goal(flat: Sequence[Point], memtiers: Sequence[Point]) -> Goal:
    """Above everywhere: at each flat point's tokens per turn, memtiers' best rate for no more tokens is at least
    as high. Half the tokens: memtiers' cheapest point reaching the flat store's best rate, against flat's."""
    best = max(p.rate for p in flat)
    flat_best = min((p for p in flat if p.rate == best), key=lambda p: p.tokens)
    reaching = [p for p in memtiers if p.rate >= best]
    within = [(p, best_within(memtiers, p.tokens)) for p in flat]
    return Goal(
        list(flat),
        flat_best,
        min(reaching, key=lambda p: p.tokens) if reaching else None,
        below=[p for p, m in within if m is not None and m < p.rate],
        absent=[p for p, m in within if m is None],
    )


def curves(result: Result) -> dict[str, list[Point]]:
    return {series: curve(result.turns, series, result.sweep) for series in SERIES}


def _labels(points: Sequence[Point]) -> str:
    return ", ".join(f"{p.setting.label} ({p.tokens:.0f} tokens, {p.rate:.1%})" for p in sorted(points, key=_cost))


def _cost(point: Point) -> float:
    return point.tokens


def _goal_line(g: Goal, memtiers: Sequence[Point]) -> str:
    level = len(g.flat) - len(g.below) - len(g.absent)
    parts = [f"{'above' if g.above_everywhere else '**not above**'}: at or above {level} of {len(g.flat)} flat points"]
    if g.absent:
        cheapest = min(p.tokens for p in memtiers)
        parts.append(f"no point as cheap as flat's {_labels(g.absent)} (its cheapest: {cheapest:.0f} tokens)")
    if g.below:
        parts.append(f"below at flat's {_labels(g.below)}")
    if g.reaching is None:
        parts.append("never reaches the flat store's best rate")
    else:
        parts.append(
            f"reaches flat's best rate at {g.reaching.setting.label}, {g.reaching.tokens:.0f} tokens: "
            f"{'' if g.share is not None and g.share <= 0.5 else '**'}{g.share:.0%} of flat's "
            f"{g.flat_best.tokens:.0f}{'' if g.share is not None and g.share <= 0.5 else '**'}"
        )
    return "; ".join(parts)


def summary(result: Result) -> dict[str, object]:
    """The figures the issue asks for."""
    answered = [t for t in result.turns if t.memtiers_answered is not None]
    final = result.daily[-1]
    return {
        "memories said": result.said,
        "records stored at the end (warm + cold)": result.stored,
        "warm / cold at the end": f"{final['warm']:.0f} / {final['cold']:.0f}",
        "hot profile tokens, max over the year / cap": f"{result.max_hot_tokens} / {result.cap_tokens}",
        "hot profile tokens at the end": f"{final['hot_tokens']:.0f} ({final['hot_entries']:.0f} entries)",
        "recall turns": len(result.turns),
        "tokens per turn, memtiers (profile + recall), mean / median": _mean_median(
            [t.memtiers_tokens for t in result.turns]
        ),
        "tokens per turn, flat store (same number of hits), mean / median": _mean_median(
            [t.flat_tokens for t in result.turns]
        ),
        "turns whose answer was in the context, memtiers / flat": (
            f"{_share([bool(t.memtiers_answered) for t in answered]):.1%} / "
            f"{_share([bool(t.flat_answered) for t in answered]):.1%} (of {len(answered)} with a known answer)"
        ),
        **_curve_figures(result),
        "critical facts said once, found at the end by the agent's lookup": (
            f"{result.critical_found:.0%} of {len(result.critical)}"
        ),
        "the same, found from a situation that needs them": (
            f"{_share([bool(c['found_in_situation']) for c in result.critical]):.0%}"
        ),
        "critical facts said once, still warm and protected": (
            f"{_share([c['tier'] == 'warm' and bool(c['protected']) for c in result.critical]):.0%}"
        ),
        "current preferences right in the hot profile": (
            f"{result.preferences_right:.0%} of {len(result.preferences)}"
        ),
        "stale values of the keyed preferences and identity facts in the hot profile": sum(
            bool(p["stale_in_hot"]) for p in result.preferences
        ),
        "records lost": len(result.lost),
        "records whose tier disagrees with the move log": len(result.log_mismatches),
        "forgotten on request": result.forgotten,
        "chit-chat records protected by mistake": len(result.protected_chitchat),
    }


def _curve_figures(result: Result) -> dict[str, str]:
    if not result.sweep:
        return {}
    c = curves(result)
    best = goal(c[FLAT], c[WITH_PROFILE]).flat_best
    first = result.sweep[0]
    turns = result.turns
    return {
        f"flat store's best answer rate over {_swept(result.sweep)} (at its cheapest setting)": (
            f"{best.rate:.1%} at {best.setting.label}, {best.tokens:.0f} tokens per turn"
        ),
        "memtiers, profile + recall, against it": _goal_line(goal(c[FLAT], c[WITH_PROFILE]), c[WITH_PROFILE]),
        "memtiers, recall alone (profile not counted), against it": _goal_line(goal(c[FLAT], c[RECALL]), c[RECALL]),
        "memtiers told the host carries the profile (MEMTIERS_PROFILE_CARRIED=1), against it": _goal_line(
            goal(c[FLAT], c[LEAN]), c[LEAN]
        ),
        "hot profile tokens per recall turn, mean (half flat's tokens at its best rate)": (
            f"{_mean(t.points[(WITH_PROFILE, first)][0] - t.points[(RECALL, first)][0] for t in turns):.0f}"
            f" ({best.tokens / 2:.0f})"
        ),
        "of memtiers' recall: mean tokens of its `profile:` line + of hits that are profile sources": " / ".join(
            f"{_mean(t.repeated[p.setting][0] for t in turns):.0f} + "
            f"{_mean(t.repeated[p.setting][2] for t in turns):.0f} of {p.tokens:.0f} at {p.setting.label}"
            for p in c[RECALL]
            if p.setting in (Setting(1), TOOL, Setting(20), Setting(BUDGET_LIMIT, 100))
        ),
    }


def _swept(settings: Sequence[Setting]) -> str:
    """The settings a sweep covered, in words: "k = 1-20 and budgets of 25-800 tokens"."""
    limits = sorted(s.limit for s in settings if s.budget is None)
    budgets = sorted(s.budget for s in settings if s.budget is not None)
    parts = [f"k = {limits[0]}-{limits[-1]}"] if limits else []
    parts += [f"budgets of {budgets[0]}-{budgets[-1]} tokens"] if budgets else []
    return " and ".join(parts)


def _mean(values: Iterable[float]) -> float:
    return statistics.mean(values)


def _yes(flag: object) -> str:
    return "yes" if flag else "**no**"


def _mean_median(values: list[int]) -> str:
    if not values:
        return "-"
    return f"{statistics.mean(values):.0f} / {statistics.median(values):.0f}"


def curve_table(result: Result) -> list[str]:
    """One row per setting: each system's mean tokens per turn and answer rate."""
    c = curves(result)
    head = "| asked for | " + " | ".join(f"{name}: tokens | rate" for name in SERIES) + " |"
    lines = [head, "| --- |" + " --- | --- |" * len(SERIES)]
    for i, at in enumerate(result.sweep):
        cells = [f"{c[name][i].tokens:.0f} | {c[name][i].rate:.1%}" for name in SERIES]
        lines.append(f"| {at.label} | " + " | ".join(cells) + " |")
    return lines


def by_category_curves(result: Result, settings: Sequence[Setting]) -> list[str]:
    """Per kind of question, at a few settings: tokens and answer rate of each system, and what recall repeats."""
    lines = [
        "| asked about | asked for | turns | flat: tokens, rate | memtiers profile + recall: tokens, rate | "
        "recall only | of it, the profile line | hits that are profile sources (tokens) | host carries the profile |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for category in sorted({t.category for t in result.turns}):
        turns = [t for t in result.turns if t.category == category]
        for at in settings:
            cells = []
            for series in (FLAT, WITH_PROFILE, RECALL):
                point = curve(turns, series, [at])[0]
                known = any(t.points[(series, at)][1] is not None for t in turns)
                cells.append(f"{point.tokens:.0f}, {point.rate:.0%}" if known else f"{point.tokens:.0f}, -")
            lean = curve(turns, LEAN, [at])[0]
            line = statistics.mean(t.repeated[at][0] for t in turns)
            hits = statistics.mean(t.repeated[at][1] for t in turns)
            hit_tokens = statistics.mean(t.repeated[at][2] for t in turns)
            known = any(t.points[(LEAN, at)][1] is not None for t in turns)
            lines.append(
                f"| {category} | {at.label} | {len(turns)} | " + " | ".join(cells) + f" | {line:.0f} | {hits:.1f} "
                f"({hit_tokens:.0f}) | {lean.tokens:.0f}, {f'{lean.rate:.0%}' if known else '-'} |"
            )
    return lines


def by_category(result: Result) -> list[tuple[str, int, str, str, str, str]]:
    rows = []
    for category in sorted({t.category for t in result.turns}):
        turns = [t for t in result.turns if t.category == category]
        known = [t for t in turns if t.memtiers_answered is not None]
        rows.append(
            (
                category,
                len(turns),
                f"{statistics.mean(t.memtiers_tokens for t in turns):.0f}",
                f"{statistics.mean(t.flat_tokens for t in turns):.0f}",
                f"{_share([bool(t.memtiers_answered) for t in known]):.0%}" if known else "-",
                f"{_share([bool(t.flat_answered) for t in known]):.0%}" if known else "-",
            )
        )
    return rows


HOW_TO_READ = """\
## How it is measured

- **The year** (`tests/sim/world.py`): a data engineer, Ana, over 365 days from a Monday. Each day the
  agent stores what came up in one `remember` batch at noon: small talk and work-log lines (most of
  it), project decisions (some keyed into the profile as `project.<name>.<topic>`, some changed
  later), meeting notes, errands with `forget_after: P14D`, preferences that change during the year
  (the agent gives the profile key, and a kind hint half the time), identity facts, and 26 critical
  facts said once (allergies, medication, standing rules, family), half with a kind hint and half
  left to the server's rules. Three times the user asks to forget something. The agent sets
  `current_project` by hand when the project changes.
- **Recall turns**: four a weekday, two a weekend day, at 09:00-10:00 and 14:00-15:00; mostly about
  the active projects' decisions, then preferences, meeting notes, the critical facts (phrased as
  the situation that needs them: "can I have the cheese platter?") and old projects. Each calls
  `recall` with the tool's default limit of 10 and the default tiers.
- **Tokens per turn, memtiers**: the hot profile (which the host reads every turn) plus the text
  `recall` returned, at 4 characters a token. **Flat store**: the same hybrid search (vector and full
  text, fused) over every record in one pool, no profile, no tiers, returning as many hits as memtiers'
  recall did, rendered the same way. It counts no use, so it does not disturb heat. It ranks through
  `Memory.rank` with the same settings (the first-person form of the query, the listing by kind, room
  for the best durable facts), over warm and cold alike: no cold penalty, no `profile:` line.
- **The curves**: at every recall turn, after the real one (which counts its uses, so the year is
  the same year with or without them), the turn is evaluated again without counting a use, at k = 1
  to 20 hits and at token budgets of 25 to 800 (`recall`'s `max_tokens`, with the tool's limit of 50
  that goes with it): the flat store returning its best k hits, or as many of its best 50 as fit the
  budget (the same packing); memtiers' own `recall` at the same setting (the product's code, given a
  ledger that records no use), counted with the profile (what the turn carries: profile + recall)
  and without it (recall alone, which holds its `profile:` line of matching entries; a budget holds
  that line too, or leaves it out when it does not fit). Both systems get both sweeps, and the x-axis is
  the tokens each point measured, so the curves share an axis whatever the parameter. A curve's point
  is the mean tokens over all recall turns against the answer rate over the turns with a known answer.
  **Above everywhere**: at each flat point's tokens, memtiers' best rate at no more tokens per turn
  (over all its points) is at least as high. **Half the tokens**: memtiers' cheapest point reaching the
  flat store's best rate, against the flat store's cheapest point reaching it.
- **Host carries the profile**: the profile plus memtiers' recall at limit k told so
  (`MEMTIERS_PROFILE_CARRIED=1`): no `profile:` line and none of the memories a profile entry was made
  from, the next hits in their place. By default recall shows the entries a query matches (for hosts
  that never read the resource) but never again the memories they were made from.
- **Answer in the context**: the turn has a known answer (the current choice for a decision, the
  current value of a preference, the critical fact) and that text appears in what the turn carries.
- **Critical facts found at the end**: at day 365, for each critical fact, the agent's direct lookup
  ("what is the user allergic to?") and the situation query; found when the fact's text is in the
  profile or the recall's answer. **Still warm and protected** is the tier guarantee itself.
- **Preferences right**: for each keyed preference and identity fact, the current value is the
  profile entry's value; a stale value is an earlier value of that key still in the profile.
- **Records lost**: every record `remember` ever returned, and every history record a profile change
  wrote, minus the three forgotten on request, must still be in the store; and every record's tier
  must be where its last logged move put it.
- **The timer** runs once per simulated day at 03:00 (the server's runs every 10 minutes; its rules
  count in days, so a daily pass makes the same moves, at most a day later). Record ids come from the
  seed, so two runs are the same run.
""".splitlines()


def markdown(result: Result, command: str, image: str | None) -> str:
    lines = [
        "# A simulated year",
        "",
        "One user over 365 days against the real memory: LanceDB in a temporary folder, the packaged",
        "embedding model, the real `Memory` class, the sweep timer once per simulated day. Produced by",
        "",
        f"    {command}",
        "",
        f"(seed {result.seed}; {result.seconds['remember']:.0f} s remembering, {result.seconds['recall']:.0f} s "
        f"in recall turns, {result.seconds['sweep']:.0f} s sweeping, {result.seconds['curves']:.0f} s evaluating "
        "the curves). Re-running it writes this page again.",
        "",
        "## Figures",
        "",
        "| measure | value |",
        "| --- | --- |",
    ]
    lines += [f"| {k} | {v} |" for k, v in summary(result).items()]
    lines += ["", *HOW_TO_READ]
    if image:
        lines += ["", f"![tier sizes, tokens per turn over the year, answer rate against tokens per turn]({image})"]
    if result.sweep:
        lines += [
            "",
            "## Answer rate against tokens per turn",
            "",
            "Every recall turn of the year at each setting, k hits or a token budget (mean tokens per turn |",
            "share of the turns with a known answer that had it in their context):",
            "",
            *curve_table(result),
            "",
            "### By what was asked",
            "",
            "At a few settings: what each system carries and answers, and what memtiers' recall repeats of the",
            "profile the turn already carries (mean tokens of its `profile:` line; mean hits that are the",
            "sources of a profile entry, and their tokens).",
            "",
            *by_category_curves(
                result, [s for s in (Setting(1), Setting(3), TOOL, Setting(BUDGET_LIMIT, 100)) if s in result.sweep]
            ),
        ]
    lines += [
        "",
        "## The real recall turns by what was asked",
        "",
        f"memtiers: the profile and `recall` at limit {RECALL_LIMIT}; flat: as many hits as that recall returned.",
        "",
        "| asked about | turns | tokens memtiers | tokens flat | answer in context, memtiers | flat |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in by_category(result)]
    lines += ["", "## Every logged move of the year, by rule", "", "| move | count |", "| --- | --- |"]
    lines += [f"| {rule} | {count} |" for rule, count in sorted(result.moves_by_rule.items())]
    lines += [
        "",
        "## Critical facts said once",
        "",
        "| day | fact | classified by | tier | lookup at the end | found | situation at the end | found |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {c['day']} | {c['content']} | {c['hint']} | {c['tier']} | {c['lookup']} | {_yes(c['found'])} "
        f"| {c['situation']} | {_yes(c['found_in_situation'])} |"
        for c in result.critical
    ]
    lines += ["", "## Preferences and identity at the end", "", "| key | current value | in the hot profile |"]
    lines += ["| --- | --- | --- |"]
    lines += [
        f"| {p['key']} | {p['current']} | {'yes' if p['current_in_hot'] else (p['in_hot'] or 'absent')} |"
        for p in result.preferences
    ]
    lines += ["", "## The hot profile at the end", "", "```", result.final_profile or "(empty)", "```"]
    lines += ["", "Entries flagged at the end (a newer memory said without the entry's key may update it):", ""]
    lines += [f"- {key}: {str(flag['said'])[:100]}" for key, flag in sorted(result.final_flags.items())] or ["- none"]
    if result.final_candidates:
        lines += ["", "Candidates for the profile at the end:", ""]
        lines += [
            f"- {c['id']} ({c['reason']}{', key ' + str(c['key']) if c.get('key') else ''}): {str(c['content'])[:100]}"
            for c in result.final_candidates
        ]
    return "\n".join(lines) + "\n"


def plot(result: Result, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    days = [d["day"] for d in result.daily]
    rows = 3 if result.sweep else 2
    fig = plt.figure(figsize=(9, 4.2 * rows))
    tiers_ax = fig.add_subplot(rows, 1, 1)
    tokens_ax = fig.add_subplot(rows, 1, 2, sharex=tiers_ax)
    tiers_ax.plot(days, [d["warm"] for d in result.daily], label="warm records")
    tiers_ax.plot(days, [d["cold"] for d in result.daily], label="cold records")
    tiers_ax.set_ylabel("records")
    hot_ax = tiers_ax.twinx()
    hot_ax.plot(days, [d["hot_tokens"] for d in result.daily], color="tab:red", label="hot profile tokens")
    hot_ax.axhline(result.cap_tokens, color="tab:red", linestyle=":", label=f"hot cap ({result.cap_tokens})")
    hot_ax.set_ylabel("hot profile tokens")
    hot_ax.set_ylim(0, result.cap_tokens * 1.1)
    handles = tiers_ax.get_legend_handles_labels()[0] + hot_ax.get_legend_handles_labels()[0]
    labels = tiers_ax.get_legend_handles_labels()[1] + hot_ax.get_legend_handles_labels()[1]
    tiers_ax.legend(handles, labels, loc="upper left")
    tiers_ax.set_title("Tier sizes")

    weekly = sorted({t.day // 7 for t in result.turns})
    for attr, label in (
        ("memtiers_tokens", f"memtiers: hot profile + recall (limit {RECALL_LIMIT})"),
        ("flat_tokens", "flat store, as many hits"),
    ):
        means = [statistics.mean(getattr(t, attr) for t in result.turns if t.day // 7 == w) for w in weekly]
        tokens_ax.plot([w * 7 + 3 for w in weekly], means, label=label)
    tokens_ax.set_ylabel("tokens per recall turn (weekly mean)")
    tokens_ax.set_xlabel("day")
    tokens_ax.legend(loc="upper left")
    tokens_ax.set_title("What memory puts into each real recall turn")

    if result.sweep:
        curve_ax = fig.add_subplot(rows, 1, 3)
        styles = {
            FLAT: {"color": "tab:gray", "marker": "o"},
            WITH_PROFILE: {"color": "tab:blue", "marker": "s"},
            RECALL: {"color": "tab:blue", "marker": "^", "linestyle": "--", "alpha": 0.6},
            LEAN: {"color": "tab:green", "marker": ".", "linestyle": ":"},
        }
        c = curves(result)
        for series, points in c.items():
            limited = [p for p in points if p.setting.budget is None]
            budgeted = [p for p in points if p.setting.budget is not None]
            curve_ax.plot([p.tokens for p in limited], [p.rate for p in limited], label=series, **styles[series])
            curve_ax.scatter([p.tokens for p in budgeted], [p.rate for p in budgeted], marker=styles[series]["marker"],
                             facecolors="none", edgecolors=styles[series]["color"], s=28)  # fmt: skip
            for p in limited:
                if p.setting.limit in (1, 5, 10, 20):
                    curve_ax.annotate(f"k={p.setting.limit}", (p.tokens, p.rate), textcoords="offset points",
                                      xytext=(3, -10), fontsize=7, color=styles[series]["color"])  # fmt: skip
        target = goal(c[FLAT], c[WITH_PROFILE]).flat_best
        best = f"flat store's best rate ({target.rate:.1%})"
        curve_ax.axhline(target.rate, color="tab:gray", linestyle=":", linewidth=0.8, label=best)
        curve_ax.axvline(
            target.tokens / 2, color="tab:red", linestyle=":", linewidth=0.8,
            label=f"half the flat store's tokens there ({target.tokens / 2:.0f})",
        )  # fmt: skip
        curve_ax.set_xlabel(
            f"tokens per recall turn (mean over the year; {_swept(result.sweep)}: hollow marks are budgets)"
        )
        curve_ax.set_ylabel("answer in context")
        curve_ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        curve_ax.set_xlim(left=0)
        curve_ax.legend(loc="lower right", fontsize=8)
        curve_ax.set_title("Answer rate against tokens per turn")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sim.year", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for simulation.md and simulation.png")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--keep", type=Path, help="keep the namespace's data in this new folder, to inspect")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="recall settings to change (tuning)")
    args = parser.parse_args(argv)
    settings = MemorySettings()
    settings = replace(settings, recall=with_values(settings.recall, args.set))
    with tempfile.TemporaryDirectory(prefix="memtiers-sim-") as tmp:
        embedder = FastEmbedder(cache_dir=Path(tmp) / "models")
        started = time.perf_counter()
        result = run(args.keep or Path(tmp) / "ns", embedder, args.days, args.seed, settings, progress=print)
        elapsed = time.perf_counter() - started
    for key, value in summary(result).items():
        print(f"{key}: {value}")
    print(f"wall time: {elapsed:.0f} s")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        plot(result, args.out / "simulation.png")
        command = "python -m tests.sim.year" + ("" if args.days == 365 else f" --days {args.days}")
        command += (" --set " + " ".join(args.set) if args.set else "") + " --out docs/"
        (args.out / "simulation.md").write_text(markdown(result, command, "simulation.png"))
    return 0 if not result.lost and result.critical_found == 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
