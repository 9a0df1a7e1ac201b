"""What a cold search found: the rows, column by column, and the means to score more rows (a hit's neighbours)
the same way, so recall ranks cold rows without reading their records until they rank."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tiers.index import samples
from tiers.index.ids import NONE, NONE_INT, hex_ids, hex_or_none, id_numbers
from tiers.records import Kind

if TYPE_CHECKING:
    from tiers.index.cold import ColdIndex

COSINE_BLOCK = 512  # rows of int8 codes made float at a time for their cosines
_KIND_TEXT = np.asarray([k.value for k in Kind])  # the cold index's kind numbers, as text


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


class Found:
    """Cold rows a search found, column by column, with only what ranking needs; a row's record is read if it ranks.

    Columns, not an object per row: a search finds hundreds of rows, and making a tuple and five hex ids for
    each took twice the time this does; the ids are made in one pass, the further links' ids only where asked.
    """

    def __init__(self, index: ColdIndex, positions: np.ndarray, cosine: np.ndarray, words: np.ndarray) -> None:
        self.positions = positions  # where each row is in `index`
        self.ids = hex_ids(index.ids[positions])
        self.kind = _KIND_TEXT[index.kind[positions]]
        self.durable = index.durable[positions]
        self.before = index.before[positions]  # (rows, LINKS) ids as numbers, nearest first; NONE: no neighbour
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
            self._first = hex_or_none(self.before[:, 0]), hex_or_none(self.after[:, 0])
        return self._first

    def links(self, row: int, reach: int) -> list[str]:
        """Ids of a row's neighbours up to `reach` on each side: before it, nearest first, then after it."""
        # A few numbers: formatted one by one (numpy's pass has a fixed cost per call, and a recall makes dozens)
        numbers = self.before[row, :reach].tolist() + self.after[row, :reach].tolist()
        return [f"{number:012x}" for number in numbers if number != NONE_INT]

    def candidates(self) -> list[Candidate]:
        """The rows as Candidates (for a reader that wants one object a row; a recall reads the columns)."""
        before, after = ([tuple(hex_ids(links[links != NONE])) for links in side] for side in (self.before, self.after))
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
        block = np.empty((min(COSINE_BLOCK, len(positions)), codes.shape[1]), dtype=np.float32)
        for low in range(0, len(positions), COSINE_BLOCK):
            n = min(COSINE_BLOCK, len(positions) - low)
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
        numbers = np.unique(numbers[numbers != NONE])
        positions = self.index.positions_of(numbers)
        positions = np.setdiff1d(positions[positions >= 0], found.positions)
        return Found(self.index, positions, self.cosine(positions), self.words[positions])

    def lookup(self, ids: Sequence[str]) -> Found:
        """The rows of these ids where they are live cold rows (a hit's neighbours, not found by the search)."""
        positions = self.index.positions_of(id_numbers(list(ids))) if ids else np.zeros(0, dtype=np.int64)
        positions = positions[positions >= 0]
        return Found(self.index, positions, self.cosine(positions), self.words[positions])
