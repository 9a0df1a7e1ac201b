"""Through the real tools: a credential is refused (or redacted) and its bytes are in no file of the data folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from server.app import build_server
from server.settings import ConfigError, Settings
from tests.helpers import call, text
from tests.tiers.privacy.test_secrets import SAMPLES

pytestmark = pytest.mark.anyio

CONTROL = "Quokkas-nest-under-the-sandstone-ledge"  # an ordinary phrase: proves the grep can see stored text


def files_holding(folder: Path, needle: bytes) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def assert_on_no_disk(home: Path) -> None:
    assert files_holding(home, CONTROL.encode()), "the grep sees nothing stored: the check would prove nothing"
    for name, (_, secret) in SAMPLES.items():
        assert files_holding(home, secret.encode()) == [], name


async def test_every_sample_credential_is_refused_by_remember_and_profile_and_reaches_no_file(tmp_path: Path) -> None:
    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home")})
    async with Client(build_server(settings, run_timer=False)) as client:
        await call(client, "remember", content=f"{CONTROL}, the user saw it in 2024", tags=["nature"])
        for name, (sample, secret) in SAMPLES.items():
            if sample.startswith("{"):
                continue  # the SDK parses a JSON-looking argument into an object before the tool sees it
            single = await client.call_tool("remember", {"content": sample})
            batch = await client.call_tool(
                "remember", {"memories": [{"content": "fine"}, {"content": "fine too", "metadata": {"k": sample}}]}
            )
            profile = await client.call_tool("profile", {"set": {"creds": sample}})
            for result in (single, batch, profile):
                assert result.is_error, name
                assert "secret found: " in text(result), text(result)
                assert "at characters" in text(result)
                assert secret not in text(result)
        await call(client, "recall", query="where do quokkas nest?")
        listed = await call(client, "profile")
        assert "creds" not in listed["entries"]

    assert_on_no_disk(settings.home)


async def test_with_redact_every_sample_is_stored_with_a_marker_and_the_secret_reaches_no_file(tmp_path: Path) -> None:
    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home"), "MEMTIERS_SECRETS": "redact"})
    async with Client(build_server(settings, run_timer=False)) as client:
        await call(client, "remember", content=f"{CONTROL}, the user saw it in 2024")
        for name, (sample, _) in SAMPLES.items():
            if sample.startswith("{"):
                continue
            stored = await call(client, "remember", content=f"{name}: {sample}", tags=[sample[:60].strip()])
            assert stored["stored"][0]["id"]
        changed = await call(client, "profile", set={"creds": SAMPLES["anthropic-api-key"][0]})
        assert changed["entries"]["creds"]["value"] == "export ANTHROPIC_API_KEY=[redacted anthropic-api-key]"
        found = await client.call_tool("recall", {"query": "which key does the deploy user have?", "limit": 30})
        assert "[redacted aws-access-key]" in text(found)
        # a changed value goes down to warm as history: the redacted one, never the original
        await call(client, "profile", set={"creds": "kept in the team vault"})

    assert_on_no_disk(settings.home)


def test_an_unknown_secrets_policy_is_a_config_error_naming_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MEMTIERS_SECRETS='keep' is not valid: 'refuse' or 'redact'"):
        Settings.from_env({"MEMTIERS_HOME": str(tmp_path), "MEMTIERS_SECRETS": "keep"})
