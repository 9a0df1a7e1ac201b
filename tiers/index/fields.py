"""The cold records' fields, kept beside the cold index so the records a recall returns need no table read.

Every position's fields (text, tags, times, metadata: never its vector) as Arrow record batches in position
order, a saved copy's mapped from its file, then the rows added since. A take is made batch by batch, as
Arrow's take over a chunked table first joins its chunks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.records import Record, Tier, records_of

# A record's fields kept beside the codes (its id and tier are the index's own), to return it without a read.
FIELDS = [
    "content", "kind", "protected", "tags", "metadata", "source", "occurred_at", "created_at",
    "forget_after", "superseded_by", "superseded_at",
]  # fmt: skip
FIELD_BATCH = 262_144  # rows per batch of fields
_SMALL_BATCHES = 64  # batches smaller than FIELD_BATCH, from rows added one by one, joined past this many


class Fields:
    """FIELDS of every position of the cold index, dead ones included, in batches."""

    def __init__(self) -> None:
        self.batches: list[pa.RecordBatch] = []
        self._ends = np.zeros(0, dtype=np.int64)  # where each batch ends, in positions

    def set(self, batches: list[pa.RecordBatch]) -> None:
        self.batches = batches
        self._ends = np.cumsum([b.num_rows for b in batches], dtype=np.int64)

    def append(self, table: pa.Table) -> None:
        """The fields of rows appended at the end; many small additions are joined into one batch."""
        batches = [*self.batches, *table.combine_chunks().to_batches()]
        small = len(batches)
        while small and batches[small - 1].num_rows < FIELD_BATCH:
            small -= 1
        if len(batches) - small > _SMALL_BATCHES:
            batches[small:] = pa.Table.from_batches(batches[small:]).combine_chunks().to_batches()
        self.set(batches)

    def table(self) -> pa.Table:
        """FIELDS of every position, dead ones included."""
        return pa.Table.from_batches(self.batches) if self.batches else pa.table({})

    def records(self, ids: Sequence[str], positions: np.ndarray) -> list[Record]:
        """The records of these ids at these positions (a take per batch, then one pass making them all)."""
        batch_of = np.searchsorted(self._ends, positions, side="right")
        taken: list[pa.RecordBatch] = []
        slots: list[int] = []
        for b in np.unique(batch_of):
            at = np.flatnonzero(batch_of == b)
            start = int(self._ends[b]) - self.batches[b].num_rows
            taken.append(self.batches[b].take(pa.array(positions[at] - start)))
            slots += at.tolist()
        records = records_of(pa.Table.from_batches(taken), [ids[i] for i in slots], Tier.COLD)
        out: list[Record] = [records[0]] * len(ids)
        for slot, record in zip(slots, records, strict=True):
            out[slot] = record
        return out

    def tagged(self, tags: Sequence[str], size: int) -> np.ndarray:
        """Positions holding any of these tags, read from the tag lists."""
        out = np.zeros(size, dtype=bool)
        wanted = pa.array(list(dict.fromkeys(tags)), pa.string())
        start = 0
        for batch in self.batches:
            lists = batch.column("tags")
            hit = pc.is_in(pc.list_flatten(lists), value_set=wanted)
            rows = pc.list_parent_indices(lists).filter(hit).to_numpy(zero_copy_only=False)
            out[start + rows.astype(np.int64)] = True
            start += batch.num_rows
        return out

    def blank(self, dead: np.ndarray) -> None:
        """Drop the text and metadata of these positions (a mask): a forgotten record's words leave memory."""
        if not self.batches:
            return
        fields = self.table()
        gone = pa.array(dead)
        content = pc.if_else(gone, pa.scalar(None, pa.string()), fields["content"])
        metadata = pc.if_else(gone, pa.scalar(None, pa.string()), fields["metadata"])
        fields = fields.set_column(fields.schema.get_field_index("content"), "content", content)
        fields = fields.set_column(fields.schema.get_field_index("metadata"), "metadata", metadata)
        self.set(fields.combine_chunks().to_batches(max_chunksize=FIELD_BATCH))
