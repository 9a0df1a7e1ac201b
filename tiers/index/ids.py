"""A memory's id as a number: 12 hex digits are 48 bits, so the cold index holds ids (and its rows' neighbours'
ids) as uint64 arrays, and turns them back into text only for the rows a search returns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

NONE = np.uint64(2**64 - 1)  # no id (a row without a neighbour there); ids are 48 bits
NONE_INT = 2**64 - 1
_HEX = np.full(256, 0, dtype=np.uint64)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _i
_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_NIBBLES = np.arange(44, -1, -4, dtype=np.uint64)  # the 12 hex digits of a 48-bit id, most significant first


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


def hex_ids(numbers: np.ndarray) -> list[str]:
    """48-bit numbers as 12-digit hex ids, in one numpy pass."""
    digits = _DIGITS[(numbers.astype(np.uint64)[:, None] >> _NIBBLES) & np.uint64(15)]
    return digits.view("S12").ravel().astype("U12").tolist()


def hex_or_none(numbers: np.ndarray) -> list[str | None]:
    """`hex_ids`, None where a number is NONE."""
    texts: list[str | None] = list(hex_ids(numbers))
    for at in np.flatnonzero(numbers == NONE).tolist():
        texts[at] = None
    return texts
