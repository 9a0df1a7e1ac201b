"""Sign codes and the rows nearest a query by them (tiers/index/signs.py): pure logic over random vectors."""

from __future__ import annotations

import numpy as np
import pytest

from tiers.index import signs

DIM = 384


def clustered(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 50, n)] + 0.7 * rng.normal(size=(n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def codes_of(vectors: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(signs.pack(vectors).T)


def hamming(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    return (
        np.unpackbits(signs.pack(vectors).view(np.uint8), axis=1)
        != np.unpackbits(signs.pack(query).view(np.uint8), axis=1)
    ).sum(axis=1)


def test_a_code_holds_each_sign_and_the_distance_counts_the_signs_that_differ() -> None:
    vectors = clustered(300, 1)
    codes = signs.pack(vectors)
    assert codes.shape == (300, DIM // 64) and codes.dtype == np.uint64
    bits = np.unpackbits(codes.view(np.uint8), axis=1)
    assert (bits.astype(bool) == (vectors > 0)).all()
    query = vectors[7:8]
    found = signs.nearest(codes_of(vectors), 300, query, [np.ones(300, dtype=bool)], keep=20)
    distance = hamming(vectors, query)
    cut = np.sort(distance)[19]
    assert found.tolist() == np.flatnonzero(distance <= cut).tolist()  # the 20 nearest, and any tied at the cut


def test_each_scope_keeps_its_own_nearest_and_rows_out_of_every_scope_never_come_back() -> None:
    vectors = clustered(2_000, 2)
    query = vectors[3:4]
    rng = np.random.default_rng(3)
    wide = rng.random(2_000) < 0.8
    narrow = wide & (rng.random(2_000) < 0.05)
    found = set(signs.nearest(codes_of(vectors), 2_000, query, [wide, narrow], keep=50).tolist())
    distance = hamming(vectors, query)
    expected: set[int] = set()
    for scope in (wide, narrow):
        inside = np.flatnonzero(scope)
        cut = np.sort(distance[inside])[min(49, len(inside) - 1)]
        expected |= set(inside[distance[inside] <= cut].tolist())
    assert found == expected
    assert len(found & set(np.flatnonzero(narrow).tolist())) >= min(50, int(narrow.sum()))  # the narrow scope's own


def test_two_stages_find_what_one_finds_when_the_first_keeps_everything_and_most_of_it_when_it_keeps_a_tenth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vectors = clustered(20_000, 4)
    codes = codes_of(vectors)
    everything = np.ones(20_000, dtype=bool)
    queries = [vectors[i : i + 1] for i in range(0, 20_000, 1_000)]
    one = [signs.nearest(codes, 20_000, q, [everything], keep=200) for q in queries]

    monkeypatch.setattr(signs, "TWO_STAGES_FROM", 1_000)
    monkeypatch.setattr(signs, "FIRST_KEEP", 30_000)  # every row passes the first half
    assert [signs.nearest(codes, 20_000, q, [everything], keep=200).tolist() for q in queries] == [
        o.tolist() for o in one
    ]

    monkeypatch.setattr(signs, "FIRST_KEEP", 2_000)  # a tenth of the rows go on to the whole code
    two = [signs.nearest(codes, 20_000, q, [everything], keep=200) for q in queries]
    kept = [len(set(a.tolist()) & set(b.tolist())) / len(a) for a, b in zip(one, two, strict=True)]
    assert np.mean(kept) >= 0.9
    assert all(150 <= len(b) <= 400 for b in two)


def test_no_scope_means_every_row_in_one_stage_and_in_two(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered(5_000, 5)
    codes = codes_of(vectors)
    everything = np.ones(5_000, dtype=bool)
    queries = [vectors[i : i + 1] for i in range(0, 5_000, 500)]
    for stages_from in (10**9, 1_000):  # one stage; two, the first keeping a fifth of the rows
        monkeypatch.setattr(signs, "TWO_STAGES_FROM", stages_from)
        monkeypatch.setattr(signs, "FIRST_KEEP", 1_000)
        for q in queries:
            assert signs.nearest(codes, 5_000, q, [None], keep=100).tolist() == (
                signs.nearest(codes, 5_000, q, [everything], keep=100).tolist()
            )
