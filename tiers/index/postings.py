"""The warm tier's BM25 postings: for each term, the positions that hold it and how many times.

The load's postings are one array sorted by term (`rows`, `counts`, each term's slice by `offsets`); the
postings of rows added since go to lists, which are folded into the arrays once they hold a share of
them, so a tier that grew by writes holds its postings as compactly as one read whole. A term's live
postings are made into arrays when a search first asks for it, and kept until a row that holds it changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.text.terms import DATE_TERM_PATTERN

FOLD_FROM = 65_536  # postings added in lists before they are folded into the arrays (and a share of those)
FOLD_SHARE = 8  # folded once the lists hold more than 1/FOLD_SHARE of the arrays' postings


class Postings:
    """Each term's postings over the warm positions; a removed position's stay until a repack, skipped on read."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}  # term -> its number in `offsets`
        self.offsets = np.zeros(1, dtype=np.int64)
        self.rows = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros(0, dtype=np.float32)
        self._added: dict[str, tuple[list[int], list[int]]] = {}
        self._added_count = 0  # postings in `_added`
        self._loaded = 0  # postings the arrays held when loaded or opened: none added since, if still so
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def only_loaded(self) -> bool:
        """Whether every posting came from the load (nothing added since)."""
        return not self._added and len(self.rows) == self._loaded

    def load(self, terms: pa.ChunkedArray, n: int) -> np.ndarray:
        """Read the postings of the `n` rows of a load (their space-separated terms), in bulk; each row's length
        in words, its date terms not counted (at least 1)."""
        tokens_by_row = pc.split_pattern(terms.combine_chunks(), " ")
        tokens = pc.list_flatten(tokens_by_row)
        owner = pc.list_parent_indices(tokens_by_row).to_numpy(zero_copy_only=False).astype(np.int64)
        date = pc.match_substring_regex(tokens, DATE_TERM_PATTERN).to_numpy(zero_copy_only=False).astype(bool)
        counted = np.bincount(owner[~date], minlength=n).astype(np.float32)
        encoded = pc.dictionary_encode(tokens)
        vocabulary = encoded.dictionary.to_pylist()
        term = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        width = max(len(vocabulary), 1)
        keys, counts = np.unique(term * n + owner, return_counts=True)  # sorted by term, then row: one sort
        rows, terms_of = keys % n, keys // n
        self.rows = rows
        self.counts = counts.astype(np.float32)
        self.offsets = np.concatenate([[0], np.cumsum(np.bincount(terms_of, minlength=width))])
        self.vocabulary = {t: i for i, t in enumerate(vocabulary)}
        self._loaded = len(self.rows)
        return np.maximum(counted, 1.0)

    def set_arrays(self, vocabulary: list[str], offsets: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> bool:
        """Take the arrays of a saved copy; False when they do not fit together."""
        if len(offsets) != len(vocabulary) + 1 or len(rows) != len(counts):
            return False
        self.vocabulary = {word: i for i, word in enumerate(vocabulary)}
        self.offsets, self.rows, self.counts = offsets, rows, counts
        self._loaded = len(rows)
        return True

    def add(self, position: int, terms: list[str]) -> None:
        """The postings of a row added at `position`."""
        for term, count in Counter(terms).items():
            posting = self._added.setdefault(term, ([], []))
            posting[0].append(position)
            posting[1].append(count)
            self._arrays.pop(term, None)
        self._added_count += len(set(terms))
        if self._added_count > max(FOLD_FROM, len(self.rows) // FOLD_SHARE):
            self._fold()

    def changed(self, terms: Iterable[str]) -> None:
        """A row holding these terms left: their arrays are made again when next asked for."""
        for term in terms:
            self._arrays.pop(term, None)

    def posting(self, term: str, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The live positions holding `term` and its count in each (None: no live row holds it)."""
        cached = self._arrays.get(term)
        if cached is not None:
            return cached
        parts_rows, parts_counts = [], []
        number = self.vocabulary.get(term)
        if number is not None:
            start, end = self.offsets[number], self.offsets[number + 1]
            parts_rows.append(self.rows[start:end])
            parts_counts.append(self.counts[start:end])
        added = self._added.get(term)
        if added is not None:
            parts_rows.append(np.asarray(added[0], dtype=np.int64))
            parts_counts.append(np.asarray(added[1], dtype=np.float32))
        if not parts_rows:
            return None
        rows = np.concatenate(parts_rows)
        counts = np.concatenate(parts_counts)
        live = alive[rows]
        rows, counts = rows[live], counts[live]
        if not len(rows):
            return None
        self._arrays[term] = (rows, counts)
        return rows, counts

    def _fold(self) -> None:
        """Move the added postings into the arrays, each term's after its loaded ones (in position order)."""
        vocabulary = self.vocabulary
        numbers, rows, counts = [], [], []
        for term, (positions, times) in self._added.items():
            number = vocabulary.setdefault(term, len(vocabulary))
            numbers.append(np.full(len(positions), number, dtype=np.int64))
            rows.append(np.asarray(positions, dtype=np.int64))
            counts.append(np.asarray(times, dtype=np.float32))
        width = len(vocabulary)
        loaded = np.repeat(np.arange(len(self.offsets) - 1, dtype=np.int64), np.diff(self.offsets))
        numbered = np.concatenate([loaded, *numbers])
        order = np.argsort(numbered, kind="stable")
        self.rows = np.concatenate([self.rows, *rows])[order]
        self.counts = np.concatenate([self.counts, *counts])[order]
        self.offsets = np.concatenate([[0], np.cumsum(np.bincount(numbered, minlength=width))]).astype(np.int64)
        self._added.clear()
        self._added_count = 0
