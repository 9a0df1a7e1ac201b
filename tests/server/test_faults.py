"""What a user sees of a damaged data folder, through the real tools and the command line: the file, and what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from server.app import build_server
from server.cli import main
from server.settings import Settings
from tests.helpers import call, text


@pytest.mark.anyio
async def test_a_corrupt_store_json_makes_remember_answer_which_file_and_what_to_do(settings: Settings) -> None:
    async with Client(build_server(settings, run_timer=False)) as client:
        await call(client, "remember", content="The staging database runs on port 5433")
    meta = settings.folder / "store.json"
    meta.write_text("")  # what a crash in the middle of the old in-place write left

    async with Client(build_server(settings, run_timer=False)) as client:
        result = await client.call_tool("remember", {"content": "We deploy on Tuesdays"})

    assert result.is_error
    assert f"corrupt file: {meta} is corrupt (it is empty) and was left untouched" in text(result)
    assert "Restore it from a backup, or write it again" in text(result)
    assert meta.read_text() == ""


def test_reembed_of_a_namespace_never_used_prints_why_and_exits_1_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMTIERS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMTIERS_NAMESPACE", "typo-in-the-name")

    assert main(["reembed"]) == 1

    err = capsys.readouterr().err
    assert "memtiers: nothing to re-embed in" in err
    assert "no memory has been stored in this namespace yet" in err
    assert "typo-in-the-name" in err
    assert "Traceback" not in err
    assert not (tmp_path / "home" / "namespaces" / "typo-in-the-name").exists()


def test_stats_on_a_damaged_ledger_prints_the_file_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "home" / "namespaces" / "default"
    folder.mkdir(parents=True)
    (folder / "ledger.sqlite").write_bytes(b"garbage" * 1000)
    (folder / "store.json").write_text(json.dumps({"model": "m", "dim": 3, "schema": 2}))
    monkeypatch.setenv("MEMTIERS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMTIERS_NAMESPACE", raising=False)

    assert main(["stats"]) == 1

    err = capsys.readouterr().err
    assert f"cannot open the ledger {folder / 'ledger.sqlite'} (file is not a database)" in err
    assert "move it aside" in err
