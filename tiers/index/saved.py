"""Saved copies of an index: a process that opens a large tier reads the copy the last full read saved,
instead of the table, and catches up from the change feed (tiers/index/synced.py).

A copy is a directory of .npy and Arrow files with a meta.json (tiers/files.py: the newest one is read,
older ones removed), stamped with what it must match to be read: its layout, its table and the model.
A copy that does not match, or does not add up, is never read: the table is read whole instead.
The warm copy is read whole into memory (no file stays open, so removing it leaves nothing behind); the
cold copy's largest arrays and its fields are mapped, so they cost memory only where they are read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from tiers.files import current_copy, new_copy, publish_copy
from tiers.index import cold
from tiers.index.cold import ColdIndex
from tiers.index.fields import FIELD_BATCH, FIELDS
from tiers.index.rows import BASE_COLUMNS
from tiers.index.warm import WarmIndex

# What a saved warm copy holds besides the table's rows (`base.arrow`) and the vocabulary of their postings:
# each file's name, and where the index keeps it.
_WARM_ARRAYS = {
    "vectors": ("vectors",),
    "occurred_us": ("occurred_us",),
    "created_us": ("created_us",),
    "durable": ("durable",),
    "kind": ("kind",),
    "lengths": ("lengths",),
    "prev": ("episodes", "prev"),
    "next": ("episodes", "next"),
    "_base_rows": ("postings", "rows"),
    "_base_counts": ("postings", "counts"),
    "_base_offsets": ("postings", "offsets"),
    "_episode_order": ("episodes", "order"),
}
_WARM_BY_POSITION = [name for name in _WARM_ARRAYS if not name.startswith("_")] + ["_episode_order"]
_COLD_ARRAYS = [
    "ids",
    "alive",
    "durable",
    "kind",
    "occurred_us",
    "bits",
    "codes",
    "scale",
    "before",
    "after",
    "lengths",
]
_COLD_LOOKUP = ["_sorted", "_sorted_at", "_offsets", "_rows", "_counts"]


def _held(index: object, where: tuple[str, ...]) -> np.ndarray:
    for name in where:
        index = getattr(index, name)
    assert isinstance(index, np.ndarray)
    return index


def _hold(index: object, where: tuple[str, ...], array: np.ndarray) -> None:
    for name in where[:-1]:
        index = getattr(index, name)
    setattr(index, where[-1], array)


def save_warm(index: WarmIndex, folder: Path, stamp: dict[str, object]) -> bool:
    """Write a freshly loaded warm index (nothing changed since) under `folder`, with `stamp` to check it by;
    False when it changed since its load and so was not saved."""
    n = index.size
    base = index.rows.base
    if base is None or index.episodes.order is None or not index.postings.only_loaded:
        return False
    if n != index.live or n != len(base):
        return False
    target = new_copy(folder)
    for name, where in _WARM_ARRAYS.items():
        array = _held(index, where)
        np.save(target / f"{name}.npy", array if name.startswith("_") else array[:n])
    for name, array in index.pieces.arrays().items():
        np.save(target / f"{name}.npy", array)
    _write_arrow(target / "base.arrow", base)
    words = sorted(index.postings.vocabulary, key=index.postings.vocabulary.__getitem__)
    _write_arrow(target / "vocabulary.arrow", pa.table({"word": pa.array(words, pa.string())}))
    meta = {**stamp, "dim": index.dim, "size": n, "length_sum": index.length_sum}
    (target / "meta.json").write_text(json.dumps(meta))
    publish_copy(folder, target)
    return True


def open_warm(folder: Path, stamp: dict[str, object]) -> WarmIndex | None:
    """The warm index saved under `folder` if its stamp matches, else None (nothing saved, another store, damage).

    Read whole into memory (no file stays open), so removing the copy leaves nothing of it behind.
    """
    try:
        opened = current_copy(folder, stamp)
        if opened is None:
            return None
        target, meta = opened
        index = WarmIndex(int(meta["dim"]))
        n = int(meta["size"])
        arrays = {name: np.load(target / f"{name}.npy") for name in _WARM_ARRAYS}
        pieces = {name: np.load(target / f"{name}.npy") for name in index.pieces.names()}
        base = _read_arrow(target / "base.arrow")
        words = _read_arrow(target / "vocabulary.arrow")["word"].to_pylist()
        length_sum, seen = float(meta["length_sum"]), int(meta["seen"])
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None
    shapes_ok = arrays["vectors"].shape == (n, index.dim) and all(len(arrays[name]) == n for name in _WARM_BY_POSITION)
    if not shapes_ok or base.num_rows != n or set(base.column_names) != set(BASE_COLUMNS):
        return None
    postings = (arrays["_base_offsets"], arrays["_base_rows"], arrays["_base_counts"])
    if not index.postings.set_arrays(words, *postings) or not index.pieces.set_arrays(pieces, n):
        return None
    for name, where in _WARM_ARRAYS.items():
        _hold(index, where, arrays[name])
    index.alive = np.ones(n, dtype=bool)
    index.rows.load(base)
    index.length_sum, index.saved_seen = length_sum, seen
    index.ids = list[str | None](base["id"].to_pylist())
    index.hashes = base["hash"].to_pylist()
    index.sources = base["source"].to_pylist()
    index.index_ids()
    index.size = index.live = n
    return index


def save_cold(index: ColdIndex, folder: Path, stamp: dict[str, object]) -> bool:
    """Write a freshly loaded cold index (nothing added since) under `folder`, with `stamp` to check it by;
    False when rows were added since its load and so it was not saved."""
    if index._postings or index._added:
        return False
    target = new_copy(folder)
    n = index.size
    for name in _COLD_ARRAYS:
        array = getattr(index, name)
        np.save(target / f"{name}.npy", array[:, :n] if name == "bits" else array[:n])
    for name in _COLD_LOOKUP:
        np.save(target / f"{name}.npy", getattr(index, name))
    for name, array in index.pieces.arrays().items():
        np.save(target / f"{name}.npy", array)
    fields = index.fields().combine_chunks()  # batches of FIELD_BATCH: a take reads one batch or a few
    with pa.OSFile(str(target / "fields.arrow"), "wb") as sink, pa.ipc.new_file(sink, fields.schema) as writer:
        writer.write_table(fields, max_chunksize=FIELD_BATCH)
    words = sorted(index._vocabulary, key=index._vocabulary.__getitem__)
    meta = {**stamp, "dim": index.dim, "size": n, "live": index.live, "length_sum": index._length_sum}
    _write_arrow(target / "vocabulary.arrow", pa.table({"word": pa.array(words, pa.string())}))
    (target / "meta.json").write_text(json.dumps(meta))
    publish_copy(folder, target)
    return True


def open_cold(folder: Path, stamp: dict[str, object]) -> ColdIndex | None:
    """The cold index saved under `folder` if its stamp matches, else None (nothing saved, another store, damage).

    Its codes, postings and fields are mapped from the copy's files (`ColdIndex.mapped_from`).
    """
    try:
        opened = current_copy(folder, stamp)
        if opened is None:
            return None
        target, meta = opened
        index = ColdIndex(int(meta["dim"]))
        for name in [*_COLD_ARRAYS, *_COLD_LOOKUP]:
            array = np.load(target / f"{name}.npy", mmap_mode="r" if name in cold.MAPPED else None)
            setattr(index, name, array.view(np.ndarray))  # still mapped, without np.memmap's cost per slice
        index.size, index.live = int(meta["size"]), int(meta["live"])
        index._length_sum = float(meta["length_sum"])
        words = pa.ipc.open_file(pa.memory_map(str(target / "vocabulary.arrow"))).read_all()["word"]
        index._vocabulary = {word: i for i, word in enumerate(words.to_pylist())}
        index.saved_seen = int(meta["seen"])
        pieces = {name: np.load(target / f"{name}.npy") for name in index.pieces.names()}
        fields = pa.ipc.open_file(pa.memory_map(str(target / "fields.arrow"))).read_all()
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None
    if len(index.alive) != index.size or index.bits.shape != (index.words_per_code, index.size):
        return None
    if fields.num_rows != index.size or fields.schema.names != FIELDS:
        return None
    if not index.pieces.set_arrays(pieces, index.size):
        return None
    index.kept_fields.set(fields.to_batches())
    index.mapped_from = target
    return index


def _write_arrow(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_arrow(path: Path) -> pa.Table:
    with pa.OSFile(str(path)) as source:
        return pa.ipc.open_file(source).read_all()
