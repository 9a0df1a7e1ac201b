"""A short, time-compressed run of the simulated year, in the default test run (the full year is a script)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sim.year import Result, run
from tiers.embedder import FastEmbedder
from tiers.heat import HeatRules
from tiers.memory import MemorySettings

# Half the default half-life and idle time, and a cap the profile reaches: 45 days exercise every rule.
SETTINGS = MemorySettings(cap_tokens=120, rules=HeatRules(half_life_days=7, hot_idle_days=20))


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedder) -> Result:
    folder: Path = tmp_path_factory.mktemp("sim") / "ns"
    return run(folder, embedder, days=45, settings=SETTINGS, asks_per_day=2)


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
