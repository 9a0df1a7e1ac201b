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

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.index import bm25, signs
from tiers.index.fields import FIELDS, Fields
from tiers.index.hits import Candidate, ColdHits, Found
from tiers.index.ids import NONE, id_numbers, id_text
from tiers.index.pieces import Pieces
from tiers.records import Kind, Record
from tiers.storage.tables import PIECES
from tiers.text.terms import DATE_TERM_PATTERN, length

__all__ = ["COLUMNS", "Candidate", "ColdHits", "ColdIndex", "ColdScope", "Found", "id_numbers", "id_text"]

LINKS = 2  # episode neighbours kept on each side
COLUMNS = ["id", *FIELDS, "before", "after", "terms", "vector", PIECES]  # what the index is filled from
# Read-only after a load: a saved copy maps them from its file (tiers/index/saved.py), not read whole.
MAPPED = {"bits", "codes", "_rows", "_counts"}
_KINDS = [k.value for k in Kind]


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
        self.kept_fields = Fields()  # each position's record fields, to return its record without a read
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
        self.kept_fields.append(table.select(FIELDS))
        self.size = end
        self.live += n

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
        self.before = grown(self.before, NONE)
        self.after = grown(self.after, NONE)
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
            for name in MAPPED:
                setattr(self, name, np.array(getattr(self, name)))
            self.mapped_from = None
        self.kept_fields.blank(~self.alive[: self.size])

    def fields(self) -> pa.Table:
        """FIELDS of every position, dead ones included."""
        return self.kept_fields.table()

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
        return self.kept_fields.records([rid for rid, _ in found], positions)

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
            mask &= self.kept_fields.tagged(scope.tags, self.size)
        if scope.since_us is not None:
            mask &= self.occurred_us[: self.size] >= scope.since_us
        if scope.until_us is not None:
            mask &= self.occurred_us[: self.size] <= scope.until_us
        return mask

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


def _links(column: pa.ChunkedArray) -> np.ndarray:
    """The first LINKS ids of each row's list of neighbour ids, as numbers (NONE where there are fewer)."""
    lists = column.combine_chunks()
    out = np.full((len(lists), LINKS), NONE, dtype=np.uint64)
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
