"""A short, time-compressed run of the simulated year, in the default test run (the full year is a script)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.sim.world import Ask
from tests.sim.year import (
    BUDGET_LIMIT,
    FLAT,
    RECALL,
    TOOL,
    WITH_PROFILE,
    Point,
    Result,
    Setting,
    Turn,
    _sweep,
    goal,
    run,
)
from tiers.lifecycle.heat import HeatRules
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn
from tiers.storage.hot import render

# Half the default half-life and idle time, and a cap the profile reaches: 45 days exercise every rule.
SETTINGS = MemorySettings(cap_tokens=120, rules=HeatRules(half_life_days=7, hot_idle_days=20))
# A few points of the curves: the full year sweeps k = 1 to 20 and budgets of 25 to 800 tokens.
SWEEP = (Setting(1), TOOL, Setting(20), Setting(BUDGET_LIMIT, 50), Setting(BUDGET_LIMIT, 300))


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedder) -> Result:
    folder: Path = tmp_path_factory.mktemp("sim") / "ns"
    return run(folder, embedder, days=45, settings=SETTINGS, asks_per_day=2, sweep=SWEEP)


def test_the_short_year_loses_no_record_and_the_log_agrees_with_every_tier(result: Result) -> None:
    assert result.said >= 300
    assert result.lost == []
    assert result.log_mismatches == []
    assert result.forgotten == 1


def test_the_hot_profile_never_passes_its_cap_and_what_did_not_fit_is_a_candidate(result: Result) -> None:
    assert result.max_hot_tokens <= SETTINGS.cap_tokens
    assert any(c["reason"] == "profile full" for c in result.final_candidates)


def test_every_rule_fired_and_the_tiers_moved(result: Result) -> None:
    fired = {move.rsplit(" ", 1)[1] for move in result.moves_by_rule}
    assert {"heat", "forget_after", "hot_idle"} <= fired
    assert result.daily[-1]["cold"] > 0


def test_critical_facts_said_once_stay_warm_and_protected(result: Result) -> None:
    assert len(result.critical) == 5
    assert all(c["tier"] == "warm" and c["protected"] for c in result.critical)


def test_no_stale_value_is_left_in_the_hot_profile(result: Result) -> None:
    assert result.preferences
    assert not [p for p in result.preferences if p["stale_in_hot"]]


def test_chit_chat_is_never_protected(result: Result) -> None:
    assert result.protected_chitchat == []


def test_the_uncounted_recall_at_the_tools_limit_is_what_the_real_turn_carried(result: Result) -> None:
    assert result.turns
    for turn in result.turns:
        assert turn.points[(WITH_PROFILE, TOOL)] == (turn.memtiers_tokens, turn.memtiers_answered)


def test_the_profile_is_counted_once_a_turn_and_only_adds_answers(result: Result) -> None:
    for turn in result.turns:
        profile = {turn.points[(WITH_PROFILE, k)][0] - turn.points[(RECALL, k)][0] for k in SWEEP}
        assert len(profile) == 1 and profile.pop() >= 0
        for k in SWEEP:
            with_profile, alone = turn.points[(WITH_PROFILE, k)][1], turn.points[(RECALL, k)][1]
            assert (with_profile is None) == (alone is None) == (turn.memtiers_answered is None)
            assert with_profile or not alone
            assert not turn.lean_repeats[k]  # told the host carries the profile, recall repeats none of it
            assert turn.points[(FLAT, k)][1] is None or turn.points[(FLAT, k)][0] > 0
            if k.budget is not None:  # a budget holds every system's answer, the recall's profile line with it
                assert max(turn.points[(FLAT, k)][0], turn.points[(RECALL, k)][0]) <= k.budget


def test_the_sweep_counts_no_use(tmp_path: Path, embedder: FastEmbedder) -> None:
    now = datetime(2026, 1, 5, 12, tzinfo=UTC)
    memory = Memory(tmp_path / "ns", embedder)
    try:
        memory.remember(
            [
                MemoryIn(content="I prefer vim for editing code", key="editor"),
                MemoryIn(content="For the billing project we decided to use Postgres for the database"),
                MemoryIn(content="User had ramen for lunch"),
            ],
            now,
        )
        memory.recall("which editor do I use?", now)
        before = memory.ledger.usage()
        profile = memory.profile()
        turn = Turn(0, "preference", 0, 0, None, None)
        ask = Ask("which editor do I use?", "preference", "vim")
        at = (Setting(1), Setting(2), TOOL, Setting(BUDGET_LIMIT, 25))
        _sweep(memory, ask, now + timedelta(hours=1), profile, render(profile), at, turn)
        assert memory.ledger.usage() == before
        assert turn.points[(WITH_PROFILE, Setting(1))][1] is True
    finally:
        memory.close()


def test_the_goal_reads_the_curves_as_the_issue_states_it() -> None:
    def points(series: str, *measured: tuple[float, float]) -> list[Point]:
        return [Point(series, Setting(k), tokens, rate) for k, (tokens, rate) in enumerate(measured, 1)]

    flat = points(FLAT, (100, 0.80), (200, 0.90), (300, 0.95))
    cheap = points(WITH_PROFILE, (90, 0.85), (150, 0.96))
    assert goal(flat, cheap).holds and goal(flat, cheap).share == 0.5
    late = points(WITH_PROFILE, (250, 0.96))  # beats flat, but has nothing as cheap as flat's first points
    assert not goal(flat, late).holds and [p.setting.limit for p in goal(flat, late).absent] == [1, 2]
    dip = points(WITH_PROFILE, (90, 0.85), (190, 0.85), (290, 0.99))
    assert [p.setting.limit for p in goal(flat, dip).below] == [2] and goal(flat, dip).share == 290 / 300
    assert goal(flat, points(WITH_PROFILE, (100, 0.5))).reaching is None
    # A budget point counts like any other: it fills the dip at 190 tokens.
    mended = [*dip, Point(WITH_PROFILE, Setting(BUDGET_LIMIT, 180), 180, 0.91)]
    assert goal(flat, mended).above_everywhere and not goal(flat, mended).below
