"""A cold search's hits: cosines made a block of codes at a time are those of all the codes at once, and ids
turn into text and back."""

from __future__ import annotations

import numpy as np

from tests.tiers.index.test_cold import DIM, batches, rows
from tiers.index import hits as hits_module
from tiers.index.cold import ColdIndex, ColdScope
from tiers.index.ids import NONE, hex_ids, hex_or_none, id_numbers, id_text


def test_ids_turn_into_numbers_and_back_and_none_stays_none() -> None:
    ids = ["0123456789ab", "000000000001", "ffffffffffff"]
    numbers = id_numbers(ids)
    assert hex_ids(numbers) == ids and [id_text(n) for n in numbers] == ids
    assert hex_or_none(np.array([numbers[0], NONE], dtype=np.uint64)) == [ids[0], None]


def test_cosines_made_a_block_at_a_time_are_those_of_all_the_codes_at_once() -> None:
    rng = np.random.default_rng(5)
    n = 2 * hits_module.COSINE_BLOCK + 37  # two whole blocks and a part
    table = rows(range(n), rng)
    index = ColdIndex(DIM)
    index.load(batches(table, 1_000))
    vectors = np.asarray(table["vector"].to_pylist(), dtype=np.float32)
    queries = vectors[[3, 700]] + 0.2 * rng.normal(size=(2, DIM)).astype(np.float32)  # two forms
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    hits = index.search(queries, [], 50, ColdScope())
    positions = np.arange(n)[::-1].copy()  # any order, as a pool's rows come
    cosine = hits.cosine(positions)

    whole = (index.codes[positions].astype(np.float32) @ queries.T).max(axis=1) * index.scale[positions]
    np.testing.assert_allclose(cosine, whole, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(cosine, (vectors[positions] @ queries.T).max(axis=1), atol=0.01)
