"""The cold tier's index in memory: compact codes of every cold record to find it by, and its fields.

A cold record costs here what finding it needs and no more: its id as a number, one bit per vector
dimension, the vector in int8 (384 bytes), its BM25 postings, its time, kind and the ids of the
records stored just before and after it. Its fields (text, tags, times, metadata: never its vector)
are kept beside, as Arrow columns by position, so the records a recall returns are taken from here
rather than read from LanceDB; a saved copy maps them from its file, so they cost memory only where
they are read.

A query reads the sign codes of every row (tiers/index/signs.py: a Hamming distance), keeps the nearest
few thousand, and ranks those by their int8 cosine; below `signs.EXACT_UP_TO` rows every row is
ranked by int8 cosine. Words are ranked by BM25 over the postings,
as the warm tier does. Like the warm index it is kept current row by row from the change feed, so
no write, move or compaction rebuilds it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.files import current_copy, new_copy, publish_copy
from tiers.index import bm25, samples, signs
from tiers.index.pieces import Pieces
from tiers.records import Kind, Record, Tier, records_of
from tiers.storage.tables import PIECES
from tiers.text.terms import DATE_TERM_PATTERN, length

LINKS = 2  # episode neighbours kept on each side
# A record's fields kept beside the codes (its id and tier are the index's own), to return it without a read.
FIELDS = [
    "content", "kind", "protected", "tags", "metadata", "source", "occurred_at", "created_at",
    "forget_after", "superseded_by", "superseded_at",
]  # fmt: skip
COLUMNS = ["id", *FIELDS, "before", "after", "terms", "vector", PIECES]  # what the index is filled from
_SAVED = ["ids", "alive", "durable", "kind", "occurred_us", "bits", "codes", "scale", "before", "after", "lengths"]
_MAPPED = {"bits", "codes", "_rows", "_counts"}  # read-only after a load: mapped from the file, not read whole
_FIELD_BATCH = 262_144  # rows per batch of fields
_COSINE_BLOCK = 512  # rows of int8 codes made float at a time for their cosines
_NONE = np.uint64(2**64 - 1)  # no neighbour (ids are 48 bits)
_NONE_INT = 2**64 - 1
_KINDS = [k.value for k in Kind]
_HEX = np.full(256, 0, dtype=np.uint64)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _i


class Candidate(NamedTuple):
    """A cold record a search found, with only what ranking needs; its full record is read if it ranks.

    A tuple, not a frozen dataclass: a search makes hundreds of them, and a tuple is made in about half the time.
    """

    id: str
    kind: str
    durable: bool
    before: tuple[str, ...]
    after: tuple[str, ...]
    cosine: float  # int8 cosine over the query's forms (0 when the row was not scored by meaning)
    words: float  # BM25 over the stored terms (0 when none of the query's terms occurs)


def id_numbers(ids: pa.Array | Sequence[str]) -> np.ndarray:
    """12-hex-digit ids as 48-bit numbers, vectorised."""
    array = pa.array(ids, pa.string()) if not isinstance(ids, pa.Array | pa.ChunkedArray) else ids
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not len(array):
        return np.zeros(0, dtype=np.uint64)
    raw = np.frombuffer(array.cast(pa.binary()).buffers()[2], dtype=np.uint8)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset : array.offset + len(array) + 1]
    starts = offsets[:-1]
    digits = raw[starts[:, None] + np.arange(12)]
    out = np.zeros(len(array), dtype=np.uint64)
    for column in range(12):
        out = (out << np.uint64(4)) | _HEX[digits[:, column]]
    return out


def id_text(number: np.uint64 | int) -> str:
    return f"{int(number):012x}"


@dataclass(frozen=True)
class ColdScope:
    """Which cold rows a search may return."""

    tags: tuple[str, ...] = ()
    since_us: int | None = None
    until_us: int | None = None

    @property
    def filtered(self) -> bool:
        """Whether a tag or a time keeps some live rows out."""
        return bool(self.tags) or self.since_us is not None or self.until_us is not None


class ColdIndex:
    """Codes of the cold records, addressed by position; removed rows leave a dead position."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.words_per_code = signs.words_for(dim)
        self.size = 0
        self.live = 0
        self.ids = np.zeros(0, dtype=np.uint64)
        self.alive = np.zeros(0, dtype=bool)
        self.durable = np.zeros(0, dtype=bool)
        self.kind = np.zeros(0, dtype=np.int8)
        self.occurred_us = np.zeros(0, dtype=np.int64)
        self.bits = np.zeros((self.words_per_code, 0), dtype=np.uint64)
        self.codes = np.zeros((0, dim), dtype=np.int8)
        self.scale = np.zeros(0, dtype=np.float32)
        self.before = np.zeros((0, LINKS), dtype=np.uint64)
        self.after = np.zeros((0, LINKS), dtype=np.uint64)
        self.lengths = np.zeros(0, dtype=np.float32)
        self.pieces = Pieces(dim, quantized=True)  # the long rows' pieces, in int8 as their vectors are
        self._length_sum = 0.0
        self._norms = bm25.Norms()
        self._sorted = np.zeros(0, dtype=np.uint64)  # ids of the bulk-loaded rows, sorted, and their positions
        self._sorted_at = np.zeros(0, dtype=np.int64)
        self._added: dict[int, int] = {}  # id -> position of rows added after the bulk load
        self._vocabulary: dict[str, int] = {}
        self._offsets = np.zeros(1, dtype=np.int64)
        self._rows = np.zeros(0, dtype=np.int32)
        self._counts = np.zeros(0, dtype=np.uint8)
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        # FIELDS of every position in order, in batches (a mapped copy's, then added ones), and where each ends:
        # taken from batch by batch, as Arrow's take over a chunked table first joins its chunks.
        self._fields: list[pa.RecordBatch] = []
        self._field_ends = np.zeros(0, dtype=np.int64)
        self.mapped_from: Path | None = None  # the saved copy this index maps, if it does
        self.saved_seen = -1  # the change feed's position when the copy this index was opened from was read

    # filling

    def load(self, batches: Iterable[pa.RecordBatch]) -> None:
        """Fill an empty index from scanned batches of the cold table (COLUMNS), in bulk."""
        assert self.size == 0, "load fills an empty index"
        owners, terms, counts = [], [], []
        for batch in batches:
            table = pa.Table.from_batches([batch]).combine_chunks()
            start = self.size
            self._append(table)
            owner, term, count = self._tokens(table["terms"], start)
            owners.append(owner)
            terms.append(term)
            counts.append(count)
        if self.size:
            self._build_postings(np.concatenate(owners), np.concatenate(terms), np.concatenate(counts))
        order = np.argsort(self.ids[: self.size], kind="stable")
        self._sorted, self._sorted_at = self.ids[order], order.astype(np.int64)

    def _tokens(self, column: pa.ChunkedArray, start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, term number, count) of every distinct term of every row, numbering new terms as they come."""
        by_row = pc.split_pattern(column.combine_chunks().fill_null(""), " ")
        tokens = pc.list_flatten(by_row)
        owner = pc.list_parent_indices(by_row).to_numpy(zero_copy_only=False).astype(np.int64)
        date = pc.match_substring_regex(tokens, DATE_TERM_PATTERN).to_numpy(zero_copy_only=False).astype(bool)
        n = len(column)
        counted = np.bincount(owner[~date], minlength=n).astype(np.float32)
        self.lengths[start : start + n] = np.maximum(counted, 1.0)
        self._length_sum += float(self.lengths[start : start + n].sum())
        encoded = pc.dictionary_encode(tokens)
        local = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        vocabulary = self._vocabulary
        numbers = np.asarray([vocabulary.setdefault(t, len(vocabulary)) for t in encoded.dictionary.to_pylist()])
        width = max(len(encoded.dictionary), 1)
        keys, count = np.unique(owner * width + local, return_counts=True)
        term = numbers[keys % width] if len(numbers) else np.zeros(0, dtype=np.int64)
        rows = (keys // width + start).astype(np.int32)
        return rows, term.astype(np.int32), np.minimum(count, 255).astype(np.uint8)

    def _build_postings(self, owner: np.ndarray, term: np.ndarray, count: np.ndarray) -> None:
        order = np.argsort(term, kind="stable")
        self._rows = owner[order]
        self._counts = count[order]
        del order
        self._offsets = np.concatenate([[0], np.cumsum(np.bincount(term, minlength=len(self._vocabulary)))])

    def put(self, table: pa.Table) -> None:
        """Add rows (COLUMNS of the cold table), replacing any with the same id."""
        if not table.num_rows:
            return
        table = table.combine_chunks()
        self.remove(table["id"].to_pylist())
        start = self.size
        self._append(table)
        for offset, text in enumerate(table["terms"].to_pylist()):
            position = start + offset
            words = (text or "").split()
            self.lengths[position] = length(words)
            self._length_sum += float(self.lengths[position])
            for word, count in Counter(words).items():
                posting = self._postings.setdefault(word, ([], []))
                posting[0].append(position)
                posting[1].append(min(count, 255))
        for offset, number in enumerate(self.ids[start : self.size]):
            self._added[int(number)] = start + offset

    def _append(self, table: pa.Table) -> None:
        n = table.num_rows
        start = self.size
        self._grow(start + n)
        end = start + n
        self.ids[start:end] = id_numbers(table["id"])
        self.alive[start:end] = True
        protected = table["protected"].to_numpy(zero_copy_only=False).astype(bool)
        current = pc.is_null(table["superseded_by"]).to_numpy(zero_copy_only=False).astype(bool)
        self.durable[start:end] = protected & current
        codes = {k: i for i, k in enumerate(_KINDS)}
        self.kind[start:end] = [codes.get(k, 0) for k in table["kind"].to_pylist()]
        self.occurred_us[start:end] = table["occurred_at"].cast(pa.int64()).to_numpy(zero_copy_only=False)
        flat = table["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        vectors = np.asarray(flat, dtype=np.float32).reshape(n, self.dim)
        self.bits[:, start:end] = signs.pack(vectors).T
        peak = np.maximum(np.abs(vectors).max(axis=1), 1e-12)
        self.codes[start:end] = np.rint(vectors * (127.0 / peak)[:, None]).astype(np.int8)
        self.scale[start:end] = peak / 127.0
        for side, column in ((self.before, "before"), (self.after, "after")):
            side[start:end] = _links(table[column])
        if PIECES in table.column_names:
            self.pieces.add_column(table[PIECES], start)
        self._keep_fields(table.select(FIELDS))
        self.size = end
        self.live += n

    def _keep_fields(self, table: pa.Table) -> None:
        batches = [*self._fields, *table.combine_chunks().to_batches()]
        small = len(batches)
        while small and batches[small - 1].num_rows < _FIELD_BATCH:
            small -= 1
        if len(batches) - small > 64:  # many small additions: one batch for them all
            batches[small:] = pa.Table.from_batches(batches[small:]).combine_chunks().to_batches()
        self._set_fields(batches)

    def _set_fields(self, batches: list[pa.RecordBatch]) -> None:
        self._fields = batches
        self._field_ends = np.cumsum([b.num_rows for b in batches], dtype=np.int64)

    def _grow(self, needed: int) -> None:
        capacity = len(self.alive)
        if needed <= capacity:
            return
        new = max(needed, capacity + capacity // 2, 1_024)

        def grown(array: np.ndarray, fill: object, axis: int = 0) -> np.ndarray:
            shape = list(array.shape)
            shape[axis] = new
            out = np.full(shape, fill, dtype=array.dtype)
            if axis == 0:
                out[:capacity] = array
            else:
                out[:, :capacity] = array
            return out

        self.ids = grown(self.ids, 0)
        self.alive = grown(self.alive, False)
        self.durable = grown(self.durable, False)
        self.kind = grown(self.kind, 0)
        self.occurred_us = grown(self.occurred_us, 0)
        self.bits = grown(self.bits, 0, axis=1)
        self.codes = grown(self.codes, 0)
        self.scale = grown(self.scale, 0.0)
        self.before = grown(self.before, _NONE)
        self.after = grown(self.after, _NONE)
        self.lengths = grown(self.lengths, 0.0)

    def remove(self, ids: Iterable[str]) -> None:
        for rid in ids:
            position = self.position(rid)
            if position < 0:
                continue
            self.alive[position] = False
            self.live -= 1
            self._length_sum -= float(self.lengths[position])
            self._added.pop(int(self.ids[position]), None)

    def forget(self, ids: Iterable[str]) -> None:
        """Remove records for good: their fields leave this process's memory too (see `detach`)."""
        self.remove(ids)
        self.detach()

    def detach(self) -> None:
        """Stop mapping the saved copy (a forget removed it) and blank the fields of every dead position.

        Once removed, a mapped file lives on, unlinked, while a process maps it: this lets it go, at the
        cost of holding the index in memory until the next full read saves a new copy.
        """
        if self.mapped_from is not None:
            for name in _MAPPED:
                setattr(self, name, np.array(getattr(self, name)))
            self.mapped_from = None
        if not self._fields:
            return
        fields = self.fields()
        dead = pa.array(~self.alive[: self.size])
        content = pc.if_else(dead, pa.scalar(None, pa.string()), fields["content"])
        metadata = pc.if_else(dead, pa.scalar(None, pa.string()), fields["metadata"])
        fields = fields.set_column(fields.schema.get_field_index("content"), "content", content)
        fields = fields.set_column(fields.schema.get_field_index("metadata"), "metadata", metadata)
        self._set_fields(fields.combine_chunks().to_batches(max_chunksize=_FIELD_BATCH))

    def fields(self) -> pa.Table:
        """FIELDS of every position, dead ones included."""
        return pa.Table.from_batches(self._fields) if self._fields else pa.table({})

    def records(self, ids: Sequence[str], hints: Sequence[int] | None = None) -> list[Record]:
        """The live records among `ids`, in full, as this index last saw the table (no read).

        `hints`: where each id was when a search found it; taken when that position still holds it alive (a
        lookup by id otherwise), which spares a search of the sorted ids for each of a recall's records.
        """
        if hints is None:
            hints = [-1] * len(ids)
        wanted = dict(zip(ids, hints, strict=True))
        found = [(rid, p) for rid, p in ((rid, self._hinted(rid, hint)) for rid, hint in wanted.items()) if p >= 0]
        if not found:
            return []
        positions = np.asarray([p for _, p in found], dtype=np.int64)
        batch_of = np.searchsorted(self._field_ends, positions, side="right")
        taken: list[pa.RecordBatch] = []
        slots: list[int] = []
        for b in np.unique(batch_of):  # a take per batch, then one pass making records from them all
            at = np.flatnonzero(batch_of == b)
            start = int(self._field_ends[b]) - self._fields[b].num_rows
            taken.append(self._fields[b].take(pa.array(positions[at] - start)))
            slots += at.tolist()
        records = records_of(pa.Table.from_batches(taken), [found[i][0] for i in slots], Tier.COLD)
        out: list[Record] = [records[0]] * len(found)
        for slot, record in zip(slots, records, strict=True):
            out[slot] = record
        return out

    def _hinted(self, rid: str, hint: int) -> int:
        if 0 <= hint < self.size and self.alive[hint] and int(self.ids[hint]) == int(rid, 16):
            return hint
        return self.position(rid)

    def position(self, rid: str) -> int:
        """Where a live record is, or -1."""
        number = int(rid, 16)
        position = self._added.get(number)
        if position is None:
            at = int(np.searchsorted(self._sorted, np.uint64(number)))
            if at >= len(self._sorted) or int(self._sorted[at]) != number:
                return -1
            position = int(self._sorted_at[at])
        return position if self.alive[position] else -1

    def positions_of(self, numbers: np.ndarray) -> np.ndarray:
        """`position` of each of these ids (as numbers), in one pass: -1 where it is not a live row."""
        numbers = numbers.astype(np.uint64)
        out = np.full(len(numbers), -1, dtype=np.int64)
        if len(self._sorted):
            at = np.minimum(np.searchsorted(self._sorted, numbers), len(self._sorted) - 1)
            hit = self._sorted[at] == numbers
            out[hit] = self._sorted_at[at[hit]]
        if self._added:
            for i, number in enumerate(numbers.tolist()):
                out[i] = self._added.get(number, out[i])
        live = out >= 0
        live[live] = self.alive[out[live]]
        out[~live] = -1
        return out

    # saved copies: a restarted server maps the last full read instead of reading the table again

    def save(self, folder: Path, stamp: dict[str, object]) -> bool:
        """Write this index (freshly loaded: nothing added since) under `folder`, with `stamp` to check it by.

        A copy is a directory of .npy and Arrow files (tiers/files.py: the newest one is read, older ones removed).
        """
        if self._postings or self._added:
            return False
        target = new_copy(folder)
        n = self.size
        for name in _SAVED:
            array = getattr(self, name)
            np.save(target / f"{name}.npy", array[:, :n] if name == "bits" else array[:n])
        for name in ("_sorted", "_sorted_at", "_offsets", "_rows", "_counts"):
            np.save(target / f"{name}.npy", getattr(self, name))
        for name, array in self.pieces.arrays().items():
            np.save(target / f"{name}.npy", array)
        fields = self.fields().combine_chunks()  # batches of _FIELD_BATCH: a take reads one batch or a few
        with pa.OSFile(str(target / "fields.arrow"), "wb") as sink, pa.ipc.new_file(sink, fields.schema) as writer:
            writer.write_table(fields, max_chunksize=_FIELD_BATCH)
        words = sorted(self._vocabulary, key=self._vocabulary.__getitem__)
        meta = {
            **stamp,
            "dim": self.dim,
            "size": n,
            "live": self.live,
            "length_sum": self._length_sum,
        }
        with pa.OSFile(str(target / "vocabulary.arrow"), "wb") as sink:
            vocabulary = pa.table({"word": pa.array(words, pa.string())})
            with pa.ipc.new_file(sink, vocabulary.schema) as writer:
                writer.write_table(vocabulary)
        (target / "meta.json").write_text(json.dumps(meta))
        publish_copy(folder, target)
        return True

    @classmethod
    def open_saved(cls, folder: Path, stamp: dict[str, object]) -> ColdIndex | None:
        """The index saved under `folder` if its stamp matches, else None (nothing saved, another store, damage)."""
        try:
            opened = current_copy(folder, stamp)
            if opened is None:
                return None
            target, meta = opened
            index = cls(int(meta["dim"]))
            for name in [*_SAVED, "_sorted", "_sorted_at", "_offsets", "_rows", "_counts"]:
                array = np.load(target / f"{name}.npy", mmap_mode="r" if name in _MAPPED else None)
                setattr(index, name, array.view(np.ndarray))  # still mapped, without np.memmap's cost per slice
            index.size, index.live = int(meta["size"]), int(meta["live"])
            index._length_sum = float(meta["length_sum"])
            words = pa.ipc.open_file(pa.memory_map(str(target / "vocabulary.arrow"))).read_all()["word"]
            index._vocabulary = {word: i for i, word in enumerate(words.to_pylist())}
            index.saved_seen = int(meta["seen"])
            pieces = {name: np.load(target / f"{name}.npy") for name in index.pieces.names()}
            fields = pa.ipc.open_file(pa.memory_map(str(target / "fields.arrow"))).read_all()
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
            return None
        if len(index.alive) != index.size or index.bits.shape != (index.words_per_code, index.size):
            return None
        if fields.num_rows != index.size or fields.schema.names != FIELDS:
            return None
        if not index.pieces.set_arrays(pieces, index.size):
            return None
        index._set_fields(fields.to_batches())
        index.mapped_from = target
        return index

    # search

    def search(
        self, vectors: np.ndarray, terms: Sequence[str], k: int, scope: ColdScope, pieces: bool = True
    ) -> ColdHits:
        """The `k` best rows by meaning and the `k` best by words, with what ranking needs of each; with `pieces`,
        a long row's cosine is its best piece's where that is higher (tiers/index/pieces.py)."""
        queries = np.atleast_2d(vectors).astype(np.float32)
        mask = self._mask(scope)
        # With no dead position and no filter every posting is in scope, so none is looked up in the mask:
        # a query's postings run to a fair share of a large tier's rows, and each lookup costs.
        in_scope = None if self.live == self.size and not scope.filtered else mask
        words, weight = self._bm25(terms, in_scope)
        hits = ColdHits(self, queries, words, weight, pieces)
        if not self.live or not mask.any():
            return hits
        by_words = np.flatnonzero(words > 0)
        hits.spread(mask, by_words)
        if len(by_words) > k:
            by_words = by_words[np.argpartition(-words[by_words], k)[:k]]
        exact = self.live <= signs.EXACT_UP_TO
        pool = np.flatnonzero(mask) if exact else signs.nearest(self.bits, self.size, queries, [in_scope])
        owners = hits.piece_owners[mask[hits.piece_owners]]
        if not exact and len(owners):  # a long row is scored by its pieces too, whatever its sign code
            pool = np.union1d(pool, owners)
        cosine = hits.cosine(pool)
        by_meaning = pool[np.argpartition(-cosine, k)[:k]] if len(pool) > k else pool
        chosen = np.unique(np.concatenate([by_meaning, by_words]))
        at = np.minimum(np.searchsorted(pool, chosen), len(pool) - 1)  # pool is sorted
        scored = pool[at] == chosen
        known = np.zeros(len(chosen), dtype=np.float32)
        known[scored] = cosine[at[scored]]
        known[~scored] = hits.cosine(chosen[~scored])  # found by words alone
        hits.add(chosen, known)
        return hits

    def _mask(self, scope: ColdScope) -> np.ndarray:
        mask = self.alive[: self.size].copy()
        if scope.tags:
            mask &= self._tagged(scope.tags)
        if scope.since_us is not None:
            mask &= self.occurred_us[: self.size] >= scope.since_us
        if scope.until_us is not None:
            mask &= self.occurred_us[: self.size] <= scope.until_us
        return mask

    def _tagged(self, tags: Sequence[str]) -> np.ndarray:
        """Positions holding any of these tags, read from the fields' tag lists."""
        out = np.zeros(self.size, dtype=bool)
        wanted = pa.array(list(dict.fromkeys(tags)), pa.string())
        start = 0
        for batch in self._fields:
            lists = batch.column("tags")
            hit = pc.is_in(pc.list_flatten(lists), value_set=wanted)
            rows = pc.list_parent_indices(lists).filter(hit).to_numpy(zero_copy_only=False)
            out[start + rows.astype(np.int64)] = True
            start += batch.num_rows
        return out

    def _bm25(self, terms: Sequence[str], mask: np.ndarray | None) -> tuple[np.ndarray, float]:
        """BM25 of every row in scope (`mask`; None: every position, all of them live) by its statistics, and
        the terms' weight there (tiers/index/bm25.py)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.live:
            return scores, 0.0
        norms = self._norms.of(self.lengths, self.size, self.live, self._length_sum)
        having = []
        for term in dict.fromkeys(terms):
            rows, counts = self._posting(term)
            if mask is not None:
                keep = mask[rows]
                rows, counts = rows[keep], counts[keep]
            having.append(len(rows))
            if len(rows):
                bm25.add(scores, rows, counts, np.take(norms, rows), bm25.idf(self.live, len(rows)))
        return scores, bm25.query_weight(self.live, having)

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        parts_rows, parts_counts = [], []
        number = self._vocabulary.get(term)
        if number is not None and number + 1 < len(self._offsets):
            start, end = self._offsets[number], self._offsets[number + 1]
            parts_rows.append(self._rows[start:end])
            parts_counts.append(self._counts[start:end].astype(np.float32))
        added = self._postings.get(term)
        if added is not None:
            parts_rows.append(np.asarray(added[0], dtype=np.int64))
            parts_counts.append(np.asarray(added[1], dtype=np.float32))
        if not parts_rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if len(parts_rows) == 1:  # dead rows are dropped by the search's mask
            return parts_rows[0], parts_counts[0]
        return np.concatenate(parts_rows), np.concatenate(parts_counts)


class Found:
    """Cold rows a search found, column by column, with only what ranking needs; a row's record is read if it ranks.

    Columns, not an object per row: a search finds hundreds of rows, and making a tuple and five hex ids for
    each took twice the time this does; the ids are made in one pass, the further links' ids only where asked.
    """

    def __init__(self, index: ColdIndex, positions: np.ndarray, cosine: np.ndarray, words: np.ndarray) -> None:
        self.positions = positions  # where each row is in `index`
        self.ids = _hex(index.ids[positions])
        self.kind = _KIND_TEXT[index.kind[positions]]
        self.durable = index.durable[positions]
        self.before = index.before[positions]  # (rows, LINKS) ids as numbers, nearest first; _NONE: no neighbour
        self.after = index.after[positions]
        self._index = index  # read for the rows' codes only when asked (vectors): most recalls never do
        self.cosine = cosine.astype(np.float32)  # int8 cosine over the query's forms (0: not scored by meaning)
        self.words = words.astype(np.float32)  # BM25 over the stored terms (0: none of the query's terms)
        self._first: tuple[list[str | None], list[str | None]] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> Found:
        """These rows (positions in this Found), in this order."""
        out = object.__new__(Found)
        out.ids = [self.ids[row] for row in rows.tolist()]
        out._first = None
        out._index = self._index
        for name in ("positions", "kind", "durable", "before", "after", "cosine", "words"):
            setattr(out, name, getattr(self, name)[rows])
        return out

    def vectors(self) -> np.ndarray:
        """The rows' vectors as their int8 codes give them (unit length to within the codes' rounding)."""
        index = self._index
        return np.take(index.codes, self.positions, axis=0).astype(np.float32) * index.scale[self.positions][:, None]

    def first_links(self) -> tuple[list[str | None], list[str | None]]:
        """Each row's nearest neighbour before and after it, by id (None: it has none)."""
        if self._first is None:
            self._first = _hex_or_none(self.before[:, 0]), _hex_or_none(self.after[:, 0])
        return self._first

    def links(self, row: int, reach: int) -> list[str]:
        """Ids of a row's neighbours up to `reach` on each side: before it, nearest first, then after it."""
        # A few numbers: formatted one by one (numpy's pass has a fixed cost per call, and a recall makes dozens)
        numbers = self.before[row, :reach].tolist() + self.after[row, :reach].tolist()
        return [f"{number:012x}" for number in numbers if number != _NONE_INT]

    def candidates(self) -> list[Candidate]:
        """The rows as Candidates (for a reader that wants one object a row; a recall reads the columns)."""
        before, after = ([tuple(_hex(links[links != _NONE])) for links in side] for side in (self.before, self.after))
        columns = zip(self.ids, self.kind.tolist(), self.durable.tolist(), before, after, strict=True)
        return [
            Candidate(rid, kind, durable, b, a, float(c), float(w))
            for (rid, kind, durable, b, a), c, w in zip(columns, self.cosine, self.words, strict=True)
        ]


