"""One LanceDB table of records (the warm or the cold tier): its schema, reads, writes and indexes.

Both tiers share one schema, so a move between them copies rows as they are. Every backend error
is mapped here, once, into a StorageError that names the table.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from tiers.errors import InvalidInput, StorageError
from tiers.files import backend_message
from tiers.storage.locking import file_lock, shared_lock

log = logging.getLogger(__name__)
T = TypeVar("T")

_ID = re.compile(r"^[0-9a-f]{12}$")
_TS = pa.timestamp("us", tz="UTC")
# Rows per data file: forgetting a record rewrites the one file that held it, so files stay small.
ROWS_PER_FILE = 50_000
QUICK_FILE_ROWS = ROWS_PER_FILE // 8  # a file this large is left to the sweep's compaction by one after a write
RECORD_COLUMNS = [
    "id", "content", "tier", "kind", "protected", "tags", "metadata", "source",
    "occurred_at", "created_at", "forget_after", "superseded_by", "superseded_at", "before", "after",
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
            # Ids of the records stored just before and after this one in its episode, nearest first.
            ("before", pa.list_(pa.string())),
            ("after", pa.list_(pa.string())),
            # Every term the record is found by (tiers/text/terms.py), space-separated.
            ("terms", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
            # A long memory's pieces' vectors, in order (tiers/index/pieces.py); null for one the model reads whole.
            ("pieces", pa.list_(pa.list_(pa.float32(), dim))),
        ]
    )


PIECES = "pieces"  # the column a table made before it was added lacks until its first write adds it
_Rows = TypeVar("_Rows", pa.Table, pa.RecordBatch)


def check_id(rid: str) -> str:
    if not isinstance(rid, str) or not _ID.match(rid):
        raise InvalidInput(f"{rid!r} is not a memory id; ids are 12 hex characters as remember and recall return")
    return rid


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def in_ids(ids: Sequence[str], column: str = "id") -> str:
    return f"{column} IN (" + ",".join(quote(i) for i in ids) + ")"


def _mapped(what: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Map LanceDB's errors from a method into a StorageError naming the table, what was done and what to do.

    A method that yields (a scan) is mapped while it is iterated, where LanceDB does its reading.
    """

    def wrap(method: Callable[..., T]) -> Callable[..., T]:
        if inspect.isgeneratorfunction(method):

            @functools.wraps(method)
            def iterate(self: Table, *args: Any, **kwargs: Any) -> Any:
                with _mapping(self, what):
                    yield from method(self, *args, **kwargs)

            return iterate

        @functools.wraps(method)
        def call(self: Table, *args: Any, **kwargs: Any) -> T:
            with _mapping(self, what):
                return method(self, *args, **kwargs)

        return call

    return wrap


@contextmanager
def _mapping(table: Table, what: str) -> Iterator[None]:
    try:
        yield
    except (OSError, RuntimeError, ValueError) as exc:
        if isinstance(exc, InvalidInput):
            raise
        advice = _advice(table.where, table.name)
        raise StorageError(
            f"{what} the {table.name} table in {table.where} failed: {backend_message(exc)}. {advice}"
        ) from exc


def _advice(where: str, name: str) -> str:
    return (
        f"If the disk is full, free space and retry; if files under {where}/{name}.lance were removed or damaged, "
        "restore the data folder from a backup"
    )


