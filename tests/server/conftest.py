"""Fixtures of the command-line tests: a data folder of their own, and none of the caller's settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MEMTIERS_HOME in a temporary folder, for commands that read the environment as a user runs them."""
    home = tmp_path / "home"
    monkeypatch.setenv("MEMTIERS_HOME", str(home))
    # Every setting server/settings.py reads starts so: a developer's own must not change what the tests see.
    for name in [n for n in os.environ if n.startswith("MEMTIERS_") and n != "MEMTIERS_HOME"]:
        monkeypatch.delenv(name)
    return home