class ColdHits:
    """One search's rows found, and the means to score more rows (a hit's neighbours) the same way."""

    def __init__(
        self, index: ColdIndex, queries: np.ndarray, words: np.ndarray, weight: float, pieces: bool = True
    ) -> None:
        self.index = index
        self.queries = queries
        self.words = words
        self.weight = weight  # the query's terms' weight among the cold rows, to put `words` on a shared scale
        self.found = Found(index, np.zeros(0, dtype=np.int64), np.zeros(0, np.float32), np.zeros(0, np.float32))
        # Even samples of the scores of every row in scope (by meaning) and of every row any term matches (by
        # words), with how many rows each stands for: the medians ranking scales from, over the whole tier.
        self.cosines = samples.Sample(np.zeros(0, dtype=np.float32), 0)
        self.worded = samples.Sample(np.zeros(0, dtype=np.float32), 0)
        # The long rows (those with pieces) and their best piece's cosine, which `cosine` takes where it is higher.
        self.piece_owners, self._piece_best = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if pieces:
            self.piece_owners, self._piece_best = index.pieces.best(queries, index.alive[: index.size])

    def spread(self, mask: np.ndarray, worded: np.ndarray) -> None:
        """Sample the scores of the rows in scope (`mask`) and of the rows holding a term (`worded`)."""
        inside = int(np.count_nonzero(mask))
        rows = np.arange(0, len(mask), max(1, len(mask) // samples.MEDIAN_SAMPLE))
        rows = rows[mask[rows]]
        if len(rows) < samples.MEDIAN_SAMPLE // 4 < inside:  # a narrow scope: sample the rows in it
            rows = samples.sample(np.flatnonzero(mask)).values
        self.cosines = samples.Sample(self.cosine(rows), inside)
        self.worded = samples.Sample(self.words[samples.sample(worded).values], len(worded))

    @property
    def candidates(self) -> list[Candidate]:
        return self.found.candidates()

    def cosine(self, positions: np.ndarray) -> np.ndarray:
        """The int8 cosine of these rows to the query (its best form); a long row's, its best piece's where higher."""
        index = self.index
        if not len(positions):
            return np.zeros(0, dtype=np.float32)
        # np.take, not fancy indexing: the same rows, faster
        codes = np.take(index.codes, positions, axis=0)
        # Made float a block at a time, each block multiplied while it is in cache, not all at once: the same
        # rankings (values within float rounding), and no float copy of every row scored.
        queries = np.ascontiguousarray(self.queries.T)
        out = np.empty(len(positions), dtype=np.float32)
        block = np.empty((min(_COSINE_BLOCK, len(positions)), codes.shape[1]), dtype=np.float32)
        for low in range(0, len(positions), _COSINE_BLOCK):
            n = min(_COSINE_BLOCK, len(positions) - low)
            np.copyto(block[:n], codes[low : low + n], casting="unsafe")
            np.max(block[:n] @ queries, axis=1, out=out[low : low + n])
        out *= index.scale[positions]
        if len(self.piece_owners):
            at = np.minimum(np.searchsorted(self.piece_owners, positions), len(self.piece_owners) - 1)
            long = self.piece_owners[at] == positions
            out[long] = np.maximum(out[long], self._piece_best[at[long]])
        return out

    def add(self, positions: np.ndarray, cosine: np.ndarray) -> None:
        self.found = Found(self.index, positions, cosine, self.words[positions])

    def neighbours(self, rows: np.ndarray) -> Found:
        """The rows just before and after these rows of `found` (positions in it) that it does not hold yet."""
        found = self.found
        numbers = np.concatenate([found.before[rows, 0], found.after[rows, 0]])
        numbers = np.unique(numbers[numbers != _NONE])
        positions = self.index.positions_of(numbers)
        positions = np.setdiff1d(positions[positions >= 0], found.positions)
        return Found(self.index, positions, self.cosine(positions), self.words[positions])

    def lookup(self, ids: Sequence[str]) -> Found:
        """The rows of these ids where they are live cold rows (a hit's neighbours, not found by the search)."""
        positions = self.index.positions_of(id_numbers(list(ids))) if ids else np.zeros(0, dtype=np.int64)
        positions = positions[positions >= 0]
        return Found(self.index, positions, self.cosine(positions), self.words[positions])


_KIND_TEXT = np.asarray(_KINDS)
_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_NIBBLES = np.arange(44, -1, -4, dtype=np.uint64)  # the 12 hex digits of a 48-bit id, most significant first


def _hex(numbers: np.ndarray) -> list[str]:
    """48-bit numbers as 12-digit hex ids, in one numpy pass."""
    digits = _DIGITS[(numbers.astype(np.uint64)[:, None] >> _NIBBLES) & np.uint64(15)]
    return digits.view("S12").ravel().astype("U12").tolist()


def _hex_or_none(numbers: np.ndarray) -> list[str | None]:
    texts: list[str | None] = list(_hex(numbers))
    for at in np.flatnonzero(numbers == _NONE).tolist():
        texts[at] = None
    return texts


def _links(column: pa.ChunkedArray) -> np.ndarray:
    """The first LINKS ids of each row's list of neighbour ids, as numbers (_NONE where there are fewer)."""
    lists = column.combine_chunks()
    out = np.full((len(lists), LINKS), _NONE, dtype=np.uint64)
    if not len(lists):
        return out
    lists = lists.fill_null(pa.scalar([], pa.list_(pa.string())))
    lengths = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
    for slot in range(LINKS):
        has = np.flatnonzero(lengths > slot)
        if len(has):
            values = pc.list_element(lists.take(pa.array(has)), slot)
            out[has, slot] = id_numbers(values)
    return out
