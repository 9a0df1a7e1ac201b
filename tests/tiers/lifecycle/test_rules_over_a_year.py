"""The sweep as a pure function of (records, usage, profile, now): a year simulated day by day."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from tests.helpers import T0
from tiers.lifecycle.heat import HeatRules
from tiers.lifecycle.rules import Planned, hot_rid, plan_sweep
from tiers.storage.hot import Entry
from tiers.storage.ledger import Usage

RULES = HeatRules()


def row(rid: str, *, kind: str = "note", protected: bool = False, tier: str = "warm", **extra: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "tier": tier,
        "kind": kind,
        "protected": protected,
        "occurred_at": T0,
        "created_at": T0,
        "forget_after": None,
        "superseded_by": None,
    } | extra


class Year:
    """Runs the sweep once a day, applying its moves the way Memory does, and keeps every move by day."""

    def __init__(self, rows: list[dict[str, Any]], profile: Mapping[str, Entry]) -> None:
        self.rows = {r["id"]: r for r in rows}
        self.profile = dict(profile)
        self.usage: dict[str, Usage] = {}
        self.moves: list[tuple[int, Planned]] = []

    def use(self, rid: str, at: datetime) -> None:
        old = self.usage.get(rid)
        self.usage[rid] = Usage((old.uses if old else 0) + 1, old.repeats if old else 0, at)

    def day(self, number: int) -> None:
        plan = plan_sweep(list(self.rows.values()), self.usage, self.profile, T0 + timedelta(days=number), RULES)
        for move in plan.moves:
            self.moves.append((number, move))
            if move.key is not None:
                del self.profile[move.key]
            else:
                self.rows[move.rid]["tier"] = move.dst.value

    def of(self, rid: str) -> list[tuple[int, str, str, str]]:
        return [(day, m.src.value, m.dst.value, m.rule) for day, m in self.moves if m.rid == rid]


def test_a_year_of_daily_sweeps_moves_each_record_by_its_rule() -> None:
    year = Year(
        [
            row("note"),
            row("allergy", kind="health", protected=True),
            row("keyed", protected=True),
            row("expiring", forget_after=T0 + timedelta(days=30)),
            row("expiring-durable", kind="health", protected=True, forget_after=T0 + timedelta(days=100)),
        ],
        profile={},
    )
    for number in range(366):
        if number == 200:
            year.use("note", T0 + timedelta(days=200))  # a recall returned the cold note
        year.day(number)

    assert year.of("allergy") == []
    assert year.of("keyed") == []
    assert year.of("expiring") == [(30, "warm", "cold", "forget_after")]
    assert year.of("expiring-durable") == [(100, "warm", "cold", "forget_after")]
    assert year.of("note") == [
        (47, "warm", "cold", "heat"),
        (200, "cold", "warm", "heat"),
        (261, "warm", "cold", "heat"),  # one use buys 14 * log2(20) = 60.5 more days
    ]


def test_durable_records_never_go_cold_by_heat_however_long_they_sit() -> None:
    rows = [row(f"durable-{kind}", kind=kind, protected=True) for kind in ("identity", "preference", "health")]

    plan = plan_sweep(rows, {}, {}, T0 + timedelta(days=3_650), RULES)

    assert plan.moves == ()


def test_a_passed_forget_after_sends_even_a_well_used_record_cold() -> None:
    rows = [row("busy", forget_after=T0 + timedelta(days=1))]
    usage = {"busy": Usage(50, 3, T0 + timedelta(days=2))}

    [move] = plan_sweep(rows, usage, {}, T0 + timedelta(days=2), RULES).moves

    assert (move.rid, move.dst.value, move.rule) == ("busy", "cold", "forget_after")


def test_a_cold_record_used_again_is_rewarmed_but_an_expired_one_stays_cold() -> None:
    now = T0 + timedelta(days=300)
    rows = [row("old", tier="cold"), row("expired", tier="cold", forget_after=T0 + timedelta(days=10))]
    usage = {"old": Usage(1, 0, now), "expired": Usage(1, 0, now)}

    plan = plan_sweep(rows, usage, {}, now, RULES)

    assert [(m.rid, m.src.value, m.dst.value, m.rule) for m in plan.moves] == [("old", "cold", "warm", "heat")]


def test_a_cold_record_not_used_stays_cold() -> None:
    plan = plan_sweep([row("old", tier="cold")], {}, {}, T0 + timedelta(days=400), RULES)

    assert plan.moves == ()


def test_idle_unpinned_profile_entries_move_to_warm_and_pinned_ones_stay() -> None:
    profile = {
        "name": Entry("Ana", T0, pinned=True),
        "project": Entry("memtiers", T0),
        "editor": Entry("helix", T0),
    }
    year = Year([], profile)
    for number in range(366):
        if number == 60:
            year.use(hot_rid("editor"), T0 + timedelta(days=60))  # a recall matched it
        year.day(number)

    assert [(day, m.key, m.src.value, m.dst.value, m.rule) for day, m in year.moves] == [
        (90, "project", "hot", "warm", "hot_idle"),
        (150, "editor", "hot", "warm", "hot_idle"),
    ]
    assert list(year.profile) == ["name"]


def test_a_changed_value_restarts_the_idle_clock_of_its_entry() -> None:
    entry = replace(Entry("memtiers", T0), updated_at=T0 + timedelta(days=80))

    plan = plan_sweep([], {}, {"project": entry}, T0 + timedelta(days=120), RULES)

    assert plan.moves == ()


def test_hot_candidates_are_proposed_by_heat_but_never_moved() -> None:
    now = T0 + timedelta(days=1)
    rows = [
        row("popular"),
        row("in-profile"),
        row("history", kind="history"),
        row("superseded", superseded_by="profile:project"),
        row("quiet"),
    ]
    busy = Usage(10, 0, now)
    usage = {"popular": busy, "in-profile": busy, "history": busy, "superseded": busy, "quiet": Usage(1, 0, now)}
    profile = {"project": Entry("memtiers", now, sources=("in-profile",))}

    plan = plan_sweep(rows, usage, profile, now, RULES)

    assert [rid for rid, _ in plan.hot_candidates] == ["popular"]
    assert plan.hot_candidates[0][1] == 11.0
    assert plan.moves == ()
