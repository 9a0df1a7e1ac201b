"""Sign codes: each vector's signs packed 64 to a machine word, and the rows nearest a query by them.

The Hamming distance between two sign codes follows the angle between their vectors, and costs an XOR
and a bit count over a few machine words per row (48 bytes at 384 dimensions, against 1,536 for the
float32 vector). Both tiers' indexes hold codes beside their vectors and, past EXACT_UP_TO rows, let the
codes pick the few thousand rows a query's cosine is then computed on: the cold tier with its int8
codes, the warm tier with its float32 vectors. Below it every row is scored.

Codes are laid out a word at a time (`words`, rows), so one pass reads one word of every row in order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EXACT_UP_TO = 20_000  # rows ranked by cosine without the codes' preselection
PRESELECT = 4_000  # rows the codes keep per query form and scope: enough for the scale bench's recall@50 goal
BLOCK = 65_536  # rows per pass of the bit counts
FIRST_KEEP = 8 * PRESELECT  # rows the first half of the codes keep for the whole codes to rank, past TWO_STAGES_FROM
TWO_STAGES_FROM = 10 * FIRST_KEEP
SAMPLE_STEP = 8  # every how many rows the first half's cut is read from


def words_for(dim: int) -> int:
    return (dim + 63) // 64


def pack(vectors: np.ndarray) -> np.ndarray:
    """Sign codes of each vector (rows, words): bit set where the component is positive."""
    packed = np.packbits(np.atleast_2d(vectors) > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def extended(codes: np.ndarray, coded: int, vectors: np.ndarray, size: int, capacity: int) -> np.ndarray:
    """`codes` (words, capacity) with those of `vectors[coded:size]` made, grown to `capacity` when too short."""
    if codes.shape[1] < size:
        grown = np.zeros((codes.shape[0], capacity), dtype=np.uint64)
        grown[:, :coded] = codes[:, :coded]
        codes = grown
    for low in range(coded, size, BLOCK):
        high = min(size, low + BLOCK)
        codes[:, low:high] = pack(vectors[low:high]).T
    return codes


def nearest(
    codes: np.ndarray, size: int, queries: np.ndarray, scopes: Sequence[np.ndarray | None], keep: int = PRESELECT
) -> np.ndarray:
    """Positions (sorted) among the first `size` rows of `codes` (words, capacity) nearest any query form.

    For each scope (a mask of `size` rows, or None for all of them, which spares applying an all-true mask)
    and each form, the `keep` rows of that scope nearest that form by Hamming distance (ties at the cut all
    kept). From TWO_STAGES_FROM rows, the first half of each code picks FIRST_KEEP rows (the cut read from
    every SAMPLE_STEP-th row) and the whole code ranks those: a large tier is searched in well under the
    time of a full count, finding the same rows. The counts are made block by block, so the codes of a
    block stay in cache for every form and the counts never leave it. (Counting half the blocks in a
    second thread gained nothing: the passes are too short to keep both threads off the interpreter lock.)
    """
    forms = pack(queries)
    words = codes.shape[0]
    if not size:
        return np.zeros(0, dtype=np.int64)
    staged = size >= TWO_STAGES_FROM and words >= 2
    first = words // 2 if staged else words
    distances = _counts(codes, size, forms, first)
    chosen = []
    for scope in scopes:
        for form, distance in zip(forms, distances, strict=True):
            # Out of scope: one past the longest distance counted (a short histogram, unlike the dtype's largest).
            far = distance.dtype.type(64 * first + 1)
            scoped = distance if scope is None else np.where(scope, distance, far)
            if not staged:
                chosen.append(_scoped_nearest(scoped, keep, 64 * words))
                continue
            rows = _scoped_nearest(scoped, FIRST_KEEP, 64 * first, SAMPLE_STEP)
            whole = scoped[rows].astype(np.uint16)
            for i in range(first, words):  # np.take of one word's row: faster than fancy indexing
                whole += np.bitwise_count(np.bitwise_xor(np.take(codes[i], rows), form[i]))
            chosen.append(rows[_scoped_nearest(whole, keep, 64 * words)])
    if not chosen:
        return np.zeros(0, dtype=np.int64)
    return chosen[0] if len(chosen) == 1 else union(size, chosen)


def union(size: int, parts: Sequence[np.ndarray]) -> np.ndarray:
    """The positions (below `size`) in any of `parts`, sorted, each once: np.unique without its sort."""
    hit = np.zeros(size, dtype=bool)
    for part in parts:
        hit[part] = True
    return np.flatnonzero(hit)


def _scoped_nearest(distance: np.ndarray, keep: int, longest: int, step: int = 1) -> np.ndarray:
    """Positions of the `keep` smallest distances up to `longest` (all tied at the cut), the cut read from every
    `step`-th one; distances past `longest` are out of scope."""
    histogram = np.cumsum(np.bincount(distance[::step], minlength=longest + 1)[: longest + 1]) * step
    cut = int(np.searchsorted(histogram, keep))
    return np.flatnonzero(distance <= min(cut, longest))


def _counts(codes: np.ndarray, size: int, forms: np.ndarray, words: int) -> np.ndarray:
    """Each form's Hamming distance to the first `size` rows over the first `words` words of the codes."""
    dtype = np.uint8 if 64 * words < 255 else np.uint16
    distances = np.zeros((len(forms), size), dtype=dtype)
    word = np.empty(BLOCK, dtype=np.uint64)
    counted = np.empty(BLOCK, dtype=np.uint8)
    for low in range(0, size, BLOCK):
        high = min(size, low + BLOCK)
        w, c = word[: high - low], counted[: high - low]
        for form, distance in zip(forms, distances, strict=True):
            into = distance[low:high]
            for i in range(words):
                np.bitwise_xor(codes[i, low:high], form[i], out=w)
                np.bitwise_count(w, out=c)
                np.add(into, c, out=into)
    return distances
