"""Opening a store for writing: finish what a crash left half done, and bring a store of the old layout over.

A move between the tiers copies the rows, then deletes them from where they were, noted in the ledger
before and after; a write notes its records in the change feed before it writes the table. A crash
between the two steps of either leaves a note, and this finishes it: a move whose rows reached their
tier is completed and one whose rows did not is dropped, and the records of a cut-short write are read
again by every process. A folder from before the tiers were split (one table) is copied into two.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from tiers.index.indexes import Indexes
from tiers.index.meta import SCHEMA_VERSION, read_meta, write_meta
from tiers.records import Tier
from tiers.storage.tables import schema
from tiers.text.terms import document_terms
from tiers.text.timeparse import as_utc

log = logging.getLogger(__name__)


class Recovery:
    """What a crash or an old layout left in one namespace's store, finished when it is opened for writing."""

    def __init__(self, indexes: Indexes, legacy: Any, compact: Callable[[], None]) -> None:
        """`legacy`: the connection holding the single table of a store made before the tiers were split
        (schema 1), None when there is none; `compact`: the store's compaction, what a sweep does after moves."""
        self.indexes = indexes
        self._legacy = legacy
        self._compact = compact

    def recover(self) -> None:
        """Finish what a crash left half done (tier moves, the compaction after them); bring a schema-1 table over.

        The caller holds the data folder's write lock.
        """
        if self._legacy is not None:
            self._migrate_legacy()
        self.recover_writes()
        ledger = self.indexes.ledger
        pending = ledger.pending_moves()
        if not pending:
            return
        done, undone = [], []
        for move in pending:
            dst = self.indexes.table(Tier(move.dst))
            src = self.indexes.table(Tier(move.src))
            if dst.get([move.rid], ["id"]).num_rows:
                src.delete([move.rid])
                done.append(move)
            else:
                undone.append(move.rid)
        ledger.changed([m.rid for m in pending])
        ledger.finish_moves(done, undone)
        log.warning("finished %d tier moves and dropped %d that a crash interrupted", len(done), len(undone))
        self._compact()  # what the interrupted sweep would have done next

    def recover_writes(self) -> None:
        """Feed the records a write killed before its feed entry left changed (`Ledger.intend`). Under the lock."""
        self.indexes.intend([], None)

    def _migrate_legacy(self) -> None:
        """Copy the rows of the single schema-1 table into the warm and cold tables, then drop it."""
        assert self._legacy is not None
        indexes = self.indexes
        old = self._legacy.open_table("memories")
        warm_ids, cold_ids = indexes.warm_table.ids(), indexes.cold_table.ids()  # a migration cut short goes on
        for batch in old.to_lance().to_batches(batch_size=5_000):
            rows = batch.to_pylist()
            for row in rows:
                row["terms"] = document_terms(row["content"], as_utc(row["occurred_at"]))
                row["before"], row["after"] = [], []
            for tier, table, have in (
                (Tier.WARM, indexes.warm_table, warm_ids),
                (Tier.COLD, indexes.cold_table, cold_ids),
            ):
                chosen = [r for r in rows if r["tier"] == tier.value and r["id"] not in have]
                table.add(pa.Table.from_pylist(chosen, schema=schema(indexes.dim)))
        self._legacy.drop_table("memories")
        self._legacy = None
        meta = read_meta(indexes.folder / "store.json") | {"schema": SCHEMA_VERSION}
        write_meta(indexes.folder / "store.json", meta)
        indexes.ledger.changed(["*"])
        log.warning("moved the memories of %s into separate warm and cold tables", indexes.folder)
