"""store.json: which embedding model made a store's vectors, its layout's version, and whether every long
record has its pieces.

A store is bound to one model: its vectors mean nothing to another, so opening it with another is refused
(with the way back, or `memtiers reembed`). The file is read and written whole, so a concurrent reader
sees the old one or the new one; a damaged one is left as it is, and the error gives the JSON to write back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tiers.errors import CorruptFile, ModelMismatch
from tiers.files import read_json_object, write_atomic
from tiers.model.embedder import DEFAULT_MODEL
from tiers.storage.tables import PIECES

SCHEMA_VERSION = 2
DEFAULT_DIM = 384  # of the default model: what a damaged store.json is told to name when nothing else is known
# What store.json's `pieces` says once every long record has its pieces. Before words were counted by script,
# it said `true`: a long Chinese or Japanese memory was one word then, and a store marked so is looked at once more.
PIECES_DONE = 2


def check_model(folder: Path, model: str, dim: int, cold_uri: str | None) -> dict[str, Any]:
    """The store.json of the store in `folder`, written first for a new store; refused when another model made it."""
    path = folder / "store.json"
    if not path.exists():
        meta: dict[str, Any] = {"model": model, "dim": dim, "schema": SCHEMA_VERSION}
        # A new folder's tables are new, and every long record they get has its pieces; a cold tier elsewhere
        # may already hold records from before pieces were kept, so the backfill looks once
        # (tiers/namespace/backfill.py).
        if cold_uri is None:
            meta[PIECES] = PIECES_DONE
        write_meta(path, meta)
        return meta
    meta = read_meta(path, model, dim)
    if meta.get("model") != model or meta.get("dim") != dim:
        raise ModelMismatch(
            f"the store in {folder} was embedded with {meta.get('model')!r} (dim {meta.get('dim')}), "
            f"not the configured {model!r}; set MEMTIERS_EMBED_MODEL back, or run "
            f"`memtiers reembed` to re-embed every memory with the new model"
        )
    return meta


def read_meta(path: Path, model: str = DEFAULT_MODEL, dim: int = DEFAULT_DIM) -> dict[str, Any]:
    """store.json, or an error that names it, says it was left untouched and gives the JSON to write back.

    `model` and `dim` (the configured ones, when known) are what that JSON names.
    """
    again = json.dumps({"model": model, "dim": dim, "schema": SCHEMA_VERSION})
    fix = (
        "it records which embedding model made the vectors in lance/. Restore it from a backup, or write it again "
        f"as {again} naming the model that embedded them (memtiers stats shows the configured one)"
    )
    meta = read_json_object(path, fix)
    if not isinstance(meta.get("model"), str) or not isinstance(meta.get("dim"), int):
        raise CorruptFile(f"{path} is corrupt (no model name and dimension) and was left untouched; {fix}")
    return meta


def write_meta(path: Path, meta: dict[str, Any]) -> None:
    """Write store.json atomically: a concurrent reader sees the old file or the new one, never a part."""
    write_atomic(path, json.dumps(meta))
