"""The two tables of a namespace and the index in memory of each, kept in step through the ledger's change feed.

Every process reads the same tables; each keeps its own indexes. A write notes the records it is about to
change in the feed before it writes (`intend`: a write killed between the two is read again), then the
change once written (`changed`), applying it at once to this process's indexes; another process picks it
up from the feed at its next read (tiers/index/synced.py). The store's reads, its writes, the cold reads
of a search and the pieces backfill all go through this one object, so the guards are taken in one order.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from tiers.index.cold import COLUMNS as COLD_COLUMNS
from tiers.index.cold import ColdIndex
from tiers.index.saved import open_cold, open_warm, save_cold, save_warm
from tiers.index.synced import Kind, Synced
from tiers.index.warm import WarmIndex, rows_of
from tiers.records import Tier
from tiers.storage.ledger import Ledger
from tiers.storage.tables import PIECES, RECORD_COLUMNS, Table

log = logging.getLogger(__name__)

ROW_COLUMNS = [*RECORD_COLUMNS, "hash", "terms", "vector", PIECES]


def _read_warm(table: Table) -> WarmIndex:
    index = WarmIndex(table.dim)
    batches = list(table.scan(ROW_COLUMNS))
    if batches:
        index.load(pa.Table.from_batches(batches))
    return index


def _warm_catch_up(index: WarmIndex, table: Table, changed: set[str]) -> None:
    """Read again the warm rows another process changed (present ones replace, absent ones leave)."""
    rows = rows_of(table.get(sorted(changed), ROW_COLUMNS))
    index.remove(changed)
    index.put(rows)


def _read_cold(table: Table) -> ColdIndex:
    index = ColdIndex(table.dim)
    index.load(table.scan(COLD_COLUMNS, batch=50_000))
    return index


def _cold_catch_up(index: ColdIndex, table: Table, changed: set[str]) -> None:
    """Read again the cold rows another process changed (present ones replace, absent ones leave).

    When the saved copy this index maps was removed meanwhile (a forget: it held the forgotten
    words), the index lets go of its file and of the fields of the rows that left.
    """
    rows = table.get(sorted(changed), COLD_COLUMNS)
    index.remove(changed)
    index.put(rows)
    if index.mapped_from is not None and not index.mapped_from.exists():
        index.detach()


WARM = Kind(_read_warm, save_warm, open_warm, _warm_catch_up)
COLD = Kind(_read_cold, save_cold, open_cold, _cold_catch_up, mapped=True)


class Indexes:
    """The warm and cold tables of one namespace with their indexes in memory, bound to one embedding model."""

    def __init__(self, folder: Path, model: str, dim: int, ledger: Ledger, warm: Table, cold: Table) -> None:
        self.folder = folder
        self.model = model
        self.dim = dim
        self.ledger = ledger
        self.warm_table = warm
        self.cold_table = cold
        # Each tier's index, and where the last full read of it is saved for the next process. The warm keeper's
        # guard is taken before the cold one's when both are held, never after.
        self._warm = Synced(Tier.WARM, warm, ledger, folder / "warm-index", WARM, partial(self._stamp, warm))
        self._cold = Synced(Tier.COLD, cold, ledger, folder / "cold-index", COLD, partial(self._stamp, cold))

    def table(self, tier: Tier) -> Table:
        return self.cold_table if tier is Tier.COLD else self.warm_table

    def close(self) -> None:
        """Let go of the in-memory indexes; the tables stay as they are."""
        with self._warm.guard, self._cold.guard:
            self._warm.close()
            self._cold.close()

    @contextmanager
    def warm(self) -> Iterator[WarmIndex]:
        """The warm index as every process has written it, held still while the caller reads it."""
        with self._warm.guard:
            yield self._warm.current()

    @contextmanager
    def cold(self) -> Iterator[ColdIndex]:
        """The cold index as every process has written it, held still while the caller reads it."""
        with self._cold.guard:
            yield self._cold.current()

    @contextmanager
    def cold_as_loaded(self) -> Iterator[ColdIndex | None]:
        """The cold index as this process last brought it up to date (None: never read), held still: for what
        a search found in it, which must be read from the same index."""
        with self._cold.guard:
            yield self._cold.index

    def cold_loaded(self) -> bool:
        """Whether this process has read the cold index (an unguarded look: a hint of whether cold is empty)."""
        return self._cold.index is not None

    def warm_up(self) -> None:
        """Read the warm tier and, when it has rows, the cold tier's index, as the first search would."""
        with self.warm() as index:
            index.prepare()
        if self._cold.index is None and self.cold_table.count():
            with self.cold():
                pass

    def _stamp(self, table: Table) -> dict[str, object]:
        """What a saved copy of an index must match to be read: its layout, its table, the model."""
        return {"format": 4, "table": table.name, "where": table.where, "model": self.model}

    def drop_saved(self) -> None:
        """Remove the saved copies of both indexes (they hold the words of every record they were made from)."""
        shutil.rmtree(self._cold.saved, ignore_errors=True)
        shutil.rmtree(self._warm.saved, ignore_errors=True)

    def intend(self, rids: Sequence[str], tier: Tier | None) -> None:
        """Note the records a write is about to change, before it writes the table; caller holds the lock."""
        left = self.ledger.intend(rids, None if tier is None else tier.value)
        if left:
            log.warning(
                "a write to %s was cut short before its change feed entry: %d records read again", self.folder, left
            )

    def changed(
        self,
        rids: Sequence[str],
        tier: Tier | None,
        warm: Callable[[WarmIndex], Any] | None = None,
        cold: Callable[[ColdIndex], Any] | None = None,
    ) -> None:
        """Note a change of records in the feed (for `tier`'s index; None: both) and apply it to this process's.

        An index given no change to apply, or not loaded yet, picks the change up from the feed when next read.
        """
        with self._warm.guard, self._cold.guard:
            if warm is not None:
                self._warm.current()
            if cold is not None and self._cold.index is not None:
                self._cold.current()
            warm_before, cold_before = self._warm.seen, self._cold.seen
            newest = self.ledger.changed(rids, None if tier is None else tier.value)
            count = len(set(rids))
            self._warm.applied(warm, warm_before, newest, count)
            self._cold.applied(cold, cold_before, newest, count)

    def changed_all(self) -> None:
        """Note that every record may have changed: every process reads both tiers again at its next read."""
        with self._warm.guard:
            self.ledger.changed(["*"])
