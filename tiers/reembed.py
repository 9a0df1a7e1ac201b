"""Re-embedding: switch a store to another model without losing a record, its id, tier or history."""

from __future__ import annotations

from pathlib import Path

from tiers.embedder import Embedder
from tiers.errors import NotFound
from tiers.locking import file_lock
from tiers.store import Store


def reembed(folder: Path, embedder: Embedder, batch: int = 256) -> int:
    """Re-embed every record of the store in `folder` with `embedder`, keeping ids, tiers and history."""
    if not (folder / "store.json").exists():  # checked before the lock, which would create the folder
        raise NotFound(
            f"there is nothing to re-embed in {folder}: no memory was ever stored there (it has no store.json); "
            "check MEMTIERS_HOME and MEMTIERS_NAMESPACE"
        )
    with file_lock(folder / "write.lock"):
        store = Store.as_recorded(folder)
        rows = store.scan()
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            vectors = embedder.embed([row["content"] for row in chunk])
            for row, vector in zip(chunk, vectors, strict=True):
                row["vector"] = vector.tolist()
        store.rebind(embedder.name, embedder.dim, rows)
    return len(rows)
