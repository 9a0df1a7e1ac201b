"""The warm tier in memory: every warm record's vector, BM25 postings and episode order, kept up to date
row by row as records are written, moved and forgotten, never rebuilt from the table.

The warm tier is small by design (the timer sends what goes stale to cold), so it is searched
exactly: numpy over its vectors and BM25 over its postings cost a millisecond or two. A tier past
signs.EXACT_UP_TO rows (a store that takes thousands of memories a day) has its cosine computed
only on the rows its sign codes put nearest (tiers/index/signs.py, tiers/namespace/search.py's
`_WarmPart`). When a process opens it, the whole tier is read once in bulk (`load`: Arrow and numpy, no
Python per word); a record's full fields are made only when something asks for them.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.files import current_copy, new_copy, publish_copy
from tiers.index import bm25, signs
from tiers.index.pieces import Pieces
from tiers.records import Record, records_of
from tiers.storage.tables import PIECES, RECORD_COLUMNS
from tiers.text.terms import DATE_TERM_PATTERN, length

# What a saved copy holds besides the table's rows (`base.arrow`) and the vocabulary of their postings.
_SAVED = [
    "vectors",
    "occurred_us",
    "created_us",
    "durable",
    "kind",
    "lengths",
    "prev",
    "next",
    "_base_rows",
    "_base_counts",
    "_base_offsets",
    "_episode_order",
]
_BASE_COLUMNS = [*RECORD_COLUMNS, "hash", "terms"]
_ROW_BATCH = 4_096  # rows made at a time when every live row is read


@dataclass(frozen=True)
class Scope:
    """Which rows a search may return."""

    tags: tuple[str, ...] = ()
    since_us: int | None = None
    until_us: int | None = None


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


class WarmIndex:
    """Vectors, postings and episode links of the warm records, addressed by position."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._reset()

    def _reset(self) -> None:
        self.size = 0  # positions used, live or not
        self.live = 0
        self.vectors = np.zeros((0, self.dim), dtype=np.float32)
        self.occurred_us = np.zeros(0, dtype=np.int64)
        self.created_us = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.durable = np.zeros(0, dtype=bool)
        self.kind = np.zeros(0, dtype="<U12")
        self.lengths = np.zeros(0, dtype=np.float32)
        self._norms = bm25.Norms()  # positions are only appended until the next reset (a repack)
        self.prev = np.zeros(0, dtype=np.int64)
        self.next = np.zeros(0, dtype=np.int64)
        self.pieces = Pieces(self.dim)  # the long rows' pieces, scored beside their own vectors (tiers/index/pieces.py)
        self.positions: dict[str, int] = {}
        self.by_hash: dict[str, str] = {}
        self._ids: list[str | None] = []
        self._hashes: list[str] = []
        self._sources: list[str | None] = []
        self._rows: dict[int, Row] = {}  # the rows made so far; the others are read from `_base` when asked
        self._base: pa.Table | None = None
        self._base_vocabulary: dict[str, int] = {}
        self._base_offsets = np.zeros(1, dtype=np.int64)
        self._base_rows = np.zeros(0, dtype=np.int64)
        self._base_counts = np.zeros(0, dtype=np.float32)
        self._length_sum = 0.0
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._episodes: dict[tuple[str | None, int], list[tuple[int, int]]] = {}
        self._episode_order: np.ndarray | None = None  # the loaded rows' order, made into `_episodes` when first needed
        self._codes = np.zeros((signs.words_for(self.dim), 0), dtype=np.uint64)  # sign codes, made when first needed
        self._coded = 0  # positions whose sign codes are made
        # Each position's cosine to the row after it in its episode, and which row that was (-2: not made):
        # made when a recall first asks, kept while the link is (a position's vector never changes).
        self._pair = np.zeros(0, dtype=np.float32)
        self._pair_with = np.zeros(0, dtype=np.int64)
        self.saved_seen = 0  # opened from a saved copy: the change feed's position when it was made

    # the first read: every warm row at once

    def load(self, table: pa.Table) -> None:
        """Fill an empty index with every row of the warm table, in bulk."""
        assert self.size == 0, "load fills an empty index"
        n = table.num_rows
        if not n:
            return
        self._grow(n)
        at = 0
        for chunk in table["vector"].chunks:  # straight into the matrix, chunk by chunk: one copy
            flat = chunk.flatten().to_numpy(zero_copy_only=False)
            self.vectors[at : at + len(chunk)] = flat.reshape(len(chunk), self.dim)
            at += len(chunk)
        if PIECES in table.column_names:
            self.pieces.add_column(table[PIECES], 0)
            table = table.drop_columns([PIECES])
        table = table.drop_columns(["vector"]).combine_chunks()
        self._base = table  # rows are made from it; their vectors are self.vectors
        self.occurred_us[:n] = table["occurred_at"].cast(pa.int64()).to_numpy(zero_copy_only=False)
        self.created_us[:n] = table["created_at"].cast(pa.int64()).to_numpy(zero_copy_only=False)
        self.alive[:n] = True
        protected = table["protected"].to_numpy(zero_copy_only=False).astype(bool)
        current = pc.is_null(table["superseded_by"]).to_numpy(zero_copy_only=False).astype(bool)
        self.durable[:n] = protected & current
        self.kind[:n] = np.asarray(table["kind"].to_pylist(), dtype="<U12")
        self._ids = list(table["id"].to_pylist())
        self._hashes = list(table["hash"].to_pylist())
        self._sources = list(table["source"].to_pylist())
        self.positions = {rid: i for i, rid in enumerate(self._ids) if rid is not None}
        for rid, digest in zip(self._ids, self._hashes, strict=True):
            self.by_hash.setdefault(digest, rid)  # type: ignore[arg-type]
        self._load_postings(table["terms"], n)
        self._load_episodes(n)
        self.size = self.live = n

    def _load_postings(self, terms: pa.ChunkedArray, n: int) -> None:
        tokens_by_row = pc.split_pattern(terms.combine_chunks(), " ")
        tokens = pc.list_flatten(tokens_by_row)
        owner = pc.list_parent_indices(tokens_by_row).to_numpy(zero_copy_only=False).astype(np.int64)
        date = pc.match_substring_regex(tokens, DATE_TERM_PATTERN).to_numpy(zero_copy_only=False).astype(bool)
        counted = np.bincount(owner[~date], minlength=n).astype(np.float32)
        self.lengths[:n] = np.maximum(counted, 1.0)
        self._length_sum = float(self.lengths[:n].sum())
        encoded = pc.dictionary_encode(tokens)
        vocabulary = encoded.dictionary.to_pylist()
        term = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        width = max(len(vocabulary), 1)
        keys, counts = np.unique(term * n + owner, return_counts=True)  # sorted by term, then row: one sort
        rows, terms_of = keys % n, keys // n
        self._base_rows = rows
        self._base_counts = counts.astype(np.float32)
        self._base_offsets = np.concatenate([[0], np.cumsum(np.bincount(terms_of, minlength=width))])
        self._base_vocabulary = {t: i for i, t in enumerate(vocabulary)}

    def _load_episodes(self, n: int) -> None:
        codes = {s: i for i, s in enumerate(dict.fromkeys(self._sources))}
        source = np.asarray([codes[s] for s in self._sources], dtype=np.int64)
        order = np.lexsort((np.arange(n), self.created_us[:n], self.occurred_us[:n], source))
        a, b = order[:-1], order[1:]
        same = (self.occurred_us[a] == self.occurred_us[b]) & (source[a] == source[b])
        self.next[a[same]], self.prev[b[same]] = b[same], a[same]
        self._episode_order = order  # the episodes themselves wait for the first change: a recall needs only the links

    def _episode_map(self) -> dict[tuple[str | None, int], list[tuple[int, int]]]:
        """Each episode's rows as (created, position), in order; built from the load on first use."""
        order, self._episode_order = self._episode_order, None
        if order is not None:
            for position in order.tolist():
                key = (self._sources[position], int(self.occurred_us[position]))
                self._episodes.setdefault(key, []).append((int(self.created_us[position]), position))
        return self._episodes

    # a copy of a fresh load, saved for the next process

    def save(self, folder: Path, stamp: dict[str, object]) -> bool:
        """Write this index (freshly loaded: nothing changed since) under `folder`, with `stamp` to check it by."""
        n = self.size
        if (
            self._base is None
            or self._episode_order is None
            or self._postings
            or n != self.live
            or n != len(self._base)
        ):
            return False
        target = new_copy(folder)
        for name in _SAVED:
            array = getattr(self, name)
            np.save(target / f"{name}.npy", array if name.startswith("_") else array[:n])
        for name, array in self.pieces.arrays().items():
            np.save(target / f"{name}.npy", array)
        _write_arrow(target / "base.arrow", self._base)
        words = sorted(self._base_vocabulary, key=self._base_vocabulary.__getitem__)
        _write_arrow(target / "vocabulary.arrow", pa.table({"word": pa.array(words, pa.string())}))
        meta = {**stamp, "dim": self.dim, "size": n, "length_sum": self._length_sum}
        (target / "meta.json").write_text(json.dumps(meta))
        publish_copy(folder, target)
        return True

    @classmethod
    def open_saved(cls, folder: Path, stamp: dict[str, object]) -> WarmIndex | None:
        """The index saved under `folder` if its stamp matches, else None (nothing saved, another store, damage).

        Read whole into memory (no file stays open), so removing the copy leaves nothing of it behind.
        """
        try:
            opened = current_copy(folder, stamp)
            if opened is None:
                return None
            target, meta = opened
            index = cls(int(meta["dim"]))
            n = int(meta["size"])
            arrays = {name: np.load(target / f"{name}.npy") for name in _SAVED}
            pieces = {name: np.load(target / f"{name}.npy") for name in index.pieces.names()}
            base = _read_arrow(target / "base.arrow")
            words = _read_arrow(target / "vocabulary.arrow")["word"].to_pylist()
            length_sum, seen = float(meta["length_sum"]), int(meta["seen"])
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
            return None
        shapes_ok = arrays["vectors"].shape == (n, index.dim) and all(
            len(arrays[name]) == n for name in _SAVED if not name.startswith("_") or name == "_episode_order"
        )
        if not shapes_ok or base.num_rows != n or set(base.column_names) != set(_BASE_COLUMNS):
            return None
        if len(arrays["_base_offsets"]) != len(words) + 1 or len(arrays["_base_rows"]) != len(arrays["_base_counts"]):
            return None
        if not index.pieces.set_arrays(pieces, n):
            return None
        for name, array in arrays.items():
            setattr(index, name, array)
        index.alive = np.ones(n, dtype=bool)
        index._base, index._length_sum, index.saved_seen = base, length_sum, seen
        index._base_vocabulary = {word: i for i, word in enumerate(words)}
        ids: list[str] = base["id"].to_pylist()
        index._ids = list[str | None](ids)
        index._hashes = base["hash"].to_pylist()
        index._sources = base["source"].to_pylist()
        index.positions = {rid: i for i, rid in enumerate(ids)}
        for rid, digest in zip(ids, index._hashes, strict=True):
            index.by_hash.setdefault(digest, rid)
        index.size = index.live = n
        return index

    # changes

    def put(self, rows: Iterable[Row]) -> None:
        """Add rows, replacing any with the same id."""
        rows = list(rows)
        self.remove([r.record.id for r in rows if r.record.id in self.positions])
        if not rows:
            return
        self._grow(self.size + len(rows))
        for row in rows:
            self._add(row)

    def remove(self, ids: Iterable[str]) -> None:
        for rid in ids:
            position = self.positions.pop(rid, None)
            if position is None:
                continue
            row = self.row(position)
            self._rows.pop(position, None)
            self._ids[position] = None
            self.alive[position] = False
            self.live -= 1
            self._length_sum -= float(self.lengths[position])
            if self.by_hash.get(row.hash) == rid:
                del self.by_hash[row.hash]
            self._unlink(row, position)
            for term in set(row.terms.split()):
                self._arrays.pop(term, None)
        if self.size > 1_000 and self.live < self.size // 2:
            self._repack()

    def replace_record(self, record: Record) -> None:
        """New field values of a stored record (tags, protection, supersession); its text is unchanged."""
        position = self.positions.get(record.id)
        if position is None:
            return
        row = self.row(position)
        self._rows[position] = replace(row, record=record)
        self.durable[position] = record.protected and not record.superseded_by
        self.kind[position] = record.kind.value

    def _add(self, row: Row) -> None:
        position = self.size
        self.size += 1
        record = row.record
        self._rows[position] = row
        self._ids.append(record.id)
        self._hashes.append(row.hash)
        self._sources.append(record.source)
        self.positions[record.id] = position
        self.by_hash.setdefault(row.hash, record.id)
        self.vectors[position] = row.vector
        if row.pieces is not None and len(row.pieces):
            self.pieces.add(np.full(len(row.pieces), position, dtype=np.int64), row.pieces)
        occurred, created = micros(record)
        self.occurred_us[position] = occurred
        self.created_us[position] = created
        self.alive[position] = True
        self.live += 1
        self.durable[position] = record.protected and not record.superseded_by
        self.kind[position] = record.kind.value
        terms = row.terms.split()
        self.lengths[position] = length(terms)
        self._length_sum += float(self.lengths[position])
        for term, count in Counter(terms).items():
            posting = self._postings.setdefault(term, ([], []))
            posting[0].append(position)
            posting[1].append(count)
            self._arrays.pop(term, None)
        self._link(record.source, position, created)

    def _grow(self, needed: int) -> None:
        capacity = len(self.alive)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2, 64)

        def grown(array: np.ndarray, fill: object | None) -> np.ndarray:
            shape = (new, *array.shape[1:])
            out = np.empty(shape, dtype=array.dtype) if fill is None else np.full(shape, fill, dtype=array.dtype)
            out[:capacity] = array
            return out

        self.vectors = grown(self.vectors, None)  # rows past `size` are never read
        self.occurred_us = grown(self.occurred_us, 0)
        self.created_us = grown(self.created_us, 0)
        self.alive = grown(self.alive, False)
        self.durable = grown(self.durable, False)
        self.kind = grown(self.kind, "")
        self.lengths = grown(self.lengths, 0.0)
        self.prev = grown(self.prev, -1)
        self.next = grown(self.next, -1)

    def _repack(self) -> None:
        """Drop the positions of removed rows (from memory alone, no table read)."""
        live = list(self.live_rows())
        if self.pieces.count:
            live = [replace(row, pieces=self.pieces.of(self.positions[row.record.id])) for row in live]
        self._reset()
        self.put(live)

    # episodes: rows of the same time and source, in the order they were stored

    def _link(self, source: str | None, position: int, created: int) -> None:
        episode = self._episode_map().setdefault((source, int(self.occurred_us[position])), [])
        entry = (created, position)
        at = bisect.bisect(episode, entry)
        episode.insert(at, entry)
        before = episode[at - 1][1] if at > 0 else -1
        after = episode[at + 1][1] if at + 1 < len(episode) else -1
        self.prev[position], self.next[position] = before, after
        if before >= 0:
            self.next[before] = position
        if after >= 0:
            self.prev[after] = position

    def _unlink(self, row: Row, position: int) -> None:
        key = (row.record.source, int(self.occurred_us[position]))
        episodes = self._episode_map()
        episode = episodes.get(key, [])
        entry = (int(self.created_us[position]), position)
        at = bisect.bisect_left(episode, entry)
        if at < len(episode) and episode[at] == entry:
            episode.pop(at)
        if not episode:
            episodes.pop(key, None)
        before, after = int(self.prev[position]), int(self.next[position])
        if before >= 0:
            self.next[before] = after
        if after >= 0:
            self.prev[after] = before
        self.prev[position] = self.next[position] = -1

    def neighbours(self, rid: str, reach: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Ids of the `reach` records stored just before and just after `rid` in its episode, nearest first."""
        position = self.positions[rid]
        out: list[tuple[str, ...]] = []
        for links in (self.prev, self.next):
            found: list[str] = []
            at = position
            for _ in range(reach):
                at = int(links[at])
                if at < 0:
                    break
                rid_at = self._ids[at]
                assert rid_at is not None
                found.append(rid_at)
            out.append(tuple(found))
        return out[0], out[1]

    # search

    def mask(self, scope: Scope) -> np.ndarray:
        keep = self.alive[: self.size].copy()
        if scope.tags:
            keep &= self._tagged(scope.tags)
        if scope.since_us is not None:
            keep &= self.occurred_us[: self.size] >= scope.since_us
        if scope.until_us is not None:
            keep &= self.occurred_us[: self.size] <= scope.until_us
        return keep

    def cosine(self, vectors: np.ndarray) -> np.ndarray:
        """Each row's best cosine similarity to the query's unit vectors (rows of `vectors`)."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        matrix = self.vectors[: self.size]
        return (matrix @ np.atleast_2d(vectors).T.astype(np.float32)).max(axis=1)

    def _tagged(self, tags: Sequence[str]) -> np.ndarray:
        """Positions holding any of these tags: the load's rows read from its tag lists (not made one by one),
        then every row made since (added, or its fields replaced), from its record."""
        out = np.zeros(self.size, dtype=bool)
        if self._base is not None and self._base.num_rows:
            lists = self._base["tags"].combine_chunks()
            hit = pc.is_in(pc.list_flatten(lists), value_set=pa.array(list(dict.fromkeys(tags)), pa.string()))
            rows = pc.list_parent_indices(lists).filter(hit).to_numpy(zero_copy_only=False)
            out[rows.astype(np.int64)] = True
        wanted = set(tags)
        for position, row in self._rows.items():
            out[position] = bool(wanted.intersection(row.record.tags))
        return out

    def cosine_at(self, vectors: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """`cosine` of the rows at these positions alone."""
        if not len(positions):
            return np.zeros(0, dtype=np.float32)
        # np.take, not fancy indexing: the same values, faster
        rows = np.take(self.vectors, positions, axis=0)
        return (rows @ np.atleast_2d(vectors).T.astype(np.float32)).max(axis=1)

    def next_similarity(self, positions: np.ndarray) -> np.ndarray:
        """The cosine of each of these rows to the row stored just after it in its episode (each has one)."""
        if len(self._pair) < len(self.alive):
            grown = len(self.alive)
            self._pair = np.concatenate([self._pair, np.zeros(grown - len(self._pair), dtype=np.float32)])
            self._pair_with = np.concatenate([self._pair_with, np.full(grown - len(self._pair_with), -2, np.int64)])
        after = self.next[positions]
        stale = positions[self._pair_with[positions] != after]
        if len(stale):
            pairs = self.next[stale]
            self._pair[stale] = np.einsum("ij,ij->i", self.vectors[stale], self.vectors[pairs])
            self._pair_with[stale] = pairs
        return self._pair[positions]

    def nearest(self, vectors: np.ndarray, scopes: Sequence[np.ndarray], keep: int) -> np.ndarray:
        """Positions worth a cosine: the `keep` nearest the query's forms in each scope by sign codes (signs.py)."""
        return signs.nearest(self._signs(), self.size, np.atleast_2d(vectors).astype(np.float32), scopes, keep)

    def prepare(self) -> None:
        """Make now what the first search of a large tier would make: the sign codes, so it is not kept waiting."""
        if self.live > signs.EXACT_UP_TO:
            self._signs()

    def _signs(self) -> np.ndarray:
        """Sign codes (words, capacity) of every position, made from the vectors of those added since the last call.

        Made on first use, not on load or write: only a tier past signs.EXACT_UP_TO rows is searched by them.
        """
        self._codes = signs.extended(self._codes, self._coded, self.vectors, self.size, len(self.alive))
        self._coded = self.size
        return self._codes

    def bm25(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for these terms (0 where none occurs)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.live:
            return scores
        norms = self._norms.of(self.lengths, self.size, self.live, self._length_sum)
        for term in dict.fromkeys(terms):
            posting = self._posting(term)
            if posting is None:
                continue
            rows, counts = posting
            bm25.add(scores, rows, counts, np.take(norms, rows), bm25.idf(self.live, len(rows)))
        return scores

    def common(self, terms: Sequence[str], share: float, least: int) -> set[str]:
        """The terms more than `share` of the live rows hold (none while fewer than `least` rows are live)."""
        if self.live < least:
            return set()
        return {
            t for t in dict.fromkeys(terms) if (p := self._posting(t)) is not None and len(p[0]) > share * self.live
        }

    def query_weight(self, terms: Sequence[str]) -> float:
        """These terms' weight in this tier, which its BM25 scores are divided by to meet the cold tier's."""
        having = (len(p[0]) if (p := self._posting(term)) is not None else 0 for term in dict.fromkeys(terms))
        return bm25.query_weight(self.live, having)

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._arrays.get(term)
        if cached is not None:
            return cached
        parts_rows, parts_counts = [], []
        base = self._base_vocabulary.get(term)
        if base is not None:
            start, end = self._base_offsets[base], self._base_offsets[base + 1]
            parts_rows.append(self._base_rows[start:end])
            parts_counts.append(self._base_counts[start:end])
        added = self._postings.get(term)
        if added is not None:
            parts_rows.append(np.asarray(added[0], dtype=np.int64))
            parts_counts.append(np.asarray(added[1], dtype=np.float32))
        if not parts_rows:
            return None
        rows = np.concatenate(parts_rows)
        counts = np.concatenate(parts_counts)
        live = self.alive[rows]
        rows, counts = rows[live], counts[live]
        if not len(rows):
            return None
        self._arrays[term] = (rows, counts)
        return rows, counts

    # records, made when asked for

    def row(self, position: int) -> Row:
        if position not in self._rows:
            assert self._base is not None and self._ids[position] is not None
            self.make_rows([position])
        return self._rows[position]

    def id_at(self, position: int) -> str | None:
        """The id of the record at a position (None: a removed one)."""
        return self._ids[position]

    def record(self, position: int) -> Record:
        return self.row(position).record

    def make_rows(self, positions: Iterable[int]) -> None:
        """Make the rows of these positions that are not made yet, in one pass (a recall's hits)."""
        if self._base is None:
            return
        made, base = self._rows, self._base.num_rows
        missing = sorted({p for p in positions if p not in made and p < base and self._ids[p] is not None})
        for position, row in zip(missing, self._rows_from_base(missing), strict=True):
            self._rows[position] = row

    def _rows_from_base(self, positions: list[int]) -> list[Row]:
        if not positions:
            return []
        assert self._base is not None
        return rows_of(self._base.take(pa.array(positions, pa.int64())), self.vectors[positions])

    def get(self, rid: str) -> Row | None:
        position = self.positions.get(rid)
        return None if position is None else self.row(position)

    def live_rows(self) -> Iterator[Row]:
        """Every live row in position order. Rows of the load not made yet are made a batch at a time and not
        kept: a sweep reads them all once, and made one by one they took most of a large sweep's time."""
        for start in range(0, self.size, _ROW_BATCH):
            positions = (np.flatnonzero(self.alive[start : min(self.size, start + _ROW_BATCH)]) + start).tolist()
            unmade = [p for p in positions if p not in self._rows]
            made = dict(zip(unmade, self._rows_from_base(unmade), strict=True))
            for position in positions:
                row = self._rows.get(position)
                yield row if row is not None else made[position]


def _write_arrow(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_arrow(path: Path) -> pa.Table:
    with pa.OSFile(str(path)) as source:
        return pa.ipc.open_file(source).read_all()
