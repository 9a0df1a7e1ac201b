"""Fixtures of the command-line tests: a data folder of their own, and none of the caller's settings."""

from __future__ import annotations

from pathlib import Path

import pytest

# Every variable server/settings.py reads: a developer's own settings must not change what the tests see.
SETTINGS = (
    "MEMTIERS_NAMESPACE", "MEMTIERS_HOT_CAP_TOKENS", "MEMTIERS_HOT_IDLE_DAYS", "MEMTIERS_EMBED_MODEL",
    "MEMTIERS_SWEEP_INTERVAL", "MEMTIERS_LOG_LEVEL", "MEMTIERS_COLD_URI", "MEMTIERS_SECRETS",
    "MEMTIERS_LOCK_TIMEOUT", "MEMTIERS_HTTP_TOKEN", "MEMTIERS_HTTP_TOKENS", "MEMTIERS_PROJECT_AWAY_DAYS",
    "MEMTIERS_USER_SCOPE",
)  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MEMTIERS_HOME in a temporary folder, for commands that read the environment as a user runs them."""
    home = tmp_path / "home"
    monkeypatch.setenv("MEMTIERS_HOME", str(home))
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return home
