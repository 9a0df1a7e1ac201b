"""Re-embedding: switch a store to another model without losing a record, its id, tier or history.

The new vectors go into new tables beside the old ones, in batches, so an interrupted run resumes
where it stopped (or starts over, if the store was written since); `store.json` then names the new
tables and model in one atomic write. It refuses
to run while a server has the namespace open, so no process can add vectors of the old model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa

from tiers.errors import StorageError
from tiers.index.columns import pieces_column, vector_column
from tiers.index.meta import PIECES_DONE, read_meta, write_meta
from tiers.model.embedder import Embedder, embed_memories
from tiers.records import Tier
from tiers.storage.locking import file_lock, serving_lock
from tiers.storage.tables import PIECES, Connection, Table, schema

Progress = Callable[[int, int], None]


def reembed(
    folder: Path,
    embedder: Embedder,
    *,
    cold_uri: str | None = None,
    storage_options: dict[str, str] | None = None,
    batch: int = 256,
    progress: Progress | None = None,
) -> int:
    """Re-embed every record of the store in `folder` with `embedder`, keeping ids, tiers and history."""
    meta_path = folder / "store.json"
    if not meta_path.exists():
        raise StorageError(f"nothing to re-embed in {folder}: no memory has been stored in this namespace yet")
    with serving_lock(folder, exclusive=True), file_lock(folder / "write.lock"):
        meta = read_meta(meta_path)
        names = meta.get("tables", {"warm": "warm", "cold": "cold"})
        local_uri = str(folder / "lance")
        local = Connection(local_uri)
        cold_db = Connection(cold_uri, storage_options) if cold_uri else local
        read_lock = folder / "read.lock"
        places = ((Tier.WARM, local, local_uri), (Tier.COLD, cold_db, cold_uri or local_uri))
        olds = {
            tier: Table(db, names[tier.value], int(meta["dim"]), uri, read_lock, indexed=False)
            for tier, db, uri in places
        }
        versions = {tier.value: old.version() for tier, old in olds.items()}
        generation = int(meta.get("generation", 1)) + 1
        job = meta.get("reembedding")
        if job:
            generation = int(job["generation"])
            if (job["model"], job["dim"], job.get("versions")) != (embedder.name, embedder.dim, versions):
                # An unfinished run for another model, or the store was written since it stopped (rows added,
                # moved, changed or forgotten): its copies are stale. Drop them and start over beside them.
                for tier, db, _ in places:
                    if f"{tier.value}_{generation}" in db().list_tables().tables:
                        db().drop_table(f"{tier.value}_{generation}")
                generation += 1
        meta["reembedding"] = {
            "model": embedder.name,
            "dim": embedder.dim,
            "generation": generation,
            "versions": versions,
        }
        write_meta(meta_path, meta)
        tables = {}
        for tier, db, uri in places:
            old = olds[tier]
            cold = tier is Tier.COLD
            name = f"{tier.value}_{generation}"
            new = Table(db, name, embedder.dim, uri, read_lock, indexed=cold)
            tables[tier] = (old, new)
        total = sum(old.count() for old, _ in tables.values())
        done = 0
        for old, new in tables.values():
            have = new.ids()
            done += len(have)
            for rows in _batches(old, have, batch):
                texts = rows["content"].to_pylist()
                made = embed_memories(embedder, texts)
                column = vector_column(made.vectors, embedder.dim)
                rows = rows.set_column(rows.schema.get_field_index("vector"), "vector", column)
                if PIECES in rows.column_names:
                    rows = rows.drop_columns([PIECES])
                rows = rows.append_column(PIECES, pieces_column(made.pieces, embedder.dim))
                new.add(rows.cast(schema(embedder.dim)))
                done += rows.num_rows
                if progress:
                    progress(done, total)
            new.compact()
        meta.update(
            model=embedder.name,
            dim=embedder.dim,
            generation=generation,
            tables={tier.value: f"{tier.value}_{generation}" for tier in tables},
        )
        meta[PIECES] = PIECES_DONE  # every long record has its pieces now: the sweep's backfill has nothing to do
        meta.pop("reembedding", None)
        write_meta(meta_path, meta)
        for tier, (old, _) in tables.items():
            db = cold_db if tier is Tier.COLD else local
            db().drop_table(old.name)
    return total


def _batches(table: Table, skip: set[str], size: int) -> Iterator[pa.Table]:
    for batch in table.scan(batch=size):
        rows = pa.Table.from_batches([batch])
        if skip:
            keep = pa.array([rid not in skip for rid in rows["id"].to_pylist()])
            rows = rows.filter(keep)
        if rows.num_rows:
            yield rows
