"""The warm and cold tiers of one namespace: two LanceDB tables, and the warm one mirrored in memory.

Warm is small and searched exactly in memory (tiers/warm.py), kept current row by row from a change
feed in the ledger, so no write, move or compaction costs work in proportion to the store. Cold is
never held in memory: it is searched on disk (or object storage) through LanceDB's vector and
full-text indexes. A move between the tiers copies the rows, then deletes them from where they
were; a crash in between is finished when the store is next opened for writing.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tiers.embedder import DEFAULT_MODEL
from tiers.errors import CorruptFile, ModelMismatch
from tiers.files import read_json_object, write_atomic
from tiers.ledger import Ledger, Move
from tiers.records import Kind, Record, Tier
from tiers.tables import RECORD_COLUMNS, Table, check_id, connect, quote, schema
from tiers.terms import document_terms
from tiers.timeparse import as_utc
from tiers.warm import Row, WarmIndex

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
DEFAULT_DIM = 384  # of the default model: what a damaged store.json is told to name when nothing else is known
_ROW_COLUMNS = [*RECORD_COLUMNS, "hash", "terms", "vector"]
_HIT_COLUMNS = [*RECORD_COLUMNS, "hash", "vector"]

__all__ = ["ColdHits", "Store", "check_id"]


class ColdHits:
    """What a search of the cold tier found: rows, and the BM25 score of each (0 if found by meaning only)."""

    def __init__(self, rows: list[Row], words: list[float]) -> None:
        self.rows = rows
        self.words = words


class Store:
    """The warm and cold tables of one namespace, bound to one embedding model."""

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
        self.model = model
        self.dim = dim
        self.ledger = ledger
        self.compact_every = compact_every
        folder.mkdir(parents=True, exist_ok=True)
        self.read_lock = folder / "read.lock"
        meta = self._check_model()
        local_uri = str(folder / "lance")
        local = connect(local_uri)
        names = meta.get("tables", {"warm": "warm", "cold": "cold"})
        self.warm_table = Table(
            local, names["warm"], dim, local_uri, self.read_lock, text_index=False, vector_index=False
        )
        cold_db = connect(cold_uri, storage_options) if cold_uri else local
        self.cold_table = Table(
            cold_db, names["cold"], dim, cold_uri or local_uri, self.read_lock, text_index=True, vector_index=True
        )
        self._legacy = local if "memories" in local.list_tables().tables else None
        self._index: WarmIndex | None = None
        self._seen = 0
        self._guard = threading.RLock()
        self._searches = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memtiers-cold")

    def close(self) -> None:
        self._searches.shutdown(wait=False)

    # the model the vectors were made by

    def _check_model(self) -> dict[str, Any]:
        path = self.folder / "store.json"
        if not path.exists():
            meta = {"model": self.model, "dim": self.dim, "schema": SCHEMA_VERSION}
            write_meta(path, meta)
            return meta
        meta = read_meta(path, self.model, self.dim)
        if meta.get("model") != self.model or meta.get("dim") != self.dim:
            raise ModelMismatch(
                f"the store in {self.folder} was embedded with {meta.get('model')!r} (dim {meta.get('dim')}), "
                f"not the configured {self.model!r}; set MEMTIERS_EMBED_MODEL back, or run "
                f"`memtiers reembed` to re-embed every memory with the new model"
            )
        return meta

    # opening for writes: finish what a crash left half done, bring an old layout up to date

    def recover(self) -> None:
        """Finish what a crash left half done (tier moves, the compaction after them); bring a schema-1 table over.

        The caller holds the data folder's write lock.
        """
        if self._legacy is not None:
            self._migrate_legacy()
        pending = self.ledger.pending_moves()
        if not pending:
            if self.cold_table.lacks_text_index():  # a sweep cut short after its moves, before its compaction
                self.compact()
            return
        done, undone = [], []
        for move in pending:
            dst = self.table(Tier(move.dst))
            src = self.table(Tier(move.src))
            if dst.get([move.rid], ["id"]).num_rows:
                src.delete([move.rid])
                done.append(move)
            else:
                undone.append(move.rid)
        self.ledger.changed([m.rid for m in pending])
        self.ledger.finish_moves(done, undone)
        log.warning("finished %d tier moves and dropped %d that a crash interrupted", len(done), len(undone))
        self.compact()  # what the interrupted sweep would have done next: the moved rows join cold's indexes

    def _migrate_legacy(self) -> None:
        """Copy the rows of the single schema-1 table into the warm and cold tables, then drop it."""
        assert self._legacy is not None
        old = self._legacy.open_table("memories")
        warm_ids, cold_ids = self.warm_table.ids(), self.cold_table.ids()  # a migration cut short goes on
        for batch in old.to_lance().to_batches(batch_size=5_000):
            rows = batch.to_pylist()
            for row in rows:
                row["terms"] = document_terms(row["content"], as_utc(row["occurred_at"]))
                row["before"], row["after"] = [], []
            for tier, table, have in ((Tier.WARM, self.warm_table, warm_ids), (Tier.COLD, self.cold_table, cold_ids)):
                chosen = [r for r in rows if r["tier"] == tier.value and r["id"] not in have]
                table.add(pa.Table.from_pylist(chosen, schema=schema(self.dim)))
        self._legacy.drop_table("memories")
        self._legacy = None
        meta = read_meta(self.folder / "store.json") | {"schema": SCHEMA_VERSION}
        write_meta(self.folder / "store.json", meta)
        self.ledger.changed(["*"])
        log.warning("moved the memories of %s into separate warm and cold tables", self.folder)

    def table(self, tier: Tier) -> Table:
        return self.cold_table if tier is Tier.COLD else self.warm_table

    # the warm tier in memory

    @contextmanager
    def warm(self) -> Iterator[WarmIndex]:
        """The warm index as every process has written it, held still while the caller reads it."""
        with self._guard:
            yield self._synced()

    def _synced(self) -> WarmIndex:
        if self._index is None:
            self._load()
        else:
            newest, changed = self.ledger.changes_since(self._seen)
            if changed is None or "*" in (changed or ()):
                self._load()
            elif changed:
                assert self._index is not None
                rows = _rows(self.warm_table.get(sorted(changed), _ROW_COLUMNS))
                self._index.remove(changed)
                self._index.put(rows)
                self._seen = newest
            else:
                self._seen = newest
        assert self._index is not None
        return self._index

    def _load(self) -> None:
        seen = self.ledger.last_change()  # read first: a change made during the load is applied after it
        index = WarmIndex(self.dim)
        for batch in self.warm_table.scan(_ROW_COLUMNS):
            index.put(_rows(pa.Table.from_batches([batch])))
        self._index, self._seen = index, seen

    def _changed(self, rids: Sequence[str], apply: Any) -> None:
        """Note a change of warm records in the feed and apply it to this process's index."""
        with self._guard:
            index = self._synced()
            before = self._seen
            newest = self.ledger.changed(rids)
            apply(index)
            if newest == before + len(set(rids)):
                self._seen = newest

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
            for row in _rows(self.cold_table.get(rest, _HIT_COLUMNS)):
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

    def search_cold(self, vectors: np.ndarray, terms: str, k: int, where: str | None) -> ColdHits:
        """The cold records nearest the query by meaning and best by words, the two searches run at once."""
        if not self.cold_table.count():
            return ColdHits([], [])
        near = self._searches.submit(self.cold_table.vector_search, vectors[0], k, where, _HIT_COLUMNS)
        worded = self._searches.submit(self.cold_table.text_search, terms, k, where, _HIT_COLUMNS)
        by_words = worded.result()
        by_meaning = near.result()
        rows: dict[str, Row] = {}
        words: dict[str, float] = {}
        for row, score in zip(_rows(by_words), by_words["_score"].to_pylist(), strict=True):
            rows[row.record.id] = row
            words[row.record.id] = float(score)
        for row in _rows(by_meaning):
            rows.setdefault(row.record.id, row)
        return ColdHits(list(rows.values()), [words.get(rid, 0.0) for rid in rows])

    def cold_rows(self, ids: Sequence[str]) -> list[Row]:
        return _rows(self.cold_table.get(list(ids), _HIT_COLUMNS)) if ids else []

    def lifecycle_rows(self, ids: Iterable[str] = ()) -> list[dict[str, Any]]:
        """What the tier rules read: every warm record, and those cold records named (the recalled ones)."""
        out = []
        with self.warm() as index:
            for row in index.rows:
                if row is not None:
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
        self.warm_table.add(_table(rows, self.dim))
        self._changed([r.record.id for r in rows], lambda index: index.put(rows))

    def restore(self, rows: list[Row]) -> None:
        """Add records exactly as given (ids, tiers, times: an import), each to the table of its tier."""
        for tier in (Tier.WARM, Tier.COLD):
            chosen = [r for r in rows if r.record.tier is tier]
            if not chosen:
                continue
            self.table(tier).add(_table(chosen, self.dim))
            if tier is Tier.WARM:
                self._changed([r.record.id for r in chosen], lambda index, c=chosen: index.put(c))

    def update(self, records: Sequence[Record], values: dict[str, Any]) -> None:
        """Set the same field values on these records, wherever they are, one write per tier."""
        for tier in (Tier.WARM, Tier.COLD):
            chosen = [r for r in records if r.tier is tier]
            if not chosen:
                continue
            self.table(tier).update([r.id for r in chosen], _stored_values(values))
            if tier is Tier.WARM:
                changed = [replace(r, **values) for r in chosen]
                self._changed([r.id for r in chosen], lambda index, c=changed: [index.replace_record(r) for r in c])

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
                added = _rows(rows)
                self._changed(ids, lambda index, a=added: index.put(a))
            else:
                self._changed(ids, lambda index, i=ids: index.remove(i))
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
        table.delete([record.id])
        if record.tier is Tier.WARM:
            self._changed([record.id], lambda index: index.remove([record.id]))
        table.compact(scrub=True)

    def after_write(self, before: int, after: int) -> None:
        """Compact warm each time the row counter (shared by every process) passes a multiple of `compact_every`."""
        if after // self.compact_every > before // self.compact_every:
            self.warm_table.compact()

    def compact(self) -> None:
        self.warm_table.compact()
        self.cold_table.compact()
        self.ledger.trim_changes()

    def overwrite(self, tier: Tier, batches: Iterator[pa.RecordBatch], model: str, dim: int) -> None:
        self.table(tier).overwrite(batches, dim)
        self.model, self.dim = model, dim

    def files(self) -> tuple[int, int]:
        counts = [t.files() for t in (self.warm_table, self.cold_table)]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    def versions(self) -> int:
        return self.warm_table.versions() + self.cold_table.versions()


