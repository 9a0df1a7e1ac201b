"""What a search reads of the cold tier: all from the cold index in memory, never from the table.

A search asks the cold index for its hits by meaning and by words (`search`), then, from those same hits,
the rows stored beside them (`neighbours`), the ids it did not find that ranking asks for (`lookup`), the
long ones' pieces (`pieces`), and at the end the few records that rank, in full (`records`). The hits
point into the index as it was searched, so the later reads hold its guard and read that same index.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from tiers.index.cold import ColdScope
from tiers.index.hits import ColdHits, Found
from tiers.index.indexes import Indexes
from tiers.records import Record
from tiers.text.timeparse import as_utc

__all__ = ["ColdHits", "ColdReads", "ColdScope", "Found", "cold_scope"]


class ColdReads:
    """The cold tier of one namespace as a search reads it, through the cold index of `indexes`."""

    def __init__(self, indexes: Indexes) -> None:
        self.indexes = indexes

    def search(
        self, vectors: np.ndarray, terms: Sequence[str], k: int, scope: ColdScope, pieces: bool = True
    ) -> ColdHits | None:
        """Search the cold tier's index by meaning and by words (`pieces`: long rows by their best piece too);
        None while nothing was ever sent cold."""
        if not self.indexes.cold_loaded() and not self.indexes.cold_table.count():
            return None  # not even the index is loaded
        with self.indexes.cold() as index:
            return index.search(vectors, list(terms), k, scope, pieces)

    def pieces(self, ids: Sequence[str]) -> dict[str, np.ndarray | None]:
        """The piece vectors of these cold records (None: a short one, or one stored before pieces were kept)."""
        with self.indexes.cold_as_loaded() as index:
            if index is None:
                return {}
            return {rid: index.pieces.of(p) if (p := index.position(rid)) >= 0 else None for rid in ids}

    def lookup(self, hits: ColdHits, ids: Sequence[str]) -> Found:
        """Cold ids the search did not find (a hit's neighbours), scored as it scored its own rows."""
        with self.indexes.cold_as_loaded():
            return hits.lookup(ids)

    def neighbours(self, hits: ColdHits, rows: np.ndarray) -> Found:
        """The cold rows stored just before and after these rows the search found, scored as it scored them."""
        with self.indexes.cold_as_loaded():
            return hits.neighbours(rows)

    def records(self, ids: Sequence[str], hints: Sequence[int] | None = None) -> list[Record]:
        """Cold records in full (those a recall returns), from the cold index: no read of the table.

        Fewer than asked when one left cold since the search that found it; `hints`: where the search found
        each one in the cold index.
        """
        if not ids:
            return []
        with self.indexes.cold() as index:
            return index.records(ids, hints)


def cold_scope(tags: Sequence[str], since: datetime | None, until: datetime | None) -> ColdScope:
    """What a cold search may return: rows with one of these tags, of a time in this span."""
    return ColdScope(tuple(tags), _micros(since), _micros(until))


def _micros(value: datetime | None) -> int | None:
    return None if value is None else int(as_utc(value).timestamp() * 1_000_000)
