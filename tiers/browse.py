"""Reading a namespace as a person browses it: records of a tier by time, heats, and the tiers week by week.

Nothing here counts as a use or moves a record: looking at memory must not change what the timer does with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pyarrow as pa

from tiers.lifecycle.rules import record_heat
from tiers.memory import Memory
from tiers.records import Record, Tier
from tiers.storage.ledger import Move

WEEK = timedelta(days=7)


@dataclass(frozen=True)
class Page:
    """Records of one tier, newest first, and the time to ask for the next page before (None: no more)."""

    records: list[Record]
    next_before: datetime | None
    total: int


@dataclass(frozen=True)
class Week:
    """One week of the tier picture: records in each tier at its end, and the moves made during it."""

    start: datetime
    counts: dict[str, int]
    moves: dict[str, int] = field(default_factory=dict)  # "warm>cold": how many


def listing(memory: Memory, tier: Tier, before: datetime | None = None, limit: int = 50) -> Page:
    """The `limit` records of `tier` that happened most recently before `before` (default: any time)."""
    if tier is Tier.HOT:
        raise ValueError("the hot tier is the profile: read it with Memory.profile")
    table = memory.store.warm_table if tier is Tier.WARM else memory.store.cold_table
    times: list[tuple[datetime, str]] = []
    for batch in table.scan(["id", "occurred_at"]):
        ids = batch.column("id").to_pylist()
        stamps = batch.column("occurred_at").cast(pa.timestamp("us", tz="UTC")).to_pylist()
        times += [(_utc(at), rid) for rid, at in zip(ids, stamps, strict=True)]
    times.sort(reverse=True)
    shown = [(at, rid) for at, rid in times if before is None or at < before][:limit]
    found = memory.store.get([rid for _, rid in shown])
    records = [found[rid] for _, rid in shown if rid in found]
    older = len(times) > 0 and bool(shown) and shown[-1] != times[-1]
    return Page(records, shown[-1][0] if older else None, len(times))


def heats(memory: Memory, records: Sequence[Record], now: datetime) -> dict[str, float]:
    """Each record's heat as of `now`, as the timer computes it."""
    usage = memory.ledger.usage([r.id for r in records])
    rules = memory.settings.rules
    return {r.id: record_heat({"occurred_at": r.occurred_at}, usage.get(r.id), now, rules) for r in records}


def tier_history(memory: Memory, now: datetime, weeks: int = 12) -> list[Week]:
    """The last `weeks` weeks of the namespace's tiers: the records stored now, placed by the move log."""
    present: list[tuple[str, Tier, datetime]] = []
    for tier, table in ((Tier.WARM, memory.store.warm_table), (Tier.COLD, memory.store.cold_table)):
        for batch in table.scan(["id", "created_at"]):
            stamps = batch.column("created_at").cast(pa.timestamp("us", tz="UTC")).to_pylist()
            present += [(rid, tier, _utc(at)) for rid, at in zip(batch.column("id").to_pylist(), stamps, strict=True)]
    return weekly(present, memory.ledger.all_moves(), now, weeks)


def weekly(
    present: Iterable[tuple[str, Tier, datetime]], moves: Sequence[Move], now: datetime, weeks: int = 12
) -> list[Week]:
    """Counts per tier at the end of each of the last `weeks` weeks, and the moves of each week.

    `present` is every stored record (id, tier now, created at). A record's tier at a time is where its last
    logged move before then took it, or where its first move after then took it from, or else where it is now.
    Hot counts the profile's keys, from the moves into and out of it. Forgotten records are not counted.
    """
    by_record: dict[str, list[Move]] = {}
    for move in sorted(moves, key=lambda m: m.at):
        by_record.setdefault(move.rid, []).append(move)
    ends = [now - WEEK * i for i in range(weeks - 1, -1, -1)]
    out = []
    for end in ends:
        counts: Counter[str] = Counter({Tier.HOT.value: 0, Tier.WARM.value: 0, Tier.COLD.value: 0})
        for rid, tier, created in present:
            if created <= end:
                counts[_tier_at(by_record.get(rid, ()), tier.value, end)] += 1
        counts[Tier.HOT.value] = len(_keys_at(moves, end))
        start = end - WEEK
        during = Counter(f"{m.src}>{m.dst}" for m in moves if start < m.at <= end and m.src != m.dst)
        out.append(Week(start, dict(counts), dict(during)))
    return out


def _tier_at(moves: Sequence[Move], now_tier: str, at: datetime) -> str:
    record_moves = [m for m in moves if m.dst in ("warm", "cold") and m.src in ("warm", "cold")]
    before = [m for m in record_moves if m.at <= at]
    if before:
        return before[-1].dst
    if record_moves:
        return record_moves[0].src
    return now_tier


def _keys_at(moves: Sequence[Move], at: datetime) -> set[str]:
    keys: set[str] = set()
    for m in sorted(moves, key=lambda m: m.at):
        if m.at > at or not m.key:
            continue
        if m.dst == "hot":
            keys.add(m.key)
        elif m.src == "hot":
            keys.discard(m.key)
    return keys


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
