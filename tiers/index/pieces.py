"""The pieces of a tier's long memories in memory: each piece's vector, by the position of the memory it belongs to.

The model reads a memory's first 256 word pieces only, so a memory longer than embedder.PIECE_WORDS words
is stored with a vector per piece of it (the `pieces` column) beside the mean of those that is its own
vector. A recall scores such a memory by meaning as its best piece or its mean, whichever is nearer the
query: the fact at the end of long meeting notes is found as if it had been stored alone, and the notes
are returned whole. Short memories have no pieces and cost nothing here.

Positions are only ever appended in a tier's index, so the owners of the pieces are in order; a removed
memory's pieces stay until the index is made again, skipped as their owner is no longer alive.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.index import signs
from tiers.text.terms import words

_EMPTY = np.zeros(0, dtype=np.int64)
_BLOCK = 4_096  # pieces scored at a time


def piece_scores(cosines: np.ndarray, texts: Sequence[str], terms: Sequence[str], weight: float) -> np.ndarray:
    """How near each of a memory's pieces is to the query (each one's cosine, and their `texts` in the same order),
    for which an excerpt shows: the cosine plus `weight` times the share of the query's `terms` the piece holds."""
    score = np.asarray(cosines, dtype=np.float32)
    asked = set(terms)
    if weight and asked and len(texts) == len(score):  # texts cut otherwise (another piece size): by meaning
        held = np.asarray([len(asked.intersection(words(text))) / len(asked) for text in texts], dtype=np.float32)
        score = score + weight * held
    return score


class Pieces:
    """Vectors of pieces and the positions that own them; int8 with a scale per piece when `quantized` (cold)."""

    def __init__(self, dim: int, quantized: bool = False) -> None:
        self.dim = dim
        self.quantized = quantized
        self.count = 0
        self.owner = np.zeros(0, dtype=np.int64)
        self.vectors = np.zeros((0, dim), dtype=np.int8 if quantized else np.float32)
        self.scale = np.zeros(0, dtype=np.float32)  # quantized only
        self._codes = np.zeros((signs.words_for(dim), 0), dtype=np.uint64)  # sign codes, made when first needed
        self._coded = 0

    def add(self, owners: np.ndarray, vectors: np.ndarray) -> None:
        """Append pieces (float32 unit vectors) owned by these positions, none before the last owner added."""
        n = len(owners)
        if not n:
            return
        assert not self.count or int(owners[0]) >= int(self.owner[self.count - 1]), "owners are appended in order"
        self._grow(self.count + n)
        end = self.count + n
        self.owner[self.count : end] = owners
        if self.quantized:
            peak = np.maximum(np.abs(vectors).max(axis=1), 1e-12)
            self.vectors[self.count : end] = np.rint(vectors * (127.0 / peak)[:, None]).astype(np.int8)
            self.scale[self.count : end] = peak / 127.0
        else:
            self.vectors[self.count : end] = vectors
        self.count = end

    def add_column(self, column: pa.ChunkedArray | pa.Array, first: int) -> None:
        """Append the pieces of a `pieces` column whose rows are at positions `first`, `first` + 1, ..."""
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if not len(column) or column.null_count == len(column):
            return
        flat = pc.list_flatten(column)  # the pieces of every non-null row, in order
        if not len(flat):
            return
        owners = pc.list_parent_indices(column).to_numpy(zero_copy_only=False).astype(np.int64) + first
        values = flat.flatten().to_numpy(zero_copy_only=False)
        self.add(owners, np.asarray(values, dtype=np.float32).reshape(len(flat), self.dim))

    def of(self, position: int) -> np.ndarray | None:
        """The float vectors of one position's pieces, or None when it has none."""
        owner = self.owner[: self.count]
        low, high = np.searchsorted(owner, position, "left"), np.searchsorted(owner, position, "right")
        if low == high:
            return None
        vectors = self.vectors[low:high].astype(np.float32)
        return vectors * self.scale[low:high, None] if self.quantized else vectors

    def best(self, queries: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions, cosine): each position in `keep` (a mask by position) that owns pieces, and the best cosine
        of its pieces to the query's forms (rows of `queries`).

        Past signs.EXACT_UP_TO pieces only those their sign codes put nearest are scored, as the tiers' rows are:
        scoring every piece would read all their vectors on every recall.
        """
        if not self.count:
            return _EMPTY, np.zeros(0, dtype=np.float32)
        kept = keep[self.owner[: self.count]]
        if self.count > signs.EXACT_UP_TO:
            forms = np.atleast_2d(queries).astype(np.float32)
            chosen = signs.nearest(self._signs(), self.count, forms, [kept], signs.PRESELECT)
        else:
            chosen = np.flatnonzero(kept)
        if not len(chosen):
            return _EMPTY, np.zeros(0, dtype=np.float32)
        cosine = self._cosine(queries, chosen)
        owners, starts = np.unique(self.owner[chosen], return_index=True)  # in order: each one's pieces in a run
        return owners, np.maximum.reduceat(cosine, starts).astype(np.float32)

    def _cosine(self, queries: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """The best cosine of these pieces (sorted indexes) to the query's forms."""
        forms = np.ascontiguousarray(np.atleast_2d(queries).T, dtype=np.float32)
        cosine = np.empty(len(chosen), dtype=np.float32)
        for low in range(0, len(chosen), _BLOCK):  # int8 made float a block at a time, never all at once
            rows = chosen[low : low + _BLOCK]
            block = np.take(self.vectors, rows, axis=0).astype(np.float32, copy=False)
            np.max(block @ forms, axis=1, out=cosine[low : low + len(rows)])
        return cosine * self.scale[chosen] if self.quantized else cosine

    def _signs(self) -> np.ndarray:
        """Sign codes (words, capacity) of every piece, made from those added since the last call."""
        self._codes = signs.extended(self._codes, self._coded, self.vectors, self.count, len(self.owner))
        self._coded = self.count
        return self._codes

    # saved copies

    def arrays(self) -> dict[str, np.ndarray]:
        n = self.count
        out = {"piece_owner": self.owner[:n], "piece_vectors": self.vectors[:n]}
        if self.quantized:
            out["piece_scale"] = self.scale[:n]
        return out

    def names(self) -> list[str]:
        return ["piece_owner", "piece_vectors", *(["piece_scale"] if self.quantized else [])]

    def set_arrays(self, arrays: dict[str, np.ndarray], size: int) -> bool:
        """Take saved arrays; False when they do not fit an index of `size` positions."""
        owner, vectors = arrays["piece_owner"], arrays["piece_vectors"]
        scale = arrays.get("piece_scale", np.zeros(len(owner), dtype=np.float32))
        n = len(owner)
        if vectors.shape != (n, self.dim) or len(scale) != n or vectors.dtype != self.vectors.dtype:
            return False
        if n and (int(owner.min()) < 0 or int(owner.max()) >= size or bool(np.any(np.diff(owner) < 0))):
            return False
        self.owner, self.vectors, self.scale, self.count = owner.astype(np.int64), vectors, scale, n
        self._coded = 0
        return True

    def _grow(self, needed: int) -> None:
        capacity = len(self.owner)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2, 64)
        owner = np.zeros(new, dtype=np.int64)
        owner[:capacity] = self.owner
        vectors = np.zeros((new, self.dim), dtype=self.vectors.dtype)
        vectors[:capacity] = self.vectors
        scale = np.zeros(new, dtype=np.float32)
        scale[: len(self.scale)] = self.scale
        self.owner, self.vectors, self.scale = owner, vectors, scale
