"""Rows as the tier tables store them: an Arrow table of the tier schema made from rows, its vector and pieces
columns straight from numpy, and field values as the table holds them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from tiers.index.rows import Row, field_arrays
from tiers.storage.tables import PIECES, schema
from tiers.text.timeparse import as_utc


def rows_table(rows: Sequence[Row], dim: int) -> pa.Table:
    """Rows as an Arrow table of the tier schema, built column by column (vectors straight from numpy)."""
    vectors = np.ascontiguousarray(np.stack([row.vector for row in rows]), dtype=np.float32)
    full = schema(dim)
    arrays = field_arrays(rows, full)
    arrays.append(vector_column(vectors, dim))
    arrays.append(pieces_column([row.pieces for row in rows], dim))
    return pa.Table.from_arrays(arrays, schema=full)


def vector_column(vectors: np.ndarray, dim: int) -> pa.Array:
    """A `vector` column: one row of `dim` float32 per memory, straight from numpy."""
    return pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(vectors, np.float32).ravel()), dim)


def pieces_column(pieces: Sequence[np.ndarray | None], dim: int) -> pa.Array:
    """A `pieces` column: each row's piece vectors (pieces x dim), or null where it has none."""
    kind = schema(dim).field(PIECES).type
    if all(p is None for p in pieces):
        return pa.nulls(len(pieces), kind)
    counts = np.asarray([0 if p is None else len(p) for p in pieces], dtype=np.int32)
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    flat = np.concatenate([np.asarray(p, dtype=np.float32).reshape(-1) for p in pieces if p is not None])
    inner = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dim)
    mask = pa.array([p is None for p in pieces])
    return pa.ListArray.from_arrays(offsets, inner, type=kind, mask=mask)


def stored_values(values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key == "metadata":
            out[key] = json.dumps(value, ensure_ascii=False)
        elif key == "tags":
            out[key] = list(value)
        elif key == "kind" or key == "tier":
            out[key] = value.value
        elif isinstance(value, datetime):
            out[key] = as_utc(value)
        else:
            out[key] = value
    return out
