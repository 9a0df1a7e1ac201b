"""Rows of the warm tier: a record with what it is found by, and the warm index's rows made when asked for.

When a process opens the warm tier, every row is read in bulk into Arrow (`Rows.base`) and a row's
record is made only when something asks for it (a recall's hits, a sweep). Rows written since are kept
as given until they are a share of the base, then folded into it: a process that wrote a large tier holds
its rows as compactly as one that read it. A row the index keeps holds neither its vector nor its pieces:
those are the index's, in its matrices, and are held once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.index.pieces import Pieces
from tiers.records import Record, records_of
from tiers.storage.tables import PIECES, RECORD_COLUMNS, schema
from tiers.text.terms import document_terms

_NO_VECTOR = np.zeros(0, dtype=np.float32)  # the vector of a row the index keeps: its own is in the index
FOLD_FROM = 4_096  # written rows kept as objects before they are folded into the base (and a share of it)
FOLD_SHARE = 8  # folded once they are more than 1/FOLD_SHARE of the base's rows
BASE_COLUMNS = [*RECORD_COLUMNS, "hash", "terms"]  # what the base holds of each row, as a full read reads it
_BASE_SCHEMA = pa.schema([schema(1).field(name) for name in BASE_COLUMNS])


@dataclass(frozen=True)
class Row:
    """A record with what it is found by: its content hash, terms and vector, and its stored neighbours."""

    record: Record
    hash: str
    terms: str
    vector: np.ndarray
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    pieces: np.ndarray | None = None  # a long memory's pieces' vectors (tiers/index/pieces.py); None: read whole


def new_row(record: Record, digest: str, vector: np.ndarray, pieces: np.ndarray | None = None) -> Row:
    """A record to be written, with what it is found by: its terms are made from its text and time."""
    return Row(record, digest, document_terms(record.content, record.occurred_at), vector, pieces=pieces)


def micros(record: Record) -> tuple[int, int]:
    return int(record.occurred_at.timestamp() * 1_000_000), int(record.created_at.timestamp() * 1_000_000)


def rows_of(table: pa.Table, vectors: np.ndarray | None = None) -> list[Row]:
    """Rows of a tier table (any subset of its columns with the record columns, and the vector or `vectors`)."""
    if not table.num_rows:
        return []
    names = set(table.column_names)
    vectors = vectors_of(table) if vectors is None else vectors
    terms = table["terms"].to_pylist() if "terms" in names else [""] * table.num_rows
    hashes = table["hash"].to_pylist() if "hash" in names else [""] * table.num_rows
    links = zip(table["before"].to_pylist(), table["after"].to_pylist(), strict=True)
    pieces = pieces_of(table)
    return [
        Row(record, hashes[i], terms[i] or "", vectors[i], tuple(before or ()), tuple(after or ()), pieces.get(i))
        for i, (record, (before, after)) in enumerate(zip(records_of(table), links, strict=True))
    ]


def pieces_of(table: pa.Table) -> dict[int, np.ndarray]:
    """Each row's piece vectors where it has some (its `pieces` column), by row number."""
    if PIECES not in table.column_names:
        return {}
    found = Pieces(table.schema.field(PIECES).type.value_type.list_size)
    found.add_column(table[PIECES], 0)
    owners = np.unique(found.owner[: found.count])
    return {int(row): found.of(int(row)) for row in owners}  # type: ignore[misc]


