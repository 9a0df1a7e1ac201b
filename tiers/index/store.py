"""The warm and cold tiers of one namespace: two LanceDB tables, each with an index in memory.

Warm is small and mirrored whole, searched exactly (tiers/index/warm.py); of cold, compact codes and the
records' fields are held (tiers/index/cold.py; mapped from a saved copy once it is large), its vectors
stay on disk (or object storage), so a recall reads neither table. Both indexes are kept current
row by row from a change feed in the ledger, so no write, move or compaction costs work in
proportion to the store. A full read of a large tier saves a copy of its index, which the next
process opens and brings up to date from the feed instead of reading the table again (a forget
removes both copies, as they hold its words). A move between the tiers copies the rows, then
deletes them from where they were; a crash in between is finished when the store is next opened
for writing.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute

from tiers.errors import CorruptFile, ModelMismatch
from tiers.files import read_json_object, write_atomic
from tiers.index.cold import COLUMNS as COLD_COLUMNS
from tiers.index.cold import ColdIndex, ColdScope
from tiers.index.columns import pieces_column, rows_table, stored_values, vector_column
from tiers.index.hits import Candidate, ColdHits, Found
from tiers.index.rows import new_row
from tiers.index.saved import open_cold, open_warm, save_cold, save_warm
from tiers.index.synced import Kind, Synced
from tiers.index.warm import Row, WarmIndex, rows_of
from tiers.model.embedder import DEFAULT_MODEL, PIECE_WORDS, is_long
from tiers.records import Record, Tier
from tiers.storage.ledger import Ledger, Move
from tiers.storage.tables import PIECES, RECORD_COLUMNS, Connection, Table, check_id, schema
from tiers.text.terms import document_terms
from tiers.text.timeparse import as_utc

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
DEFAULT_DIM = 384  # of the default model: what a damaged store.json is told to name when nothing else is known
# A memory of more than PIECE_WORDS words has more than this many characters (a Chinese character is a word).
LONG_CHARS = PIECE_WORDS
# What store.json's `pieces` says once every long record has its pieces. Before words were counted by script,
# it said `true`: a long Chinese or Japanese memory was one word then, and a store marked so is looked at once more.
PIECES_DONE = 2
_ROW_COLUMNS = [*RECORD_COLUMNS, "hash", "terms", "vector", PIECES]
_HIT_COLUMNS = [*RECORD_COLUMNS, "hash", "vector"]

__all__ = [
    "Candidate", "ColdHits", "ColdScope", "Found", "Store", "check_id", "new_row", "pieces_column", "vector_column",
]  # fmt: skip


def _read_warm(table: Table) -> WarmIndex:
    index = WarmIndex(table.dim)
    batches = list(table.scan(_ROW_COLUMNS))
    if batches:
        index.load(pa.Table.from_batches(batches))
    return index


def _warm_catch_up(index: WarmIndex, table: Table, changed: set[str]) -> None:
    """Read again the warm rows another process changed (present ones replace, absent ones leave)."""
    rows = rows_of(table.get(sorted(changed), _ROW_COLUMNS))
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
        meta = self._check_model(cold_uri)
        local_uri = str(folder / "lance")
        local = Connection(local_uri)  # LanceDB is connected (and imported) at the first write
        names = meta.get("tables", {"warm": "warm", "cold": "cold"})
        self.warm_table = Table(local, names["warm"], dim, local_uri, self.read_lock, indexed=False)
        cold_db = Connection(cold_uri, storage_options) if cold_uri else local
        self.cold_table = Table(cold_db, names["cold"], dim, cold_uri or local_uri, self.read_lock, indexed=True)
        # The single table of a store made before the tiers were split (schema 1), moved over by `recover`.
        self._legacy = local() if (folder / "lance" / "memories.lance").is_dir() else None
        # Each tier's index, and where the last full read of it is saved for the next process. The warm keeper's
        # guard is taken before the cold one's when both are held, never after.
        self._warm = Synced(
            Tier.WARM, self.warm_table, ledger, folder / "warm-index", WARM, partial(self._stamp, self.warm_table)
        )
        self._cold = Synced(
            Tier.COLD, self.cold_table, ledger, folder / "cold-index", COLD, partial(self._stamp, self.cold_table)
        )

    def close(self) -> None:
        """Let go of the in-memory indexes; the tables stay as they are."""
        with self._warm.guard, self._cold.guard:
            self._warm.close()
            self._cold.close()

    # the model the vectors were made by

    def _check_model(self, cold_uri: str | None) -> dict[str, Any]:
        path = self.folder / "store.json"
        if not path.exists():
            meta: dict[str, Any] = {"model": self.model, "dim": self.dim, "schema": SCHEMA_VERSION}
            # A new folder's tables are new, and every long record they get has its pieces; a cold tier elsewhere
            # may already hold records from before pieces were kept, so the backfill looks once
            # (tiers/namespace/backfill.py).
            if cold_uri is None:
                meta[PIECES] = PIECES_DONE
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
        self.recover_writes()
        pending = self.ledger.pending_moves()
        if not pending:
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
        self.compact()  # what the interrupted sweep would have done next

    def recover_writes(self) -> None:
        """Feed the records a write killed before its feed entry left changed (`Ledger.intend`). Under the lock."""
        self._intend([], None)

    def _intend(self, rids: Sequence[str], tier: Tier | None) -> None:
        """Note the records a write is about to change, before it writes the table; caller holds the lock."""
        left = self.ledger.intend(rids, None if tier is None else tier.value)
        if left:
            log.warning(
                "a write to %s was cut short before its change feed entry: %d records read again", self.folder, left
            )

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

    # the indexes in memory, each kept in step with its table by a keeper (tiers/index/synced.py)

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

    def _drop_saved(self) -> None:
        """Remove the saved copies of both indexes (they hold the words of every record they were made from)."""
        shutil.rmtree(self._cold.saved, ignore_errors=True)
        shutil.rmtree(self._warm.saved, ignore_errors=True)

    def _changed(
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

    def cold_search(
        self, vectors: np.ndarray, terms: Sequence[str], k: int, scope: ColdScope, pieces: bool = True
    ) -> ColdHits | None:
        """Search the cold tier's index by meaning and by words (`pieces`: long rows by their best piece too);
        None while nothing was ever sent cold."""
        if self._cold.index is None and not self.cold_table.count():
            return None  # not even the index is loaded
        with self.cold() as index:
            return index.search(vectors, list(terms), k, scope, pieces)

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of these live records (a cold one's as its int8 code gives it), by id."""
        out: dict[str, np.ndarray] = {}
        with self.warm() as index:
            for rid in ids:
                position = index.positions.get(rid)
                if position is not None and index.alive[position]:
                    out[rid] = index.vectors[position].copy()
        rest = [rid for rid in dict.fromkeys(ids) if rid not in out]
        if rest and (self._cold.index is not None or self.cold_table.count()):
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
        if self._cold.index is not None or self.cold_table.count():
            scope = cold_scope((), None, None)
            for row, vector in enumerate(vectors):
                with self.cold() as cold:
                    found = cold.search(vector, [], k, scope, False).found
                order = np.argsort(-found.cosine, kind="stable")[:k]
                out[row] += [(found.ids[i], float(found.cosine[i])) for i in order]
        return out

    def cold_pieces(self, ids: Sequence[str]) -> dict[str, np.ndarray | None]:
        """The piece vectors of these cold records (None: a short one, or one stored before pieces were kept)."""
        with self._cold.guard:
            index = self._cold.index
            if index is None:
                return {}
            return {rid: index.pieces.of(p) if (p := index.position(rid)) >= 0 else None for rid in ids}

    def cold_lookup(self, hits: ColdHits, ids: Sequence[str]) -> Found:
        """Cold ids the search did not find (a hit's neighbours), scored as it scored its own rows."""
        with self._cold.guard:
            return hits.lookup(ids)

    def cold_neighbours(self, hits: ColdHits, rows: np.ndarray) -> Found:
        """The cold rows stored just before and after these rows the search found, scored as it scored them."""
        with self._cold.guard:
            return hits.neighbours(rows)

    def cold_records(self, ids: Sequence[str], hints: Sequence[int] | None = None) -> list[Record]:
        """Cold records in full (those a recall returns), from the cold index: no read of the table.

        Fewer than asked when one left cold since the search that found it; `hints`: where the search found
        each one in the cold index.
        """
        if not ids:
            return []
        with self.cold() as index:
            return index.records(ids, hints)

    def lacking_pieces(self) -> list[tuple[Tier, str]]:
        """Every long record without pieces, (tier, id): stored before pieces were kept. Reads the text of
        those of more than LONG_CHARS characters once: a filter LanceDB applies as it scans."""
        found: list[tuple[Tier, str]] = []
        for tier in (Tier.WARM, Tier.COLD):
            table = self.table(tier)
            for batch in table.scan(["id", "content"], where=_lacking(table), batch=1_000):
                for rid, text in zip(batch.column("id").to_pylist(), batch.column("content").to_pylist(), strict=True):
                    if is_long(text):
                        found.append((tier, rid))
        return found

    def texts_lacking_pieces(self, records: Sequence[tuple[Tier, str]]) -> list[tuple[Tier, str, str]]:
        """The text of those of these records still in their tier and still without pieces, (tier, id, text)."""
        out: list[tuple[Tier, str, str]] = []
        for tier in (Tier.WARM, Tier.COLD):
            ids = [rid for t, rid in records if t is tier]
            if not ids:
                continue
            table = self.table(tier)
            rows = table.get(ids, ["id", "content", PIECES])
            lacking = pa.compute.is_null(rows[PIECES]).to_pylist()
            for rid, text, none in zip(rows["id"].to_pylist(), rows["content"].to_pylist(), lacking, strict=True):
                if none and is_long(text):
                    out.append((tier, rid, text))
        return out

    def pieces_complete(self) -> bool:
        """Whether store.json says every long record has its pieces (a store made since, re-embedded, or filled)."""
        return read_meta(self.folder / "store.json").get(PIECES) == PIECES_DONE

    def mark_pieces_complete(self) -> None:
        """Note in store.json that no long record lacks its pieces any more: no sweep looks again."""
        path = self.folder / "store.json"
        write_meta(path, read_meta(path) | {PIECES: PIECES_DONE})

    def fill_pieces(self, tier: Tier, ids: Sequence[str], vectors: np.ndarray, pieces: Sequence[np.ndarray]) -> int:
        """Give these records of `tier` their vector and pieces as a write of them today would; the number given.

        One write (a merge by id): a record forgotten or moved since it was read is left as it is.
        """
        table = self.table(tier)
        columns = {"id": list(ids), "vector": vector_column(vectors, self.dim), PIECES: pieces_column(pieces, self.dim)}
        self._intend(ids, tier)
        table.merge(pa.table(columns))
        rows = table.get(ids)
        stored = rows["id"].to_pylist()
        if tier is Tier.WARM:
            self._changed(stored, tier, warm=partial(WarmIndex.put, rows=rows_of(rows)))
        else:
            self._changed(stored, tier, cold=partial(ColdIndex.put, table=rows.select(COLD_COLUMNS)))
        return len(stored)

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
        self._intend([r.record.id for r in rows], Tier.WARM)
        self.warm_table.add(rows_table(rows, self.dim))
        self._changed([r.record.id for r in rows], Tier.WARM, warm=lambda index: index.put(rows))

    def load(self, rows: pa.Table) -> None:
        """Bulk-load rows of the tier schema as they are (a benchmark's fill), each into the table of its tier.

        Every process reloads its warm index afterwards, once: cheaper than a feed entry per row.
        """
        for tier in (Tier.WARM, Tier.COLD):
            chosen = rows.filter(pa.compute.equal(rows["tier"], tier.value))
            if chosen.num_rows:
                self.table(tier).add(chosen)
        with self._warm.guard:
            self.ledger.changed(["*"])

    def restore(self, rows: list[Row]) -> None:
        """Add records exactly as given (ids, tiers, times: an import), each to the table of its tier."""
        for tier in (Tier.WARM, Tier.COLD):
            chosen = [r for r in rows if r.record.tier is tier]
            if not chosen:
                continue
            table = rows_table(chosen, self.dim)
            ids = [r.record.id for r in chosen]
            self._intend(ids, tier)
            self.table(tier).add(table)
            if tier is Tier.WARM:
                self._changed(ids, tier, warm=partial(WarmIndex.put, rows=chosen))
            else:
                self._changed(ids, tier, cold=partial(ColdIndex.put, table=table.select(COLD_COLUMNS)))

    def update(self, records: Sequence[Record], values: dict[str, Any]) -> None:
        """Set the same field values on these records, wherever they are, one write per tier."""
        for tier in (Tier.WARM, Tier.COLD):
            chosen = [r for r in records if r.tier is tier]
            if not chosen:
                continue
            self._intend([r.id for r in chosen], tier)
            self.table(tier).update([r.id for r in chosen], stored_values(values))
            if tier is Tier.WARM:
                changed = [replace(r, **values) for r in chosen]
                replaced = lambda index, c=changed: [index.replace_record(r) for r in c]  # noqa: E731
                self._changed([r.id for r in chosen], tier, warm=replaced)
            else:
                self._changed([r.id for r in chosen], tier)  # the cold index reads the rows again when next searched

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
                self._changed(ids, None, warm=warm, cold=cold)
            else:
                moved = rows.select(COLD_COLUMNS)
                warm, cold = partial(WarmIndex.remove, ids=ids), partial(ColdIndex.put, table=moved)
                self._changed(ids, None, warm=warm, cold=cold)
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
        self._drop_saved()  # the saved indexes may hold its words
        self._intend([record.id], None)
        table.delete([record.id])
        ids, forget = [record.id], partial(ColdIndex.forget, ids=[record.id])
        if record.tier is Tier.COLD:
            self._changed(ids, Tier.COLD, cold=forget)
        elif moved:  # once cold: the cold indexes (this one and other processes') still hold its fields
            self._changed(ids, None, warm=partial(WarmIndex.remove, ids=ids), cold=forget)
        else:
            self._changed(ids, Tier.WARM, warm=partial(WarmIndex.remove, ids=ids))
        table.compact(scrub=True)
        # A move deletes the row where it was, which only marks it: that table's files still hold its text.
        if moved:
            self.table(other).compact(scrub=True)
        self._drop_saved()  # again: a copy another process saved from a read that began before the delete

    def after_write(self, before: int, after: int) -> None:
        """Compact warm each time the row counter (shared by every process) passes a multiple of `compact_every`."""
        if after // self.compact_every > before // self.compact_every:
            self.warm_table.compact()

    def compact(self) -> None:
        self.warm_table.compact()
        self.cold_table.compact()
        self.ledger.trim_changes()

    def overwrite(self, tier: Tier, batches: Iterator[pa.RecordBatch], model: str, dim: int) -> None:
        self._drop_saved()
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


def _lacking(table: Table) -> str:
    """The filter of the rows that may be long records without pieces (all long rows, before the column)."""
    return f"length(content) > {LONG_CHARS}" + (f" AND {PIECES} IS NULL" if table.has_pieces() else "")


def cold_scope(tags: Sequence[str], since: datetime | None, until: datetime | None) -> ColdScope:
    """What a cold search may return: rows with one of these tags, of a time in this span."""
    return ColdScope(tuple(tags), _micros(since), _micros(until))


def _micros(value: datetime | None) -> int | None:
    return None if value is None else int(as_utc(value).timestamp() * 1_000_000)