def read_meta(path: Path, model: str = DEFAULT_MODEL, dim: int = DEFAULT_DIM) -> dict[str, Any]:
    """store.json, or an error that names it, says it was left untouched and gives the JSON to write back.

    `model` and `dim` (the configured ones, when known) are what that JSON names.
    """
    again = json.dumps({"model": model, "dim": dim, "schema": SCHEMA_VERSION})
    fix = (
        "it records which embedding model made the vectors in lance/. Restore it from a backup, or write it again "
        f"as {again} naming the model that embedded them (memtiers stats shows the configured one)"
    )
    meta = read_json_object(path, fix)
    if not isinstance(meta.get("model"), str) or not isinstance(meta.get("dim"), int):
        raise CorruptFile(f"{path} is corrupt (no model name and dimension) and was left untouched; {fix}")
    return meta


def write_meta(path: Path, meta: dict[str, Any]) -> None:
    """Write store.json atomically: a concurrent reader sees the old file or the new one, never a part."""
    write_atomic(path, json.dumps(meta))


def new_row(record: Record, digest: str, vector: np.ndarray) -> Row:
    return Row(record, digest, document_terms(record.content, record.occurred_at), vector)


def _table(rows: Sequence[Row], dim: int) -> pa.Table:
    data = []
    for row in rows:
        r = row.record
        data.append(
            {
                "id": r.id,
                "hash": row.hash,
                "content": r.content,
                "tier": r.tier.value,
                "kind": r.kind.value,
                "protected": r.protected,
                "tags": list(r.tags),
                "metadata": json.dumps(r.metadata, ensure_ascii=False),
                "source": r.source,
                "occurred_at": r.occurred_at,
                "created_at": r.created_at,
                "forget_after": r.forget_after,
                "superseded_by": r.superseded_by,
                "superseded_at": r.superseded_at,
                "before": list(row.before),
                "after": list(row.after),
                "terms": row.terms,
                "vector": row.vector.astype(np.float32).tolist(),
            }
        )
    return pa.Table.from_pylist(data, schema=schema(dim))


