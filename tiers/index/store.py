"""The warm and cold tiers of one namespace: two LanceDB tables, each with an index in memory, read and
written as one.

Warm is small and mirrored whole, searched exactly (tiers/index/warm.py); of cold, compact codes and the
records' fields are held (tiers/index/cold.py; mapped from a saved copy once it is large), its vectors
stay on disk (or object storage), so a recall reads neither table. Both indexes are kept current
row by row from a change feed in the ledger (tiers/index/indexes.py), so no write, move or compaction costs
work in proportion to the store. A full read of a large tier saves a copy of its index, which the next
process opens and brings up to date from the feed instead of reading the table again (a forget
removes both copies, as they hold its words). A move between the tiers copies the rows, then
deletes them from where they were; a crash in between is finished when the store is next opened
for writing (tiers/index/recovery.py).

`Store` is the facade the namespace holds: the tables, their indexes, every write and the reads by id or by
vector. Its other jobs are its parts, on the same indexes: `recovery` (opening for writes), `cold_reads`
(what a search reads of cold) and `unpieced` (the pieces backfill); store.json is read in tiers/index/meta.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute

from tiers.index.cold import COLUMNS as COLD_COLUMNS
from tiers.index.cold import ColdIndex
from tiers.index.cold_reads import ColdReads, cold_scope
from tiers.index.columns import pieces_column, rows_table, stored_values, vector_column
from tiers.index.indexes import Indexes
from tiers.index.meta import check_model
from tiers.index.recovery import Recovery
from tiers.index.rows import new_row
from tiers.index.unpieced import Unpieced
from tiers.index.warm import Row, WarmIndex, rows_of
from tiers.records import Record, Tier
from tiers.storage.ledger import Ledger, Move
from tiers.storage.tables import RECORD_COLUMNS, Connection, Table, check_id

_HIT_COLUMNS = [*RECORD_COLUMNS, "hash", "vector"]

__all__ = ["Store", "check_id", "new_row", "pieces_column", "vector_column"]


class Store:
    """The warm and cold tables of one namespace and their indexes, bound to one embedding model: every write,
    applied to the indexes as it is made, and the reads by id and by vector."""

    def __init__(
        self,
        folder: Path,
        model: str,
        dim: int,
        ledger: Ledger,
        *,
        cold_uri: str | None = None,
        storage_options: dict[str, str] | None = None,
        compact_every: int = 100,
    ) -> None:
        self.folder = folder
        self.ledger = ledger
        self.compact_every = compact_every
        folder.mkdir(parents=True, exist_ok=True)
        self.read_lock = folder / "read.lock"
        meta = check_model(folder, model, dim, cold_uri)
        local_uri = str(folder / "lance")
        local = Connection(local_uri)  # LanceDB is connected (and imported) at the first write
        names = meta.get("tables", {"warm": "warm", "cold": "cold"})
        self.warm_table = Table(local, names["warm"], dim, local_uri, self.read_lock, indexed=False)
        cold_db = Connection(cold_uri, storage_options) if cold_uri else local
        self.cold_table = Table(cold_db, names["cold"], dim, cold_uri or local_uri, self.read_lock, indexed=True)
        # The single table of a store made before the tiers were split (schema 1), moved over by `recover`.
        legacy = local() if (folder / "lance" / "memories.lance").is_dir() else None
        self.indexes = Indexes(folder, model, dim, ledger, self.warm_table, self.cold_table)
        self.recovery = Recovery(self.indexes, legacy, self.compact)
        self.cold_reads = ColdReads(self.indexes)
        self.unpieced = Unpieced(self.indexes)

    @property
    def model(self) -> str:
        return self.indexes.model

    @property
    def dim(self) -> int:
        return self.indexes.dim

    def close(self) -> None:
        """Let go of the in-memory indexes; the tables stay as they are."""
        self.indexes.close()

    def table(self, tier: Tier) -> Table:
        return self.indexes.table(tier)

    def warm(self) -> AbstractContextManager[WarmIndex]:
        """The warm index as every process has written it, held still while the caller reads it."""
        return self.indexes.warm()

    def cold(self) -> AbstractContextManager[ColdIndex]:
        """The cold index as every process has written it, held still while the caller reads it."""
        return self.indexes.cold()

    # reads

    def get(self, ids: Sequence[str]) -> dict[str, Record]:
        for rid in ids:
            check_id(rid)
        out: dict[str, Record] = {}
        with self.warm() as index:
            for rid in ids:
                row = index.get(rid)
                if row is not None:
                    out[rid] = row.record
        rest = [rid for rid in dict.fromkeys(ids) if rid not in out]
        if rest:
            for row in rows_of(self.cold_table.get(rest, _HIT_COLUMNS)):
                out[row.record.id] = row.record
        return out

    def find_hashes(self, hashes: Sequence[str]) -> dict[str, tuple[str, Tier]]:
        """Stored ids and tiers of the given content hashes."""
        found: dict[str, tuple[str, Tier]] = {}
        with self.warm() as index:
            for digest in hashes:
                rid = index.by_hash.get(digest)
                if rid is not None:
                    found[digest] = (rid, Tier.WARM)
        rest = [h for h in dict.fromkeys(hashes) if h not in found]
        if rest and self.cold_table.count():
            for digest, rid in self.cold_table.find_hashes(rest).items():
                found[digest] = (rid, Tier.COLD)
        return found

    def count(self, tier: Tier | None = None) -> int:
        if tier is Tier.WARM:
            with self.warm() as index:
                return index.live
        if tier is Tier.COLD:
            return self.cold_table.count()
        return self.count(Tier.WARM) + self.count(Tier.COLD)

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of these live records (a cold one's as its int8 code gives it), by id."""
        out: dict[str, np.ndarray] = {}
        with self.warm() as index:
            for rid in ids:
                position = index.positions.get(rid)
                if position is not None and index.alive[position]:
                    out[rid] = index.vectors[position].copy()
        rest = [rid for rid in dict.fromkeys(ids) if rid not in out]
        if rest and (self.indexes.cold_loaded() or self.cold_table.count()):
            with self.cold() as cold:
                for rid in rest:
                    if (position := cold.position(rid)) >= 0:
                        out[rid] = cold.codes[position].astype(np.float32) * cold.scale[position]
        return out

    def common_terms(self, terms: Sequence[str], share: float, least: int) -> set[str]:
        """The terms more than `share` of the warm rows hold, once at least `least` are: words that say nothing
        of what one memory is about (a speaker's name on every turn)."""
        with self.warm() as index:
            return index.common(terms, share, least)

    def nearest(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """For each of these unit vectors, the `k` live records nearest it by meaning in each tier, with cosines."""
        vectors = np.atleast_2d(vectors).astype(np.float32)
        out: list[list[tuple[str, float]]] = [[] for _ in vectors]
        with self.warm() as index:
            if index.live:
                # A product over the stored matrix as it is (a slice, not a copy of the live rows), dead rows last.
                cosines = index.vectors[: index.size] @ vectors.T
                cosines[~index.alive[: index.size]] = -np.inf
                take = min(k, index.live)
                for row, column in enumerate(cosines.T):
                    best = np.argpartition(-column, take - 1)[:take] if take < len(column) else np.arange(len(column))
                    best = best[np.argsort(-column[best], kind="stable")]
                    out[row] += [(rid, float(column[p])) for p in best if (rid := index.id_at(int(p)))]
        if self.indexes.cold_loaded() or self.cold_table.count():
            scope = cold_scope((), None, None)
            for row, vector in enumerate(vectors):
                with self.cold() as cold:
                    found = cold.search(vector, [], k, scope, False).found
                order = np.argsort(-found.cosine, kind="stable")[:k]
                out[row] += [(found.ids[i], float(found.cosine[i])) for i in order]
        return out

    def lifecycle_rows(self, ids: Iterable[str] = ()) -> list[dict[str, Any]]:
        """What the tier rules read: every warm record, and those cold records named (the recalled ones)."""
        out = []
        with self.warm() as index:
            for row in index.live_rows():
                out.append(_lifecycle(row.record))
            wanted = [rid for rid in dict.fromkeys(ids) if rid not in index.positions]
        for start in range(0, len(wanted), 5_000):
            for record in self.get(wanted[start : start + 5_000]).values():
                out.append(_lifecycle(record))
        return out

    # writes: callers hold the data folder's write lock

    def add(self, rows: list[Row]) -> None:
        """Add new records to the warm tier, as one LanceDB write."""
        if not rows:
            return
        self.indexes.intend([r.record.id for r in rows], Tier.WARM)
        self.warm_table.add(rows_table(rows, self.dim))
        self.indexes.changed([r.record.id for r in rows], Tier.WARM, warm=lambda index: index.put(rows))

    def load(self, rows: pa.Table) -> None:
        """Bulk-load rows of the tier schema as they are (a benchmark's fill), each into the table of its tier.

        Every process reloads its warm index afterwards, once: cheaper than a feed entry per row.
        """
        for tier in (Tier.WARM, Tier.COLD):
            chosen = rows.filter(pa.compute.equal(rows["tier"], tier.value))
            if chosen.num_rows:
                self.table(tier).add(chosen)
        self.indexes.changed_all()

    def restore(self, rows: list[Row]) -> None:
        """Add records exactly as given (ids, tiers, times: an import), each to the table of its tier."""
        for tier in (Tier.WARM, Tier.COLD):
            chosen = [r for r in rows if r.record.tier is tier]
            if not chosen:
                continue
            table = rows_table(chosen, self.dim)
            ids = [r.record.id for r in chosen]
            self.indexes.intend(ids, tier)
            self.table(tier).add(table)
            if tier is Tier.WARM:
                self.indexes.changed(ids, tier, warm=partial(WarmIndex.put, rows=chosen))
            else:
                self.indexes.changed(ids, tier, cold=partial(ColdIndex.put, table=table.select(COLD_COLUMNS)))

    def update(self, records: Sequence[Record], values: dict[str, Any]) -> None:
        """Set the same field values on these records, wherever they are, one write per tier."""
        for tier in (Tier.WARM, Tier.COLD):
            chosen = [r for r in records if r.tier is tier]
            if not chosen:
                continue
            self.indexes.intend([r.id for r in chosen], tier)
            self.table(tier).update([r.id for r in chosen], stored_values(values))
            if tier is Tier.WARM:
                changed = [replace(r, **values) for r in chosen]
                replaced = lambda index, c=changed: [index.replace_record(r) for r in c]  # noqa: E731
                self.indexes.changed([r.id for r in chosen], tier, warm=replaced)
            else:  # the cold index reads the rows again when next searched
                self.indexes.changed([r.id for r in chosen], tier)

    def move(self, moves: Sequence[Move]) -> None:
        """Move records to another tier: copy, then delete where they were; logged when both are done."""
        if not moves:
            return
        self.ledger.begin_moves(moves)
        for src in (Tier.WARM, Tier.COLD):
            chosen = [m for m in moves if m.src == src.value and m.dst != src.value]
            if not chosen:
                continue
            dst = Tier.COLD if src is Tier.WARM else Tier.WARM
            ids = [m.rid for m in chosen]
            rows = self.table(src).get(ids)
            if src is Tier.WARM:
                rows = self._with_neighbours(rows)
            rows = rows.set_column(rows.schema.get_field_index("tier"), "tier", pa.array([dst.value] * rows.num_rows))
            self.table(dst).add(rows)
            self.table(src).delete(ids)
            if dst is Tier.WARM:
                added = rows_of(rows)
                warm, cold = partial(WarmIndex.put, rows=added), partial(ColdIndex.remove, ids=ids)
                self.indexes.changed(ids, None, warm=warm, cold=cold)
            else:
                moved = rows.select(COLD_COLUMNS)
                warm, cold = partial(WarmIndex.remove, ids=ids), partial(ColdIndex.put, table=moved)
                self.indexes.changed(ids, None, warm=warm, cold=cold)
        self.ledger.finish_moves(moves)

    def _with_neighbours(self, rows: pa.Table) -> pa.Table:
        """Rows leaving warm carry their episode neighbours' ids, so cold can lend to them without an index."""
        before, after = rows["before"].to_pylist(), rows["after"].to_pylist()
        with self.warm() as index:
            for i, rid in enumerate(rows["id"].to_pylist()):
                if rid in index.positions:
                    near_before, near_after = index.neighbours(rid, 2)
                    before[i] = list(near_before) or before[i] or []
                    after[i] = list(near_after) or after[i] or []
        rows = rows.set_column(rows.schema.get_field_index("before"), "before", pa.array(before, pa.list_(pa.string())))
        return rows.set_column(rows.schema.get_field_index("after"), "after", pa.array(after, pa.list_(pa.string())))

    def delete(self, record: Record) -> None:
        """Delete a record for good: its table is rewritten so that no file, version or index keeps it."""
        table = self.table(record.tier)
        other = Tier.COLD if record.tier is Tier.WARM else Tier.WARM
        moved = any(other.value in (m.src, m.dst) for m in self.ledger.moves(record.id, limit=1_000_000))
        self.indexes.drop_saved()  # the saved indexes may hold its words
        self.indexes.intend([record.id], None)
        table.delete([record.id])
        ids, forget = [record.id], partial(ColdIndex.forget, ids=[record.id])
        if record.tier is Tier.COLD:
            self.indexes.changed(ids, Tier.COLD, cold=forget)
        elif moved:  # once cold: the cold indexes (this one and other processes') still hold its fields
            self.indexes.changed(ids, None, warm=partial(WarmIndex.remove, ids=ids), cold=forget)
        else:
            self.indexes.changed(ids, Tier.WARM, warm=partial(WarmIndex.remove, ids=ids))
        table.compact(scrub=True)
        # A move deletes the row where it was, which only marks it: that table's files still hold its text.
        if moved:
            self.table(other).compact(scrub=True)
        self.indexes.drop_saved()  # again: a copy another process saved from a read that began before the delete

    def after_write(self, before: int, after: int) -> None:
        """Compact warm each time the row counter (shared by every process) passes a multiple of `compact_every`."""
        if after // self.compact_every > before // self.compact_every:
            self.warm_table.compact(quick=True)

    def compact(self) -> None:
        self.warm_table.compact()
        self.cold_table.compact()
        self.ledger.trim_changes()

    def overwrite(self, tier: Tier, batches: Iterator[pa.RecordBatch], model: str, dim: int) -> None:
        self.indexes.drop_saved()
        self.table(tier).overwrite(batches, dim)
        self.indexes.model, self.indexes.dim = model, dim

    def files(self) -> tuple[int, int]:
        counts = [t.files() for t in (self.warm_table, self.cold_table)]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    def versions(self) -> int:
        return self.warm_table.versions() + self.cold_table.versions()


def _lifecycle(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "tier": record.tier.value,
        "kind": record.kind.value,
        "protected": record.protected,
        "occurred_at": record.occurred_at,
        "created_at": record.created_at,
        "forget_after": record.forget_after,
        "superseded_by": record.superseded_by,
    }
