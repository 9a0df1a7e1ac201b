"""Flat baselines for the benchmarks: one LanceDB table of every memory, searched by BM25 or by vector alone.

What a flat memory store does: no tiers, no fusion, every row in one pool.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS

from tiers.records import Record


@dataclass(frozen=True)
class Hit:
    record: Record
    score: float


class FlatStore:
    """Every record in one table with a native full-text index on its content."""

    def __init__(self, records: Sequence[Record], vectors: np.ndarray) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="memtiers-flat-")
        self._records = {r.id: r for r in records}
        db = lancedb.connect(Path(self._folder.name))
        data = pa.table(
            {
                "id": [r.id for r in records],
                "content": [r.content for r in records],
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(np.asarray(vectors, np.float32).ravel()), vectors.shape[1]
                ),
            }
        )
        self._table = db.create_table("flat", data)
        self._table.create_index("content", config=FTS())

    def text_search(self, query: str, k: int) -> list[Hit]:
        try:
            rows = self._table.search(query, query_type="fts").select(["id", "_score"]).limit(k).to_list()
        except (ValueError, RuntimeError):  # a query of stop words or symbols only
            return []
        return [Hit(self._records[r["id"]], float(r["_score"])) for r in rows]

    def vector_search(self, vector: np.ndarray, k: int) -> list[Hit]:
        query = self._table.search(vector.astype(np.float32)).distance_type("cosine")  # type: ignore[attr-defined]
        rows = query.select(["id", "_distance"]).limit(k).to_list()
        return [Hit(self._records[r["id"]], 1.0 - float(r["_distance"])) for r in rows]

    def close(self) -> None:
        self._folder.cleanup()
