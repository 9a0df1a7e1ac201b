"""Heat: how alive a record is, from its uses, its repeats and its age (after MemoryOS).

    heat = (1 + use_weight * uses + repeat_weight * repeats) * 0.5 ** (idle_days / half_life_days)

where idle_days counts from the record's last touch: when it happened, was last returned by a
recall, or was said again. Heat decides tier moves only; it never ranks a recall.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class HeatRules:
    """The constants of heat and of the moves it drives (published in docs/tiers.md)."""

    use_weight: float = 1.0
    repeat_weight: float = 2.0
    half_life_days: float = 14.0
    demote_below: float = 0.1
    rewarm_at: float = 2.0
    hot_candidate_at: float = 4.0
    hot_idle_days: float = 90.0
    project_away_days: float = 30.0  # another project's profile entries go down to warm after this (tiers/projects)


def heat(uses: int, repeats: int, last_touch: datetime, now: datetime, rules: HeatRules) -> float:
    """Heat of a record as of `now`; a touch in the future of `now` counts as no age."""
    idle_days = max(0.0, (now - last_touch).total_seconds() / 86_400)
    return (1 + rules.use_weight * uses + rules.repeat_weight * repeats) * 0.5 ** (idle_days / rules.half_life_days)
