"""The sweep rules as pure functions of (rows, usage, profile, now, rules): no storage, no model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.helpers import days_to_demotion
from tiers.lifecycle.heat import HeatRules, heat
from tiers.lifecycle.rules import hot_rid, plan_sweep
from tiers.records import Tier
from tiers.storage.hot import Entry
from tiers.storage.ledger import Usage

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RULES = HeatRules()


def row(rid: str, tier: str = "warm", age_days: float = 0, **extra: Any) -> dict[str, Any]:
    base = {
        "id": rid,
        "tier": tier,
        "kind": "note",
        "protected": False,
        "occurred_at": T0 - timedelta(days=age_days),
        "created_at": T0 - timedelta(days=age_days),
        "forget_after": None,
        "superseded_by": None,
    }
    return base | extra


def moves(rows: list[dict[str, Any]], usage: dict[str, Usage] | None = None, profile: Any = None) -> list[Any]:
    plan = plan_sweep(rows, usage or {}, profile or {}, T0, RULES)
    return [(m.rid, m.dst, m.rule) for m in plan.moves]


def test_a_record_never_used_goes_cold_after_about_46_days() -> None:
    assert days_to_demotion(0, 0, RULES) == pytest.approx(46.5, abs=0.1)
    assert moves([row("a", age_days=46)]) == []
    assert moves([row("a", age_days=47)]) == [("a", Tier.COLD, "heat")]


def test_a_protected_record_stays_warm_by_heat_until_it_is_superseded() -> None:
    assert moves([row("a", age_days=400, protected=True)]) == []
    assert moves([row("a", age_days=400, protected=True, superseded_by="b")]) == [("a", Tier.COLD, "heat")]


def test_forget_after_wins_over_protection_and_heat() -> None:
    expired = row("a", protected=True, forget_after=T0 - timedelta(seconds=1))
    assert moves([expired]) == [("a", Tier.COLD, "forget_after")]


def test_uses_keep_a_record_warm_and_bring_a_cold_one_back() -> None:
    used = {"a": Usage(uses=3, repeats=0, last_touch=T0 - timedelta(days=30))}
    assert moves([row("a", age_days=100)], used) == []
    fresh = {"c": Usage(uses=1, repeats=0, last_touch=T0)}
    assert moves([row("c", tier="cold", age_days=100)], fresh) == [("c", Tier.WARM, "heat")]


def test_a_hot_record_is_a_candidate_never_a_move() -> None:
    used = {"a": Usage(uses=4, repeats=0, last_touch=T0)}
    plan = plan_sweep([row("a")], used, {}, T0, RULES)
    assert plan.moves == () and plan.hot_candidates == (("a", 5.0),)
    sourced = {"k": Entry("v", T0, sources=("a",))}
    assert plan_sweep([row("a")], used, sourced, T0, RULES).hot_candidates == ()
    assert plan_sweep([row("a", kind="history")], used, {}, T0, RULES).hot_candidates == ()


def test_an_idle_unpinned_entry_goes_warm_and_a_pinned_or_used_one_stays() -> None:
    old = T0 - timedelta(days=91)
    profile = {"a": Entry("1", old), "b": Entry("2", old, pinned=True), "c": Entry("3", old)}
    usage = {hot_rid("c"): Usage(uses=1, repeats=0, last_touch=T0 - timedelta(days=5))}
    plan = plan_sweep([], usage, profile, T0, RULES)
    assert [(m.key, m.rule) for m in plan.moves] == [("a", "hot_idle")]
    assert plan.moves[0].heat == pytest.approx(heat(0, 0, old, T0, RULES))


def test_small_talk_said_again_and_again_stays_warm_but_is_no_candidate() -> None:
    said_often = {"a": Usage(uses=0, repeats=30, last_touch=T0), "b": Usage(uses=0, repeats=30, last_touch=T0)}
    plan = plan_sweep([row("a"), row("b", protected=True)], said_often, {}, T0, RULES)
    assert plan.moves == ()
    assert [rid for rid, _ in plan.hot_candidates] == ["b"]


def test_meeting_notes_and_tasks_are_never_profile_candidates() -> None:
    used = {"e": Usage(uses=50, repeats=0, last_touch=T0), "t": Usage(uses=50, repeats=0, last_touch=T0)}
    plan = plan_sweep([row("e", kind="event"), row("t", kind="task")], used, {}, T0, RULES)
    assert plan.hot_candidates == ()
