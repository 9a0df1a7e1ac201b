"""The warm and cold tiers: one LanceDB table per namespace, searched by vector and by full text.

Writes take the data folder's lock, so two processes never interleave a dedupe check with an
insert, and the table is compacted every `compact_every` writes: an agent storing one memory at a
time leaves a table as compact as one batched import would.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS

from tiers.errors import CorruptFile, InvalidInput, ModelMismatch, StorageError
from tiers.files import backend_message, read_json_object, write_atomic
from tiers.index import Index
from tiers.locking import DEFAULT_TIMEOUT, shared_lock
from tiers.records import Kind, Record, Tier
from tiers.timeparse import as_utc

log = logging.getLogger(__name__)
T = TypeVar("T")

TABLE = "memories"
SCHEMA_VERSION = 1
_ID = re.compile(r"^[0-9a-f]{12}$")
_TS = pa.timestamp("us", tz="UTC")
RECORD_COLUMNS = [
    "id", "content", "tier", "kind", "protected", "tags", "metadata", "source",
    "occurred_at", "created_at", "forget_after", "superseded_by", "superseded_at",
]  # fmt: skip


def schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("hash", pa.string()),
            ("content", pa.string()),
            ("tier", pa.string()),
            ("kind", pa.string()),
            ("protected", pa.bool_()),
            ("tags", pa.list_(pa.string())),
            ("metadata", pa.string()),
            ("source", pa.string()),
            ("occurred_at", _TS),
            ("created_at", _TS),
            ("forget_after", _TS),
            ("superseded_by", pa.string()),
            ("superseded_at", _TS),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


@dataclass(frozen=True)
class Hit:
    """A record found by a search, with its rank signal (cosine similarity or BM25 score)."""

    record: Record
    score: float


@dataclass(frozen=True)
class Filters:
    """What a search is limited to."""

    tiers: tuple[Tier, ...] = (Tier.WARM, Tier.COLD)
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None

    def where(self) -> str:
        parts = ["tier IN (" + ",".join(_quote(t.value) for t in self.tiers) + ")"]
        if self.tags:
            parts.append("array_has_any(tags, [" + ",".join(_quote(t) for t in self.tags) + "])")
        if self.since is not None:
            parts.append(f"occurred_at >= {_timestamp(self.since)}")
        if self.until is not None:
            parts.append(f"occurred_at <= {_timestamp(self.until)}")
        return " AND ".join(parts)


def check_id(rid: str) -> str:
    if not _ID.match(rid):
        raise InvalidInput(f"{rid!r} is not a memory id; ids are 12 hex characters as remember and recall return")
    return rid


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _timestamp(value: datetime) -> str:
    return f"timestamp '{as_utc(value).strftime('%Y-%m-%dT%H:%M:%S.%f')}'"


def _reads(method: Callable[..., T]) -> Callable[..., T]:
    """Hold the store's read lock shared while a read runs, so compaction never removes its files."""

    @functools.wraps(method)
    def locked(self: Store, *args: Any, **kwargs: Any) -> T:
        with shared_lock(self.read_lock, timeout=self.lock_timeout), _mapped(self, f"reading ({method.__name__})"):
            return method(self, *args, **kwargs)

    return locked


def _writes(method: Callable[..., T]) -> Callable[..., T]:
    """Map what a LanceDB write raises (a full disk, a missing or damaged file) to a StorageError naming the store."""

    @functools.wraps(method)
    def mapped(self: Store, *args: Any, **kwargs: Any) -> T:
        with _mapped(self, f"writing ({method.__name__})"):
            return method(self, *args, **kwargs)

    return mapped


@contextlib.contextmanager
def _mapped(store: Store, doing: str) -> Iterator[None]:
    try:
        yield
    except (OSError, RuntimeError, ValueError) as exc:
        raise StorageError(
            f"{doing} the LanceDB store {store.folder / 'lance'} failed: {backend_message(exc)}; nothing was "
            "changed by this call. If the disk is full, free space and retry; if files were removed or damaged, "
            "restore the data folder from a backup"
        ) from exc


def _in_ids(ids: Iterable[str]) -> str:
    return "id IN (" + ",".join(_quote(check_id(i)) for i in ids) + ")"


