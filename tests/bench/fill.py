"""The one seam between the scale benchmarks and the storage: how synthetic rows get into a store.

Everything else in `tests.bench.scale` and the LoCoMo haystack goes through the public `Memory`.
Rows are written here below the model (their vectors are made already), so this is the only function
that knows how the storage lays rows out. Repoint it when the storage changes (warm and cold tables,
a bulk-load method): the benchmarks then measure the new storage with no other edit.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from tiers.locking import file_lock
from tiers.memory import Memory
from tiers.records import content_hash

BATCH = 10_000


def fill(memory: Memory, rows: Iterable[pa.Table]) -> int:
    """Write every row (the columns `tests.bench.synthetic.rows` makes) into `memory`'s store; how many.

    Today's storage: one table, `Store.add` in batches of 10,000 under the write lock, then one compaction
    (which also builds the full-text index). Rows keep the tier, dates and vector they come with.
    """
    written = 0
    with file_lock(memory.folder / "write.lock"):
        store = memory.store
        for table in rows:
            for start in range(0, len(table), BATCH):
                batch = table.slice(start, BATCH).to_pylist()
                for row in batch:
                    row["hash"] = content_hash(row["content"])
                store.add(batch)
                written += len(batch)
        store.compact()
    return written