def _rows(table: pa.Table) -> list[Row]:
    if not table.num_rows:
        return []
    names = set(table.column_names)
    vectors = table["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
    vectors = np.asarray(vectors, dtype=np.float32).reshape(table.num_rows, -1)
    terms = table["terms"].to_pylist() if "terms" in names else [""] * table.num_rows
    hashes = table["hash"].to_pylist() if "hash" in names else [""] * table.num_rows
    out = []
    columns = {name: table[name].to_pylist() for name in RECORD_COLUMNS}
    for i in range(table.num_rows):
        row = {name: values[i] for name, values in columns.items()}
        out.append(
            Row(
                record_from_dict(row),
                hashes[i],
                terms[i] or "",
                vectors[i],
                tuple(row["before"] or ()),
                tuple(row["after"] or ()),
            )
        )
    return out


def record_from_dict(row: dict[str, Any]) -> Record:
    return Record(
        id=row["id"],
        content=row["content"],
        tier=Tier(row["tier"]),
        kind=Kind(row["kind"]),
        protected=bool(row["protected"]),
        occurred_at=as_utc(row["occurred_at"]),
        created_at=as_utc(row["created_at"]),
        tags=tuple(row["tags"] or ()),
        metadata=json.loads(row["metadata"] or "{}"),
        source=row["source"],
        forget_after=as_utc(row["forget_after"]) if row["forget_after"] else None,
        superseded_by=row["superseded_by"],
        superseded_at=as_utc(row["superseded_at"]) if row["superseded_at"] else None,
    )


def _stored_values(values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key == "metadata":
            out[key] = json.dumps(value, ensure_ascii=False)
        elif key == "tags":
            out[key] = list(value)
        elif key == "kind" or key == "tier":
            out[key] = value.value
        elif isinstance(value, datetime):
            out[key] = as_utc(value)
        else:
            out[key] = value
    return out


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


def where_clause(tags: Sequence[str], since: datetime | None, until: datetime | None) -> str | None:
    """A LanceDB filter for a search scope, or None for everything."""
    parts = []
    if tags:
        parts.append("array_has_any(tags, [" + ",".join(quote(t) for t in tags) + "])")
    if since is not None:
        parts.append(f"occurred_at >= {_timestamp(since)}")
    if until is not None:
        parts.append(f"occurred_at <= {_timestamp(until)}")
    return " AND ".join(parts) or None


def _timestamp(value: datetime) -> str:
    return f"timestamp '{as_utc(value).strftime('%Y-%m-%dT%H:%M:%S.%f')}'"
