"""The data folder is private to its user: every folder 0700 and file 0600 after real writes, also once loose."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from server.cli import main
from tests.helpers import T0
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.privacy.folders import private_umask, tighten
from tiers.records import Kind, MemoryIn


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    """Start each test with a common user's umask (0o022), as a shell gives it, and put the old one back after."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def modes(folder: Path) -> dict[Path, int]:
    return {p: stat.S_IMODE(p.lstat().st_mode) for p in [folder, *folder.rglob("*")]}


def not_private(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): oct(m) for p, m in modes(folder).items() if m & 0o077}


def exercise(memory: Memory) -> None:
    """Every kind of write: rows, the profile, the ledger, a sweep with compaction, a forget."""
    stored = memory.remember(
        [MemoryIn(content=f"Note {i} about the build farm") for i in range(5)]
        + [MemoryIn(content="I am allergic to peanuts", kind=Kind.HEALTH)],
        T0,
    )
    memory.set_profile({"name": "Ana"}, T0)
    memory.set_profile({"name": "Ana Lima"}, T0)
    memory.recall("what am I allergic to?", T0)
    memory.sweep(T0 + timedelta(days=120))
    memory.forget(stored[0].id, T0 + timedelta(days=121))


def test_a_new_data_folder_and_everything_memtiers_and_lancedb_write_in_it_is_private(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "home" / "namespaces" / "default"
    memory = Memory(folder, embedder)
    try:
        exercise(memory)
    finally:
        memory.close()

    found = modes(tmp_path / "home")
    assert len(found) > 10  # folders, the profile, the ledger and its WAL, locks, LanceDB's data and manifests
    assert {p.name for p in found} >= {"profile.json", "ledger.sqlite", "store.json", "write.lock", "lance"}
    assert not_private(tmp_path / "home") == {}
    assert all(m == 0o700 for p, m in found.items() if p.is_dir())
    assert all(m == 0o600 for p, m in found.items() if p.is_file())


def test_an_existing_loose_folder_is_made_private_on_open_and_said_once(
    tmp_path: Path, embedder: FastEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    try:
        exercise(memory)
    finally:
        memory.close()
    for path in modes(folder):
        path.chmod(0o755 if path.is_dir() else 0o644)
    assert not_private(folder)

    with caplog.at_level(logging.WARNING, logger="tiers.privacy.folders"):
        reopened = Memory(folder, embedder)
        reopened.close()
        again = Memory(folder, embedder)
        again.close()

    assert not_private(folder) == {}
    [said] = [r for r in caplog.records if r.name == "tiers.privacy.folders"]
    assert said.levelno == logging.WARNING
    assert f"under {folder} private to their owner" in said.getMessage()


def test_tighten_keeps_the_owners_bits_and_leaves_what_a_link_points_to_alone(tmp_path: Path) -> None:
    folder = tmp_path / "ns"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    script = folder / "hook.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    outside = tmp_path / "shared.txt"
    outside.write_text("not memtiers' file")
    outside.chmod(0o644)
    (folder / "link").symlink_to(outside)

    changed = tighten(folder)

    assert set(changed) == {folder, script}
    assert stat.S_IMODE(script.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644


def test_private_umask_only_ever_tightens() -> None:
    os.umask(0o027)
    assert private_umask() == 0o027
    assert os.umask(0o077) == 0o077
    os.umask(0o277)
    private_umask()
    assert os.umask(0o077) == 0o277


def test_the_command_line_says_on_stderr_that_it_made_a_loose_data_folder_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    (home / "namespaces" / "default").mkdir(parents=True)
    (home / "namespaces" / "default" / "profile.json").write_text('{"version": 1, "entries": {}}')
    for path in modes(home):
        path.chmod(0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("MEMTIERS_HOME", str(home))
    monkeypatch.setenv("MEMTIERS_LOG_LEVEL", "WARNING")
    monkeypatch.setattr(logging.root, "handlers", [])  # let main() configure logging to stderr as it does
    monkeypatch.delenv("MEMTIERS_NAMESPACE", raising=False)

    assert main(["stats", "--json"]) == 0

    captured = capsys.readouterr()
    assert "private to their owner" in captured.err
    assert "private" not in captured.out
    assert not_private(home) == {}
