"""The rules that move records between tiers: pure functions of (records, usage, now, rules)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tiers.lifecycle import projects
from tiers.lifecycle.heat import HeatRules, heat
from tiers.records import Kind, Tier
from tiers.storage.hot import Entry
from tiers.storage.ledger import Usage
from tiers.text.timeparse import as_utc


@dataclass(frozen=True)
class Planned:
    """A move the sweep makes (or would make, in a dry run)."""

    rid: str
    src: Tier
    dst: Tier
    rule: str
    heat: float
    key: str | None = None


@dataclass(frozen=True)
class Plan:
    moves: tuple[Planned, ...]
    hot_candidates: tuple[tuple[str, float], ...]


def hot_rid(key: str) -> str:
    """The ledger id under which a profile entry's uses are counted."""
    return f"hot:{key}"


def record_heat(row: Mapping[str, Any], usage: Usage | None, now: datetime, rules: HeatRules) -> float:
    last = as_utc(row["occurred_at"])
    if usage is not None:
        last = max(last, usage.last_touch)
    return heat(usage.uses if usage else 0, usage.repeats if usage else 0, last, now, rules)


# Episodes and old profile values are kept and recalled, never proposed as profile entries.
_EPISODIC = frozenset({Kind.HISTORY, Kind.EVENT, Kind.TASK})


def _candidate_heat(row: Mapping[str, Any], usage: Usage | None, now: datetime, rules: HeatRules) -> float:
    """Heat as a profile candidate: small talk said again and again stays warm, but only a durable
    fact's repeats make it a candidate; for the rest, only uses (recalls that returned it) count."""
    if usage is None or row["protected"]:
        return record_heat(row, usage, now, rules)
    last = max(as_utc(row["occurred_at"]), usage.last_touch)
    return heat(usage.uses, 0, last, now, rules)


def plan_sweep(
    rows: Sequence[Mapping[str, Any]],
    usage: Mapping[str, Usage],
    profile: Mapping[str, Entry],
    now: datetime,
    rules: HeatRules,
) -> Plan:
    """Decide every move as of `now`. Durable facts never go cold by heat while they are current (a
    superseded value may); nothing is ever deleted."""
    moves: list[Planned] = []
    candidates: list[tuple[str, float]] = []
    in_profile = {rid for entry in profile.values() for rid in entry.sources}
    for row in rows:
        tier = Tier(row["tier"])
        value = record_heat(row, usage.get(row["id"]), now, rules)
        expired = row["forget_after"] is not None and as_utc(row["forget_after"]) <= now
        if tier is Tier.WARM:
            if expired:
                moves.append(Planned(row["id"], tier, Tier.COLD, "forget_after", value))
            elif value < rules.demote_below and (not row["protected"] or row["superseded_by"]):
                moves.append(Planned(row["id"], tier, Tier.COLD, "heat", value))
            elif row["id"] not in in_profile and not row["superseded_by"] and row["kind"] not in _EPISODIC:
                proposed = _candidate_heat(row, usage.get(row["id"]), now, rules)
                if proposed >= rules.hot_candidate_at:
                    candidates.append((row["id"], proposed))
        elif tier is Tier.COLD and not expired and value >= rules.rewarm_at:
            moves.append(Planned(row["id"], tier, Tier.WARM, "heat", value))
    idle = timedelta(days=rules.hot_idle_days)
    away = set(projects.away(profile, now, rules.project_away_days))
    for key, entry in profile.items():
        used = usage.get(hot_rid(key))
        last = max(entry.updated_at, used.last_touch) if used else entry.updated_at
        rule = "hot_idle" if not entry.pinned and now - last >= idle else projects.AWAY if key in away else None
        if rule is not None:
            value = heat(used.uses if used else 0, 0, last, now, rules)
            moves.append(Planned(hot_rid(key), Tier.HOT, Tier.WARM, rule, value, key=key))
    candidates.sort(key=lambda item: -item[1])
    return Plan(tuple(moves), tuple(candidates))
