"""BM25 over one tier's postings, and the query's weight in that tier, which makes two tiers' scores comparable.

Each tier ranks its own rows by the textbook formula with its own statistics (row count, lengths,
document frequencies). Those scores are not on one scale: a word that no cold row but a few of
200,000 holds weighs twice what it weighs among a few thousand warm rows, so a cold row that shares
one rare word with the query would outrank a warm row that shares most of it. Dividing a row's score
by the query's weight in its tier (the sum of its terms' IDF there, a term no row holds weighing most)
scores it as the share of the query it matches, by that tier's measure: the order within a tier
stays as BM25 gives it, and the tiers meet on one scale.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

K1 = 1.2
B = 0.75


def idf(live: int, having: int) -> float:
    """Inverse document frequency of a term that `having` of `live` rows hold (Lucene's, never negative)."""
    return math.log(1.0 + (live - having + 0.5) / (having + 0.5))


def norms(lengths: np.ndarray, average: float) -> np.ndarray:
    """Each row's share of BM25's denominator by its length: K1 * (1 - B + B * length / average)."""
    return K1 * (1.0 - B + B * lengths / average)


def add(scores: np.ndarray, rows: np.ndarray, counts: np.ndarray, norm: np.ndarray, weight: float) -> None:
    """Add one term's BM25 contribution (its IDF `weight`) to the `rows` that hold it `counts` times, `norm`
    being those rows' `norms`. Each row once (a posting list): gathered and put back by np.take and np.put,
    which do what `scores[rows] +=` does, faster."""
    np.put(scores, rows, np.take(scores, rows) + weight * counts * (K1 + 1.0) / (counts + norm))


class Norms:
    """The `norms` of a tier's rows, made again only when its positions, live rows or total length changed:
    a query's terms then gather them instead of working them out from the lengths of every row holding one.

    Sound while a position's length never changes, as in both indexes: rows are appended at new positions
    and a repack starts a new Norms. The values are those `norms` gives row by row, bit for bit.
    """

    def __init__(self) -> None:
        self._key: tuple[int, int, float] | None = None
        self._values = np.zeros(0, dtype=np.float32)

    def of(self, lengths: np.ndarray, size: int, live: int, length_sum: float) -> np.ndarray:
        key = (size, live, length_sum)
        if key != self._key:
            self._values = norms(lengths[:size], length_sum / live)
            self._key = key
        return self._values


def query_weight(live: int, having: Iterable[int]) -> float:
    """The query's weight in a tier of `live` rows: the IDF of each of its terms, `having` rows holding each."""
    return sum(idf(live, count) for count in having)
