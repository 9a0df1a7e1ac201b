"""The scale benchmark's inputs are what they claim: varied distinct texts, jitter of the stated size, rows a
store takes through the fill seam and a sweep leaves where they are. No timing here: benchmarks are scripts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from tests.bench import synthetic
from tests.bench.fill import fill
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import Tier

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def unit_vectors(n: int, dim: int = 384) -> np.ndarray:
    vectors = np.random.default_rng(0).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_pool_texts_are_distinct_varied_and_ten_to_forty_words() -> None:
    pool = synthetic.memos(1, 3_000)

    lengths = [len(m.text.split()) for m in pool]
    assert len({m.text for m in pool}) == 3_000
    assert min(lengths) >= 10 and max(lengths) <= 40
    assert len({m.topic for m in pool}) >= 12 and len({m.kind for m in pool}) >= 5
    assert synthetic.memos(1, 50) == pool[:50]  # seeded: the cache key stays valid


def test_queries_are_never_pool_texts_and_a_third_are_short_keyword_queries() -> None:
    pool = synthetic.texts(1, 2_000)

    queries = synthetic.queries(1, 90, pool)

    assert len(queries) == 90 and not set(queries) & set(pool)
    assert sum(len(q.split()) >= 10 for q in queries) == 60  # the other 30 are two or three keywords


def test_rows_are_distinct_unit_vectors_about_cosine_point_nine_from_their_pool_vector() -> None:
    pool, vectors = synthetic.memos(1, 200), unit_vectors(200)

    tables = list(synthetic.rows(5_000, pool, vectors, NOW, cold_share=0.9, chunk_rows=2_000))

    assert [len(t) for t in tables] == [2_000, 2_000, 1_000]
    contents = [c for t in tables for c in t.column("content").to_pylist()]
    assert len(set(contents)) == 5_000
    assert len(set(contents) & {m.text for m in pool}) < 250  # varied, not the pool again
    jittered = np.concatenate([synthetic.vectors_of(t) for t in tables])
    assert jittered.dtype == np.float32
    assert np.allclose(np.linalg.norm(jittered, axis=1), 1.0, atol=1e-5)
    nearest = (jittered @ vectors.T).max(axis=1)
    assert 0.88 < float(np.median(nearest)) < 0.92
    cold = sum(t.column("tier").to_pylist().count("cold") for t in tables)
    assert 4_300 < cold < 4_700


def test_filled_rows_keep_their_tiers_through_a_sweep_and_are_recalled(tmp_path: Path, embedder: FastEmbedder) -> None:
    pool = synthetic.memos(1, 40)
    vectors = synthetic.pool_vectors([m.text for m in pool], embedder, cache=tmp_path / "cache")
    memory = Memory(tmp_path / "ns", embedder)
    try:
        written = fill(memory, synthetic.rows(600, pool, vectors, NOW, cold_share=0.9, chunk_rows=250))
        cold, warm = memory.store.count(Tier.COLD), memory.store.count(Tier.WARM)
        report = memory.sweep(NOW)
        found = memory.recall(pool[0].text, NOW, limit=50, max_tokens=1024)
    finally:
        memory.close()

    assert written == 600 and cold + warm == 600 and cold > 450
    assert report.moves == ()
    assert found.hits and len(found.hits) <= 50
    assert np.array_equal(synthetic.pool_vectors([m.text for m in pool], embedder, cache=tmp_path / "cache"), vectors)
