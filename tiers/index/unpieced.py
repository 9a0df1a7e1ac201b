"""The long records stored before memtiers kept pieces: finding them, giving them their pieces, and the note
in store.json that none is left.

Recall ranks a long memory by its best piece (tiers/index/pieces.py); one stored before the `pieces` column
existed has none. The sweep's backfill (tiers/namespace/backfill.py) finds them with one scan, reads their
text by id a batch at a time, embeds it, and writes each batch here as a write of them today would: their
vector and pieces, through the change feed like any write. Once none is left store.json says so, and no
sweep looks again.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute

from tiers.index.cold import COLUMNS as COLD_COLUMNS
from tiers.index.cold import ColdIndex
from tiers.index.columns import pieces_column, vector_column
from tiers.index.indexes import Indexes
from tiers.index.meta import PIECES_DONE, read_meta, write_meta
from tiers.index.warm import WarmIndex, rows_of
from tiers.model.embedder import PIECE_WORDS, is_long
from tiers.records import Tier
from tiers.storage.tables import PIECES, Table

# A memory of more than PIECE_WORDS words has more than this many characters (a Chinese character is a word).
LONG_CHARS = PIECE_WORDS


class Unpieced:
    """The long records of one namespace's tables still without pieces, and the write that gives them theirs."""

    def __init__(self, indexes: Indexes) -> None:
        self.indexes = indexes

    def find(self) -> list[tuple[Tier, str]]:
        """Every long record without pieces, (tier, id): stored before pieces were kept. Reads the text of
        those of more than LONG_CHARS characters once: a filter LanceDB applies as it scans."""
        found: list[tuple[Tier, str]] = []
        for tier in (Tier.WARM, Tier.COLD):
            table = self.indexes.table(tier)
            for batch in table.scan(["id", "content"], where=_lacking(table), batch=1_000):
                for rid, text in zip(batch.column("id").to_pylist(), batch.column("content").to_pylist(), strict=True):
                    if is_long(text):
                        found.append((tier, rid))
        return found

    def texts(self, records: Sequence[tuple[Tier, str]]) -> list[tuple[Tier, str, str]]:
        """The text of those of these records still in their tier and still without pieces, (tier, id, text)."""
        out: list[tuple[Tier, str, str]] = []
        for tier in (Tier.WARM, Tier.COLD):
            ids = [rid for t, rid in records if t is tier]
            if not ids:
                continue
            table = self.indexes.table(tier)
            rows = table.get(ids, ["id", "content", PIECES])
            lacking = pa.compute.is_null(rows[PIECES]).to_pylist()
            for rid, text, none in zip(rows["id"].to_pylist(), rows["content"].to_pylist(), lacking, strict=True):
                if none and is_long(text):
                    out.append((tier, rid, text))
        return out

    def complete(self) -> bool:
        """Whether store.json says every long record has its pieces (a store made since, re-embedded, or filled)."""
        return read_meta(self.indexes.folder / "store.json").get(PIECES) == PIECES_DONE

    def mark_complete(self) -> None:
        """Note in store.json that no long record lacks its pieces any more: no sweep looks again."""
        path = self.indexes.folder / "store.json"
        write_meta(path, read_meta(path) | {PIECES: PIECES_DONE})

    def fill(self, tier: Tier, ids: Sequence[str], vectors: np.ndarray, pieces: Sequence[np.ndarray]) -> int:
        """Give these records of `tier` their vector and pieces as a write of them today would; the number given.

        One write (a merge by id): a record forgotten or moved since it was read is left as it is. The caller
        holds the data folder's write lock.
        """
        indexes = self.indexes
        table = indexes.table(tier)
        dim = indexes.dim
        columns = {"id": list(ids), "vector": vector_column(vectors, dim), PIECES: pieces_column(pieces, dim)}
        indexes.intend(ids, tier)
        table.merge(pa.table(columns))
        rows = table.get(ids)
        stored = rows["id"].to_pylist()
        if tier is Tier.WARM:
            indexes.changed(stored, tier, warm=partial(WarmIndex.put, rows=rows_of(rows)))
        else:
            indexes.changed(stored, tier, cold=partial(ColdIndex.put, table=rows.select(COLD_COLUMNS)))
        return len(stored)


def _lacking(table: Table) -> str:
    """The filter of the rows that may be long records without pieces (all long rows, before the column)."""
    return f"length(content) > {LONG_CHARS}" + (f" AND {PIECES} IS NULL" if table.has_pieces() else "")