class Table:
    """The LanceDB table of one tier of one namespace.

    On local disk its reads and appends go through pylance directly (the format underneath LanceDB, quick
    to import): LanceDB itself (several times slower to import, most of it a REST client) is imported at
    the first update, delete or compaction, so a restarted server recalls and remembers without it. On
    object storage every call goes through LanceDB.
    """

    def __init__(
        self, db: Callable[[], Any], name: str, dim: int, where: str, read_lock: Path, *, indexed: bool
    ) -> None:
        self.name = name
        self.dim = dim
        self.where = where
        self.read_lock = read_lock
        self.write_lock = read_lock.with_name("write.lock")  # the data folder's (tiers/namespace/parts.py), beside it
        self._connect = db
        self._db: Any = None
        self._opened: Any = None
        self._indexed_ids = indexed
        self._local = Path(where, f"{name}.lance") if "://" not in where else None
        if self._local is None or not (self._local / "_versions").is_dir():
            self._open(create=True)  # made now if new; on object storage opened now: a wrong bucket is said at once
        self._indexed: set[str] | None = None
        self._pieces: bool | None = None  # True once the table is known to have the `pieces` column

    @property
    def _table(self) -> Any:
        """The LanceDB table, opened (or made) on first use."""
        return self._opened if self._opened is not None else self._open(create=False)

    def _open(self, create: bool) -> Any:
        """Open the table; make it only when asked (a table that was there and is gone is damage, not new)."""
        try:
            self._db = self._db if self._db is not None else self._connect()
            if not create or self.name in self._db.list_tables().tables:
                self._opened = self._db.open_table(self.name)
            else:
                self._opened = self._db.create_table(self.name, schema=schema(self.dim), exist_ok=True)
        except (OSError, RuntimeError, ValueError) as exc:
            raise StorageError(
                f"cannot open the {self.name} table in {self.where}: {backend_message(exc)}. "
                f"{_advice(self.where, self.name)}"
            ) from exc
        return self._opened

    def _dataset(self) -> Any:
        """The newest version of a local table (made when this object was), read by pylance alone."""
        assert self._local is not None
        import lance

        return lance.dataset(str(self._local))

    # reads: each holds the read lock shared, so compaction never removes files under it

    def _reading(self) -> Any:
        return shared_lock(self.read_lock)

    @_mapped("counting")
    def count(self, where: str | None = None) -> int:
        with self._reading():
            if self._local is not None:
                return int(self._dataset().count_rows(filter=where))
            return int(self._table.count_rows(where))

    @_mapped("reading")
    def get(self, ids: Sequence[str], columns: Sequence[str] | None = None) -> pa.Table:
        """The rows with these ids (in no particular order)."""
        parts = []
        columns, fill = self._present(columns)
        with self._reading():
            dataset = self._dataset() if self._local is not None else None
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                if dataset is not None:
                    chosen = None if columns is None else list(columns)
                    parts.append(dataset.to_table(columns=chosen, filter=in_ids(chunk)))
                    continue
                query = self._table.search().where(in_ids(chunk)).limit(len(chunk) * 2)
                if columns is not None:
                    query = query.select(list(columns))
                parts.append(query.to_arrow())
        return self._filled(_concat(parts, schema(self.dim), columns), fill)

    @_mapped("reading")
    def find_hashes(self, hashes: Sequence[str]) -> dict[str, str]:
        """Stored ids of the given content hashes."""
        found: dict[str, str] = {}
        with self._reading():
            dataset = self._dataset() if self._local is not None else None
            for start in range(0, len(hashes), 500):
                chunk = list(hashes[start : start + 500])
                if dataset is not None:
                    rows = dataset.to_table(columns=["id", "hash"], filter=in_ids(chunk, "hash"))
                else:
                    query = self._table.search().where(in_ids(chunk, "hash")).select(["id", "hash"])
                    rows = query.limit(len(chunk) * 2).to_arrow()
                for rid, digest in zip(rows["id"].to_pylist(), rows["hash"].to_pylist(), strict=True):
                    found.setdefault(digest, rid)
        return found

    @_mapped("reading")
    def scan(
        self, columns: Sequence[str] | None = None, where: str | None = None, batch: int = 10_000
    ) -> Iterator[pa.RecordBatch]:
        """Every row (or those matching `where`), in batches: never the whole table in memory at once."""
        columns, fill = self._present(columns)
        with self._reading():
            if self._local is not None:
                chosen = list(columns) if columns else None
                batches = self._dataset().to_batches(columns=chosen, filter=where, batch_size=batch)
            else:
                query = self._table.search()
                if columns:
                    query = query.select(list(columns))
                if where:
                    query = query.where(where)
                batches = query.limit(None).to_batches(batch)
            for part in batches:
                yield self._filled(part, fill)

    # writes: callers hold the data folder's write lock

    @_mapped("writing to")
    def add(self, rows: pa.Table) -> None:
        """Append rows as one new version (a local table through pylance: a remember needs no LanceDB)."""
        if not rows.num_rows:
            return
        if not self.has_pieces():
            self._add_pieces()
        if self._local is not None:  # opened first: a table that vanished is an error, never made again
            wanted = schema(self.dim)
            self._dataset().insert(rows.select(wanted.names).cast(wanted), mode="append")
            return
        self._table.add(rows.select(self._table.schema.names).cast(self._table.schema))

    @_mapped("writing to")
    def merge(self, rows: pa.Table) -> None:
        """Write new values of some columns (and `id`) into the stored rows of these ids, as one new version.

        An id no longer in the table (forgotten, or moved to the other tier meanwhile) is skipped, never added.
        """
        if not rows.num_rows:
            return
        if not self.has_pieces():
            self._add_pieces()
        wanted = schema(self.dim)
        rows = rows.cast(pa.schema([wanted.field(name) for name in rows.column_names]))
        target = self._dataset() if self._local is not None else self._table
        target.merge_insert("id").when_matched_update_all().execute(rows)

    def _present(self, columns: Sequence[str] | None) -> tuple[Sequence[str] | None, bool]:
        """The columns to read of those asked for, and whether `pieces` is to be added to what is read, null: a
        table made before the column was is read as if every row had none."""
        if (columns is not None and PIECES not in columns) or self.has_pieces():
            return columns, False
        return (None if columns is None else [c for c in columns if c != PIECES]), True

    def _filled(self, rows: _Rows, fill: bool) -> _Rows:
        if not fill or PIECES in rows.schema.names:
            return rows
        return rows.append_column(PIECES, pa.nulls(rows.num_rows, schema(self.dim).field(PIECES).type))

    def has_pieces(self) -> bool:
        """Whether the table has the `pieces` column: once it has, it keeps it; until then, looked at each time
        (another process's write may add it)."""
        if not self._pieces:
            names = self._dataset().schema.names if self._local is not None else self._table.schema.names
            self._pieces = PIECES in names or None
        return bool(self._pieces)

    def _add_pieces(self) -> None:
        """Add the `pieces` column (null in every row: no data file is written) to a table made before it was.

        Done by the first write, which holds the data folder's write lock; until then readers read without it.
        """
        field = schema(self.dim).field(PIECES)
        try:
            if self._local is not None:
                self._dataset().add_columns(pa.schema([field]))
            else:
                self._table.add_columns(field)
        except (OSError, RuntimeError, ValueError):
            self._pieces = None
            if not self.has_pieces():  # added meanwhile by another writer: nothing to do
                raise
        self._pieces = True
        log.info("added the pieces column to the %s table", self.name)

    @_mapped("deleting from")
    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), 500):
            self._table.delete(in_ids(list(ids[start : start + 500])))

    @_mapped("updating")
    def update(self, ids: Sequence[str], values: dict[str, Any]) -> None:
        for start in range(0, len(ids), 500):
            self._table.update(where=in_ids(list(ids[start : start + 500])), values=values)

    @_mapped("compacting")
    def compact(self, scrub: bool = False, quick: bool = False) -> None:
        """Merge small files, fold new rows into the id and hash indexes, drop every older version.

        Files are merged up to ROWS_PER_FILE rows and a full one is left as it is: LanceDB's own `optimize`
        merges every file under a million rows, so each compaction of a growing table rewrote all of it.
        `quick` (after a write) merges only the files under QUICK_FILE_ROWS: the one still growing towards
        ROWS_PER_FILE would otherwise be rewritten after every write, and the sweep's compaction merges it.
        `scrub` (after a forget) also rewrites every file that held a deleted row, so no file keeps a word of it.
        The work itself runs beside readers, who keep reading the version they opened; only dropping the old
        versions waits for them to finish, holding the read lock exclusive while every reader holds it shared,
        and for any write in progress.
        """
        rows = self._table.count_rows()
        dataset = self._table.to_lance()
        kept = [f.fragment_id for f in dataset.get_fragments() if f.physical_rows >= QUICK_FILE_ROWS] if quick else []
        dataset.optimize.compact_files(
            target_rows_per_fragment=ROWS_PER_FILE,
            materialize_deletions_threshold=0.0 if scrub else 0.1,
            excluded_fragment_ids=kept or None,
        )
        self._ensure_indexes(rows)
        self._table.to_lance().optimize.optimize_indices()
        # Dropping every file no version lists (`delete_unverified`) would also drop those a write in progress
        # has made and not yet committed: that step waits for the data folder's write lock, which every write
        # holds (the merging above runs beside writes: LanceDB commits the two in turn).
        with file_lock(self.write_lock), shared_lock(self.read_lock, exclusive=True):
            self._table.to_lance().cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)

    def _ensure_indexes(self, rows: int) -> None:
        if not rows:
            return
        for index in self._table.list_indices():
            # The full-text and vector indexes of stores made before the cold tier was searched in memory
            # (tiers/index/cold.py): nothing reads them, and each compaction would go on folding rows into them.
            if any(column in ("terms", "vector") for column in index.columns):
                self._table.drop_index(index.name)
        for column in ("id", "hash") if self._indexed_ids else ():
            if not self._has_index(column):
                from lancedb.index import BTree

                self._table.create_index(column, config=BTree(), replace=True)
        self._indexed = None

    def _has_index(self, column: str) -> bool:
        if self._indexed is None:
            self._indexed = {c for i in self._table.list_indices() for c in i.columns}
        return column in self._indexed

    def refresh(self) -> None:
        """Forget what is known of the indexes (another process may have made them)."""
        self._indexed = None

    def overwrite(self, batches: Iterator[pa.RecordBatch], dim: int) -> None:
        """Replace the whole table with these rows in one new version (re-embedding into another model)."""
        reader = pa.RecordBatchReader.from_batches(schema(dim), batches)
        try:
            self._db = self._db if self._db is not None else self._connect()
            self._opened = self._db.create_table(self.name, data=reader, mode="overwrite")
            self._pieces = True
        except (OSError, RuntimeError, ValueError) as exc:
            raise StorageError(
                f"rewriting the {self.name} table in {self.where} failed: {backend_message(exc)}"
            ) from exc
        self.dim = dim
        self._indexed = None

    @_mapped("listing the files of")
    def files(self) -> tuple[int, int]:
        """Number of files and bytes stored under this table, on local disk or object storage alike."""
        with self._reading():
            listed = self._table.to_lance().all_files().read_all()
        return listed.num_rows, int(pc.sum(listed["size_bytes"]).as_py() or 0)

    def ids(self) -> set[str]:
        return {rid for batch in self.scan(["id"]) for rid in batch.column("id").to_pylist()}

    @_mapped("listing the versions of")
    def versions(self) -> int:
        return len(self._table.list_versions())

    def version(self) -> int:
        """The current version: it changes with every write, compaction included."""
        return int(self._table.version)


def connect(uri: str, storage_options: dict[str, str] | None = None) -> Any:
    """A LanceDB connection that sees every other process's writes on each read.

    LanceDB is imported here, on first use, not with this module: it takes a second and a half to
    import (most of it its REST client), which a server would otherwise spend before its first answer.
    """
    import lancedb

    try:
        return lancedb.connect(uri, read_consistency_interval=timedelta(0), storage_options=storage_options or None)
    except (OSError, RuntimeError, ValueError) as exc:
        raise StorageError(f"cannot open LanceDB at {uri}: {backend_message(exc)}") from exc


class Connection:
    """A LanceDB connection made on first call, then shared by the tables that use it."""

    def __init__(self, uri: str, storage_options: dict[str, str] | None = None) -> None:
        self.uri = uri
        self.storage_options = storage_options
        self._made: Any = None
        self._lock = threading.Lock()

    def __call__(self) -> Any:
        with self._lock:
            if self._made is None:
                self._made = connect(self.uri, self.storage_options)
            return self._made


def _concat(parts: list[pa.Table], full: pa.Schema, columns: Sequence[str] | None) -> pa.Table:
    if parts:
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    wanted = full if columns is None else pa.schema([full.field(c) for c in columns])
    return wanted.empty_table()
