"""Heat as a pure function of a fixed clock: it halves every 14 idle days and grows with uses and repeats."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from tests.helpers import T0, days_to_demotion
from tiers.lifecycle.heat import HeatRules, heat

RULES = HeatRules()


def test_a_fresh_record_never_used_has_heat_one() -> None:
    assert heat(0, 0, T0, T0, RULES) == 1.0


def test_heat_halves_every_half_life_of_idle_days() -> None:
    values = [heat(0, 0, T0, T0 + timedelta(days=14 * n), RULES) for n in range(5)]

    assert values == pytest.approx([1.0, 0.5, 0.25, 0.125, 0.0625])


def test_uses_and_repeats_add_to_heat_with_their_weights() -> None:
    assert heat(3, 0, T0, T0, RULES) == 4.0
    assert heat(0, 2, T0, T0, RULES) == 5.0
    assert heat(1, 1, T0, T0 + timedelta(days=14), RULES) == pytest.approx(2.0)


def test_a_touch_after_now_counts_as_no_age() -> None:
    assert heat(0, 0, T0 + timedelta(days=3), T0, RULES) == 1.0


def test_a_record_never_used_falls_under_the_demotion_line_after_about_46_days() -> None:
    days = days_to_demotion(0, 0, RULES)

    assert days == pytest.approx(14 * math.log2(10))
    assert heat(0, 0, T0, T0 + timedelta(days=46), RULES) > RULES.demote_below
    assert heat(0, 0, T0, T0 + timedelta(days=47), RULES) < RULES.demote_below


def test_each_use_buys_a_record_more_days_before_demotion() -> None:
    spans = [days_to_demotion(uses, 0, RULES) for uses in range(5)]

    assert spans == sorted(spans)
    assert len(set(spans)) == 5
    assert days_to_demotion(0, 1, RULES) == days_to_demotion(2, 0, RULES)
