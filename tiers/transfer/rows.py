"""The one place where export and import touch storage below `Memory`: rows with their vectors, the ledger, the profile.

Everything else in tiers/transfer/jsonl.py speaks in plain rows (the store's columns as a dict, `metadata` a JSON
string, times aware datetimes, `vector` a list of floats) and in ledger values. When the storage changes
(warm and cold in separate tables, say), these functions are the ones to repoint.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from tiers.index.warm import Row
from tiers.memory import Memory
from tiers.records import record_from_dict
from tiers.storage.hot import Entry
from tiers.storage.ledger import Move, Usage
from tiers.storage.locking import file_lock
from tiers.storage.tables import RECORD_COLUMNS
from tiers.text.terms import document_terms


def read_rows(memory: Memory, vectors: bool) -> list[dict[str, Any]]:
    """Every warm and cold record as a store row, with its `vector` when asked, oldest first."""
    columns = [*RECORD_COLUMNS, "hash", *(["vector"] if vectors else [])]
    rows = [
        row
        for table in (memory.store.warm_table, memory.store.cold_table)
        for batch in table.scan(columns)
        for row in batch.to_pylist()
    ]
    rows.sort(key=lambda row: (row["created_at"], row["id"]))
    return rows


def stored_hashes(memory: Memory, hashes: Sequence[str]) -> dict[str, str]:
    """The stored record id of each content hash already in the namespace."""
    return {h: rid for h, (rid, _) in memory.store.find_hashes(list(hashes)).items()}


class RowWriter:
    """Inserts rows exactly as given (ids, tiers, times), while the namespace's write lock is held."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._written = 0

    def stored_hashes(self, hashes: Sequence[str]) -> dict[str, str]:
        return stored_hashes(self._memory, hashes)

    def taken_ids(self, ids: Sequence[str]) -> set[str]:
        return set(self._memory.store.get(list(ids)))

    def insert(self, rows: list[dict[str, Any]]) -> None:
        """Store rows exactly as exported (ids, tiers, times), each in the table of its tier."""
        if rows:
            self._memory.store.restore([row_from_dict(row) for row in rows])
            self._written += len(rows)

    def supersede(self, rid: str, by: str, at: datetime | None) -> None:
        record = self._memory.store.get([rid]).get(rid)
        if record is not None:
            self._memory.store.update([record], {"superseded_by": by, "superseded_at": at})

    def _finish(self) -> None:
        if self._written:
            total = self._memory.ledger.bump("rows_written", self._written)
            self._memory.store.after_write(total - self._written, total)


@contextmanager
def writing(memory: Memory) -> Iterator[RowWriter]:
    """Hold the write lock for one batch: its dedupe check and its insert never interleave with another writer."""
    with file_lock(memory.folder / "write.lock"):
        writer = RowWriter(memory)
        yield writer
        writer._finish()


@dataclass(frozen=True)
class LedgerRows:
    """The ledger of a namespace: the move log (oldest first), provenance links, use counters."""

    moves: list[Move]
    provenance: list[tuple[str, str, str]]
    uses: dict[str, Usage]


def read_ledger(memory: Memory) -> LedgerRows:
    return LedgerRows(memory.ledger.all_moves(), memory.ledger.all_provenance(), memory.ledger.usage())


def write_ledger(memory: Memory, ledger: LedgerRows) -> int:
    """Merge ledger rows in without duplicates; how many moves were new."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    for key, rid, value in ledger.provenance:
        by_key.setdefault(key, []).append((rid, value))
    for key, links in by_key.items():
        memory.ledger.link(key, links)
    memory.ledger.restore_uses(ledger.uses)
    return memory.ledger.restore_moves(ledger.moves)


def read_profile(memory: Memory) -> dict[str, Entry]:
    return memory.hot.entries()


@contextmanager
def editing_profile(memory: Memory) -> Iterator[dict[str, Entry]]:
    """The profile's entries to change in place, written back atomically (the cap checked) when the block ends."""
    with memory.hot.editing() as entries:
        yield entries


def profile_fits(memory: Memory, before: dict[str, Entry], after: dict[str, Entry]) -> bool:
    return memory.hot.tokens(after) <= memory.hot.cap_tokens or memory.hot.tokens(after) <= memory.hot.tokens(before)


def row_from_dict(row: dict[str, Any]) -> Row:
    record = record_from_dict({"before": None, "after": None, **row})
    vector = np.asarray(row["vector"], dtype=np.float32)
    terms = document_terms(record.content, record.occurred_at)
    pieces = None if row.get("pieces") is None else np.asarray(row["pieces"], dtype=np.float32)
    links = tuple(row.get("before") or ()), tuple(row.get("after") or ())
    return Row(record, row["hash"], terms, vector, *links, pieces=pieces)
