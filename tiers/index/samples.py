"""Samples of a score over a tier's rows: recall fuses meaning and words by each score's median over every
row in scope, and a tier too large to read whole is sampled evenly."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MEDIAN_SAMPLE = 1_024  # values of a score a median is taken over, evenly spaced, when the rows are more


@dataclass(frozen=True)
class Sample:
    """An even sample of one score over some rows, and how many rows it stands for."""

    values: np.ndarray
    rows: int


def sample(values: np.ndarray) -> Sample:
    """An even sample of these rows' values (all of them up to MEDIAN_SAMPLE)."""
    return Sample(values[:: max(1, len(values) // MEDIAN_SAMPLE)], len(values))


def median(samples: Sequence[Sample]) -> float:
    """The median of a score over every row the samples stand for, each value weighing its share of its rows."""
    parts = [s for s in samples if len(s.values) and s.rows]
    if not parts:
        return 0.0
    values = np.concatenate([s.values for s in parts]).astype(np.float64)
    weights = np.concatenate([np.full(len(s.values), s.rows / len(s.values)) for s in parts])
    order = np.argsort(values, kind="stable")
    total = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(total, total[-1] / 2.0)])
