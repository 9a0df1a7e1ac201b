"""Two client processes on one data folder, 100 mixed calls each: no error, nothing lost or stored twice.

The small version of the benchmark tests/bench/clients.py (four processes, 1,000 calls each).
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.clients import KINDS, run
from tiers.model.embedder import FastEmbedder


def test_two_processes_making_100_mixed_calls_each_get_no_error_and_lose_nothing(
    tmp_path: Path, model_cache: Path, embedder: FastEmbedder
) -> None:
    report = run(tmp_path / "ns", model_cache, processes=2, calls=100, limit=300)

    assert report.errors == []
    assert report.lost == []
    assert report.doubled == []
    assert report.profile_wrong == []
    assert sum(len(report.times[kind]) for kind in KINDS) == 200
    assert all(report.times[kind] for kind in KINDS), {kind: len(t) for kind, t in report.times.items()}
    assert report.stored > 0
