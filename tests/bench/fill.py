"""The one seam between the scale benchmarks and the storage: how synthetic rows get into a store.

Everything else in `tests.bench.scale` and the LoCoMo haystack goes through the public `Memory`.
Rows are written here below the model (their vectors are made already), so this is the only function
that knows how the storage lays rows out. Repoint it when the storage changes (warm and cold tables,
a bulk-load method): the benchmarks then measure the new storage with no other edit.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from tiers.memory import Memory
from tiers.records import content_hash
from tiers.storage.tables import schema
from tiers.text.terms import document_terms
from tiers.text.timeparse import as_utc

BATCH = 10_000


def fill(memory: Memory, rows: Iterable[pa.Table]) -> int:
    """Write every row (the columns `tests.bench.synthetic.rows` makes) into `memory`'s store; how many.

    The storage: warm and cold tables, bulk-loaded by `Store.load` in batches of 10,000 under the write
    lock, each row with its content hash and the terms it is found by; then one compaction, which builds
    the cold tier's indexes. Rows keep the tier, dates and vector they come with.
    """
    written = 0
    full = schema(memory.embedder.dim)
    with memory.parts.locked():
        store = memory.store
        for table in rows:
            for start in range(0, len(table), BATCH):
                batch = table.slice(start, BATCH)
                contents = batch["content"].to_pylist()
                occurred = batch["occurred_at"].to_pylist()
                extra = {
                    "hash": [content_hash(c) for c in contents],
                    "terms": [document_terms(c, as_utc(o)) for c, o in zip(contents, occurred, strict=True)],
                    "before": [[] for _ in contents],
                    "after": [[] for _ in contents],
                    "pieces": [None for _ in contents],  # every synthetic memory is short: no pieces
                }
                columns = [
                    batch[f.name] if f.name in batch.column_names else pa.array(extra[f.name], f.type) for f in full
                ]
                store.load(pa.Table.from_arrays(columns, schema=full).cast(full))
                written += batch.num_rows
        store.compact()
    return written