def vectors_of(table: pa.Table) -> np.ndarray:
    """The `vector` column as a float32 matrix."""
    flat = table["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.float32).reshape(table.num_rows, -1)


def field_arrays(rows: Sequence[Row], full: pa.Schema) -> list[pa.Array]:
    """The columns of `full` but the vector and the pieces, made from these rows, in its order."""
    records = [row.record for row in rows]
    columns = {
        "id": [r.id for r in records],
        "hash": [row.hash for row in rows],
        "content": [r.content for r in records],
        "tier": [r.tier.value for r in records],
        "kind": [r.kind.value for r in records],
        "protected": [r.protected for r in records],
        "tags": [list(r.tags) for r in records],
        "metadata": [json.dumps(r.metadata, ensure_ascii=False) for r in records],
        "source": [r.source for r in records],
        "occurred_at": [r.occurred_at for r in records],
        "created_at": [r.created_at for r in records],
        "forget_after": [r.forget_after for r in records],
        "superseded_by": [r.superseded_by for r in records],
        "superseded_at": [r.superseded_at for r in records],
        "before": [list(row.before) for row in rows],
        "after": [list(row.after) for row in rows],
        "terms": [row.terms for row in rows],
    }
    return [pa.array(columns[f.name], type=f.type) for f in full if f.name not in ("vector", PIECES)]


class Rows:
    """The warm rows by position, as the index keeps them: those of the load in Arrow until asked for, those
    made since (asked for, written, or given new fields) as objects without their vectors."""

    def __init__(self) -> None:
        self.base: pa.Table | None = None  # the rows of the first positions, without their vectors and pieces
        self.made: dict[int, Row] = {}
        self._written = 0  # rows put past the base since it was last extended

    def load(self, table: pa.Table) -> None:
        self.base = table

    def put(self, position: int, row: Row) -> None:
        """Keep a written row (its vector and pieces are the index's from now on)."""
        self.made[position] = replace(row, vector=_NO_VECTOR, pieces=None)
        self._written += 1
        if self._written > max(FOLD_FROM, self.size // FOLD_SHARE):
            self._fold(position + 1)

    @property
    def size(self) -> int:
        """The positions the base holds."""
        return 0 if self.base is None else self.base.num_rows

    def _fold(self, end: int) -> None:
        """Append the rows made past the base, up to position `end`, to the base as Arrow. Only when every one of
        those positions is made: a removed one among them waits for the next repack."""
        start = self.size
        self._written = 0
        made = [self.made.get(position) for position in range(start, end)]
        rows = [row for row in made if row is not None]
        if len(rows) < len(made):
            return
        schema = self.base.schema if self.base is not None else None
        full = _BASE_SCHEMA if schema is None else schema
        added = pa.Table.from_arrays(field_arrays(rows, full), schema=full)
        self.base = added if self.base is None else pa.concat_tables([self.base, added]).combine_chunks()
        for position in range(start, end):
            del self.made[position]

    def drop(self, position: int) -> None:
        self.made.pop(position, None)

    def kept(self, position: int) -> Row:
        """The row at a live position, made from the load if it was not yet."""
        row = self.made.get(position)
        if row is None:
            self.make([position])
            row = self.made[position]
        return row

    def make(self, positions: Iterable[int]) -> None:
        """Make the rows of these live positions of the load that are not made yet, in one pass."""
        if self.base is None:
            return
        made, base = self.made, self.base.num_rows
        missing = sorted({p for p in positions if p not in made and p < base})
        for position, row in zip(missing, self.from_base(missing), strict=True):
            made[position] = row

    def from_base(self, positions: list[int]) -> list[Row]:
        """The rows of the load at these positions, made and not kept (without their vectors)."""
        if not positions:
            return []
        assert self.base is not None
        return rows_of(self.base.take(pa.array(positions, pa.int64())), np.zeros((len(positions), 0), np.float32))

    def tagged(self, tags: Iterable[str], size: int) -> np.ndarray:
        """Positions holding any of these tags: the load's rows read from its tag lists (not made one by one),
        then every row made since (added, or its fields replaced), from its record."""
        wanted = list(dict.fromkeys(tags))
        out = np.zeros(size, dtype=bool)
        if self.base is not None and self.base.num_rows:
            lists = self.base["tags"].combine_chunks()
            hit = pc.is_in(pc.list_flatten(lists), value_set=pa.array(wanted, pa.string()))
            rows = pc.list_parent_indices(lists).filter(hit).to_numpy(zero_copy_only=False)
            out[rows.astype(np.int64)] = True
        wanted_set = set(wanted)
        for position, row in self.made.items():
            out[position] = bool(wanted_set.intersection(row.record.tags))
        return out
