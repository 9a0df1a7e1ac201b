"""A score's median over the rows each sample stands for (tiers/index/samples.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tiers.index.samples import Sample, median


def test_the_median_weighs_each_sample_by_the_rows_it_stands_for() -> None:
    few = Sample(np.asarray([0.9, 0.8, 0.7], np.float32), 3)  # three rows, all of them
    many = Sample(np.asarray([0.1, 0.2], np.float32), 1_000)  # two values standing for a thousand rows
    assert median([few, many]) == pytest.approx(0.2)
    assert median([few]) == pytest.approx(0.8)
    assert median([few, Sample(np.zeros(0, np.float32), 0)]) == pytest.approx(0.8)
    assert median([]) == 0.0
