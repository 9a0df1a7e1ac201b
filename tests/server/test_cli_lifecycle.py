"""`memtiers sweep` and `memtiers log` on a real data folder, as an operator runs them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.cli import main
from server.settings import Settings
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier

T0 = datetime(2026, 1, 5, tzinfo=UTC)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("MEMTIERS_HOME", str(home))
    monkeypatch.setenv("MEMTIERS_NAMESPACE", "cli")
    return home


def _seed(home: Path, embedder: FastEmbedder) -> tuple[str, str]:
    settings = Settings.from_env({"MEMTIERS_HOME": str(home), "MEMTIERS_NAMESPACE": "cli"})
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        chat, allergy = (
            s.id
            for s in memory.remember(
                [MemoryIn(content="nice weather today"), MemoryIn(content="I'm allergic to peanuts")], T0
            )
        )
    finally:
        memory.close()
    return chat, allergy


def test_sweep_dry_run_lists_the_moves_and_moves_nothing(
    home: Path, embedder: FastEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    chat, _ = _seed(home, embedder)
    assert main(["sweep", "--at", "2026-03-30T00:00:00Z", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would move 1" in out
    assert f"{chat} warm -> cold (heat, heat 0.0" in out
    assert main(["log", "--id", chat]) == 0
    assert "warm -> cold" not in capsys.readouterr().out


def test_sweep_then_log_shows_a_records_own_moves_newest_first(
    home: Path, embedder: FastEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    chat, allergy = _seed(home, embedder)
    assert main(["sweep", "--at", "2026-03-30T00:00:00Z"]) == 0
    assert "moved 1" in capsys.readouterr().out
    assert main(["log", "--id", chat]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0].split(" ", 1)[1] for line in lines] == [f"{chat} warm -> cold", f"{chat} new -> warm"]
    assert main(["log", "--id", allergy]) == 0
    assert "remember:health" in capsys.readouterr().out
    settings = Settings.from_env({"MEMTIERS_HOME": str(home), "MEMTIERS_NAMESPACE": "cli"})
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        assert memory.get(chat).tier is Tier.COLD
    finally:
        memory.close()
