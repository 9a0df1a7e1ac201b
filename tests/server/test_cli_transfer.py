"""`memtiers export` and `memtiers import` on data folders given by MEMTIERS_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main
from server.settings import Settings
from tests.helpers import T0, count_rows
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn

SAMPLES = Path(__file__).parent.parent / "tiers" / "samples"


@pytest.fixture
def seeded(home: Path, embedder: FastEmbedder) -> Path:
    settings = Settings.from_env({"MEMTIERS_HOME": str(home)})
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        memory.remember(
            [MemoryIn(content="My name is Ana"), MemoryIn(content="The printer on floor 2 is out of toner")], T0
        )
    finally:
        memory.close()
    return settings.folder


def test_export_to_a_file_then_import_on_a_fresh_data_folder_gives_the_same_memory_back(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup.jsonl"
    assert main(["export", "--out", str(backup), "--vectors"]) == 0
    exported = capsys.readouterr()
    monkeypatch.setenv("MEMTIERS_HOME", str(tmp_path / "elsewhere"))

    assert main(["import", str(backup)]) == 0
    imported = capsys.readouterr()
    again = tmp_path / "again.jsonl"
    assert main(["export", "--out", str(again), "--vectors"]) == 0

    assert exported.out == "" and "exported default to" in exported.err
    assert imported.out.startswith(f"imported 2 memories from {backup} (memtiers): 2 new, 0 already stored")
    assert "memories/s" in imported.out
    assert imported.err == ""  # no progress bar when stderr is not a terminal
    assert count_rows(tmp_path / "elsewhere" / "namespaces" / "default") == 2
    assert backup.read_text().splitlines()[1:] == again.read_text().splitlines()[1:]
    assert list(tmp_path.glob(".*partial")) == []


def test_export_without_out_writes_the_jsonl_stream_on_stdout(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export"]) == 0

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["format"] == "memtiers" and lines[0]["vectors"] is False
    assert [line["type"] for line in lines[1:]].count("record") == 2


def test_import_detects_another_tools_file_and_reports_what_it_stored(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", str(SAMPLES / "memory.jsonl")]) == 0

    project, user = capsys.readouterr().out.splitlines()
    assert project.startswith(f"imported 6 memories from {SAMPLES / 'memory.jsonl'} (memory-server): 6 new")
    # what the file says of its user (allergy, dark mode, name, city, employer) goes to the user scope
    assert user.startswith(f"imported 5 memories from {SAMPLES / 'memory.jsonl'} (memory-server) into the user scope")
    assert count_rows(home / "namespaces" / "default") == 6
    assert count_rows(home / "namespaces" / "user") == 5


def test_import_of_a_markdown_folder_with_from_given(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(SAMPLES / "memory-bank"), "--from", "markdown"]) == 0

    assert "(markdown): 6 new" in capsys.readouterr().out


def test_import_of_a_missing_file_exits_1_naming_it(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["import", str(home / "nope.jsonl"), "--from", "memtiers"])

    assert code == 1
    assert f"memtiers: no file {home / 'nope.jsonl'}" in capsys.readouterr().err


def test_an_import_of_a_file_without_its_end_line_says_it_may_be_cut_short(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup.jsonl"
    assert main(["export", "--out", str(backup)]) == 0
    backup.write_text("\n".join(backup.read_text().splitlines()[:-1]) + "\n")
    monkeypatch.setenv("MEMTIERS_HOME", str(tmp_path / "elsewhere"))
    capsys.readouterr()

    assert main(["import", str(backup)]) == 0

    assert "ends before its end line: it may be cut short" in capsys.readouterr().out


def test_the_user_scope_exports_on_its_own_and_its_export_imports_back_into_the_user_scope(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", str(SAMPLES / "memory.jsonl")]) == 0
    backup = tmp_path / "user.jsonl"
    assert main(["export", "--scope", "user", "--out", str(backup)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("MEMTIERS_HOME", str(tmp_path / "elsewhere"))

    assert main(["import", str(backup)]) == 0

    lines = [json.loads(line) for line in backup.read_text().splitlines()]
    assert lines[0]["namespace"] == "user"
    assert [line["type"] for line in lines[1:]].count("record") == 5
    assert "into the user scope (user): 5 new" in capsys.readouterr().out
    assert count_rows(tmp_path / "elsewhere" / "namespaces" / "user") == 5
    assert count_rows(tmp_path / "elsewhere" / "namespaces" / "default") == 0


def test_import_with_a_scope_puts_the_whole_file_there(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(SAMPLES / "memory.jsonl"), "--scope", "project"]) == 0

    assert "(memory-server): 11 new" in capsys.readouterr().out
    assert count_rows(home / "namespaces" / "default") == 11
    assert count_rows(home / "namespaces" / "user") == 0