class Store:
    """The LanceDB table of one namespace, bound to one embedding model."""

    def __init__(
        self, folder: Path, model: str, dim: int, compact_every: int = 100, lock_timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.folder = folder
        self.lock_timeout = lock_timeout
        self.model = model
        self.dim = dim
        self.compact_every = compact_every
        self.read_lock = folder / "read.lock"
        folder.mkdir(parents=True, exist_ok=True)
        self._index: Index | None = None
        self._check_model()
        self._open()

    @classmethod
    def as_recorded(cls, folder: Path) -> Store:
        """Open the store with the model its vectors were made by (for re-embedding)."""
        model, dim = _recorded_model(folder / "store.json")
        return cls(folder, model, dim)

    def _open(self) -> None:
        folder = self.folder
        try:
            self._db = lancedb.connect(folder / "lance", read_consistency_interval=timedelta(0))
            if TABLE in self._db.list_tables().tables:
                self._table = self._db.open_table(TABLE)
            else:
                self._table = self._db.create_table(TABLE, schema=schema(self.dim), exist_ok=True)
        except (OSError, RuntimeError, ValueError) as exc:
            raise StorageError(f"cannot open the LanceDB store in {folder / 'lance'}: {backend_message(exc)}") from exc
        self._has_fts = any(i.index_type == "FTS" for i in self._table.list_indices())

    def _check_model(self) -> None:
        meta_path = self.folder / "store.json"
        if meta_path.exists():
            model, dim = _recorded_model(meta_path, self.model, self.dim)
            if model != self.model or dim != self.dim:
                raise ModelMismatch(
                    f"the store in {self.folder} was embedded with {model!r} (dim {dim}), "
                    f"not the configured {self.model!r}; set MEMTIERS_EMBED_MODEL back, or run "
                    f"`memtiers reembed` to re-embed every memory with the new model"
                )
        else:  # atomic: a second process opening the folder at once reads the whole file or none
            write_atomic(meta_path, _meta(self.model, self.dim))

    # reads

    @_reads
    def count(self, tier: Tier | None = None) -> int:
        return self._table.count_rows(None if tier is None else f"tier = {_quote(tier.value)}")

    @_reads
    def get(self, ids: Sequence[str]) -> dict[str, Record]:
        if not ids:
            return {}
        rows = self._table.search().where(_in_ids(ids)).select(RECORD_COLUMNS).limit(len(ids)).to_list()
        return {row["id"]: _record(row) for row in rows}

    @_reads
    def find_hashes(self, hashes: Sequence[str]) -> dict[str, tuple[str, Tier]]:
        """Stored ids and tiers of the given content hashes."""
        found: dict[str, tuple[str, Tier]] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            where = "hash IN (" + ",".join(_quote(h) for h in chunk) + ")"
            for row in self._table.search().where(where).select(["id", "hash", "tier"]).limit(len(chunk) * 2).to_list():
                found.setdefault(row["hash"], (row["id"], Tier(row["tier"])))
        return found

    @_reads
    def vector_search(self, vector: np.ndarray, k: int, filters: Filters) -> list[Hit]:
        rows = (
            self._table.search(vector.astype(np.float32), vector_column_name="vector")
            .distance_type("cosine")  # type: ignore[attr-defined]
            .where(filters.where(), prefilter=True)
            .select([*RECORD_COLUMNS, "_distance"])
            .limit(k)
            .to_list()
        )
        return [Hit(_record(row), 1.0 - float(row["_distance"])) for row in rows]

    @_reads
    def text_search(self, query: str, k: int, filters: Filters) -> list[Hit]:
        if not self._has_fts:
            self._refresh_fts_flag()
            if not self._has_fts:
                return []
        try:
            rows = (
                self._table.search(query, query_type="fts")
                .where(filters.where(), prefilter=True)
                .select([*RECORD_COLUMNS, "_score"])
                .limit(k)
                .to_list()
            )
        except (ValueError, RuntimeError) as exc:  # a query made only of stop words or symbols
            log.debug("full-text search skipped: %s", exc)
            return []
        return [Hit(_record(row), float(row["_score"])) for row in rows]

    @_reads
    def index(self) -> Index:
        """The in-memory index of the table as it is now, rebuilt only when the table has a new version."""
        version = self._table.version
        index = self._index
        if index is None or index.version != version:
            index = self._index = Index(version, self._table.to_arrow())
        return index

    def records(self, index: Index, positions: Sequence[int]) -> list[Record]:
        return [_record(row) for row in index.rows(positions)]

    @_reads
    def lifecycle_rows(self, tiers: Sequence[Tier]) -> list[dict[str, Any]]:
        """The columns the tier rules read, for every record in those tiers."""
        where = "tier IN (" + ",".join(_quote(t.value) for t in tiers) + ")"
        columns = [
            "id",
            "tier",
            "kind",
            "protected",
            "occurred_at",
            "created_at",
            "forget_after",
            "superseded_by",
        ]
        table = self._table.search().where(where).select(columns).limit(self._table.count_rows() + 1).to_arrow()
        return table.to_pylist()

    @_reads
    def scan(self) -> list[dict[str, Any]]:
        """Every row with its vector (for re-embedding)."""
        return self._table.to_arrow().to_pylist()

    # writes: callers hold the data folder's lock

    @_writes
    def add(self, rows: list[dict[str, Any]]) -> None:
        # A microsecond apart, the rows of one batch keep their order through later rewrites (a tier
        # update moves rows to new files), so recall can show a hit's neighbours in the order given.
        for offset, row in enumerate(rows):
            row["created_at"] = as_utc(row["created_at"]) + timedelta(microseconds=offset)
        if rows:
            self._table.add(pa.Table.from_pylist(rows, schema=self._table.schema))

    @_writes
    def set_tier(self, ids: Sequence[str], tier: Tier) -> None:
        if ids:
            self._table.update(where=_in_ids(ids), values={"tier": tier.value})

    @_writes
    def protect(self, ids: Sequence[str]) -> None:
        """Mark records as durable (kept out of the cold tier by heat), in one write."""
        if ids:
            self._table.update(where=_in_ids(ids), values={"protected": True})

    @_writes
    def supersede(self, ids: Sequence[str], by: str | None, at: datetime | None) -> None:
        """Mark records as replaced by `by`, in one write; `by=None` clears the mark (their value is current again)."""
        if ids:
            when = as_utc(at) if by is not None and at is not None else None
            self._table.update(where=_in_ids(ids), values={"superseded_by": by, "superseded_at": when})

    @_writes
    def delete(self, rid: str) -> None:
        """Delete a record for good: compaction then drops the older versions that still held it."""
        self._table.delete(_in_ids([rid]))
        self.compact()

    @_writes
    def rebind(self, model: str, dim: int, rows: list[dict[str, Any]]) -> None:
        """Overwrite the whole table with rows embedded by another model, in one version, and record it."""
        data = pa.Table.from_pylist(rows, schema=schema(dim))
        self._table = self._db.create_table(TABLE, data=data, mode="overwrite")
        self.model, self.dim = model, dim
        write_atomic(self.folder / "store.json", _meta(model, dim))
        self._has_fts = False
        self.compact()

    def compact(self) -> None:
        """Merge small files, fold new rows into the indexes, and drop every older version.

        Dropping old versions is safe only because every reader holds the read lock shared and
        this holds it exclusive: no process is reading a version while its files go.
        """
        with (
            shared_lock(self.read_lock, True, self.lock_timeout),
            _mapped(self, "compacting"),
            warnings.catch_warnings(),
        ):
            warnings.filterwarnings("ignore", message=".*cleanup_older_than=0.*", category=UserWarning)
            if not self._has_fts and self._table.count_rows() > 0:
                self._table.create_index("content", config=FTS(), replace=True)
                self._has_fts = True
            self._table.optimize(cleanup_older_than=timedelta(0))

    def after_write(self, before: int, after: int) -> None:
        """Compact each time the row counter (shared by every process) passes a multiple of `compact_every`."""
        if after // self.compact_every > before // self.compact_every or not self._has_fts:
            self.compact()

    def _refresh_fts_flag(self) -> None:
        self._has_fts = any(i.index_type == "FTS" for i in self._table.list_indices())

    def files(self) -> tuple[int, int]:
        """Number of files and bytes on disk under the LanceDB folder."""
        paths = [p for p in (self.folder / "lance").rglob("*") if p.is_file()]
        return len(paths), sum(p.stat().st_size for p in paths)

    def versions(self) -> int:
        return len(self._table.list_versions())


def _record(row: dict[str, Any]) -> Record:
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


def _meta(model: str, dim: int) -> str:
    return json.dumps({"model": model, "dim": dim, "schema": SCHEMA_VERSION})


def _recorded_model(path: Path, model: str = "<the model that made them>", dim: int = 384) -> tuple[str, int]:
    """The model and dimension `store.json` records; a damaged file is an error saying how to rewrite it."""
    fix = (
        "it records which embedding model made the vectors in lance/. Restore it from a backup, or write it again "
        f"as {_meta(model, dim)} naming the model that embedded them (memtiers stats shows the configured one)"
    )
    meta = read_json_object(path, fix)
    if not isinstance(meta.get("model"), str) or not isinstance(meta.get("dim"), int):
        raise CorruptFile(f"{path} is corrupt (no model name and dimension) and was left untouched; {fix}")
    return meta["model"], meta["dim"]
