"""Re-embedding: switch a store to another model without losing a record, its id, tier or history."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tiers.embedder import Embedder
from tiers.locking import file_lock
from tiers.store import Store


def reembed(
    folder: Path, embedder: Embedder, batch: int = 256, progress: Callable[[int, int | None], None] | None = None
) -> int:
    """Re-embed every record of the store in `folder` with `embedder`, keeping ids, tiers and history.

    `progress` is told (records done, records in all) after each batch.
    """
    with file_lock(folder / "write.lock"):
        store = Store.as_recorded(folder)
        rows = store.scan()
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            vectors = embedder.embed([row["content"] for row in chunk])
            for row, vector in zip(chunk, vectors, strict=True):
                row["vector"] = vector.tolist()
            if progress is not None:
                progress(start + len(chunk), len(rows))
        store.rebind(embedder.name, embedder.dim, rows)
    return len(rows)
