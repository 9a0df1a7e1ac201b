"""Bad input comes back as a tool error that says what to fix, and leaves everything stored as it was."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from server.app import build_server
from server.errors import PREFIX, message
from server.settings import Settings
from tests.helpers import count_rows, text
from tiers import errors
from tiers.errors import MemtiersError

pytestmark = pytest.mark.anyio

UNKNOWN_ID = "0123456789ab"


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client]:
    async with Client(build_server(settings, run_timer=False)) as connected:
        await connected.call_tool("remember", {"content": "A memory that must survive every bad call"})
        await connected.call_tool("profile", {"set": {"name": "Ana"}})
        yield connected


def snapshot(settings: Settings) -> tuple[int, bytes | None]:
    """What is stored: the number of rows and the profile file's bytes."""
    profile = settings.folder / "profile.json"
    return count_rows(settings.folder), profile.read_bytes() if profile.exists() else None


async def refused(client: Client, settings: Settings, tool: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must fail without changing the store; the error text."""
    before = snapshot(settings)
    result = await client.call_tool(tool, arguments)
    assert result.is_error, text(result)
    assert snapshot(settings) == before
    return text(result)


async def test_remember_of_empty_content_is_refused(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "remember", {"content": ""})

    assert "content" in error
    assert "at least 1 character" in error


async def test_remember_of_blank_content_is_refused_saying_it_is_blank(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "remember", {"content": " \n\t "})

    assert "content is blank; give the text to remember" in error


async def test_remember_of_oversized_content_is_refused_naming_the_limit(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "remember", {"content": "x" * 8_001})

    assert "content" in error
    assert "8000" in error


async def test_remember_without_content_or_memories_says_which_to_give(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "remember", {"tags": ["orphan"]})

    assert "content is required (or memories, for a batch)" in error


async def test_remember_with_both_content_and_memories_is_refused(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "remember", {"content": "one", "memories": [{"content": "two"}]})

    assert "not both" in error


async def test_a_batch_over_1000_memories_is_refused_asking_to_split_it(client: Client, settings: Settings) -> None:
    batch = [{"content": f"memory {i}"} for i in range(1_001)]

    error = await refused(client, settings, "remember", {"memories": batch})

    assert "at most 1000" in error
    assert "1001" in error
    assert "split" in error


async def test_a_batch_with_one_bad_memory_stores_none_of_it(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "remember", {"memories": [{"content": "fine"}, {"content": "   "}]})

    assert "content is blank" in error


@pytest.mark.parametrize(
    ("field", "value"),
    [("occurred_at", "last tuesday"), ("forget_after", "in a month"), ("forget_after", "P3X")],
)
async def test_remember_with_an_unparseable_time_names_the_field_and_an_example(
    client: Client, settings: Settings, field: str, value: str
) -> None:
    error = await refused(client, settings, "remember", {"content": "A dated memory", field: value})

    assert field in error
    assert repr(value) in error
    assert "e.g." in error


@pytest.mark.parametrize(("field", "value"), [("occurred_at", "noon"), ("forget_after", "P1Q")])
async def test_a_batch_with_an_unparseable_time_names_the_memory_the_field_and_an_example(
    client: Client, settings: Settings, field: str, value: str
) -> None:
    batch = [{"content": "fine"}, {"content": "A dated memory", field: value}]

    error = await refused(client, settings, "remember", {"memories": batch})

    assert f"memories.1.{field}" in error
    assert f"{field} {value!r} is not an ISO 8601" in error
    assert "e.g." in error


@pytest.mark.parametrize("field", ["since", "until"])
async def test_recall_with_an_unparseable_time_names_the_field(client: Client, settings: Settings, field: str) -> None:
    error = await refused(client, settings, "recall", {"query": "anything", field: "yesterday-ish"})

    assert f"{field} 'yesterday-ish' is not an ISO 8601 time" in error


@pytest.mark.parametrize("tool", ["promote", "forget"])
async def test_an_unknown_id_is_not_found(client: Client, settings: Settings, tool: str) -> None:
    error = await refused(client, settings, tool, {"id": UNKNOWN_ID})

    assert error.endswith(
        f"not found: no memory {UNKNOWN_ID!r} in this project or the user scope (it may have been forgotten)"
    )


@pytest.mark.parametrize("tool", ["promote", "forget"])
@pytest.mark.parametrize("rid", ["42", "ZZZZZZZZZZZZ", "0123456789ab' OR '1'='1"])
async def test_a_malformed_id_is_refused_saying_what_an_id_looks_like(
    client: Client, settings: Settings, tool: str, rid: str
) -> None:
    error = await refused(client, settings, tool, {"id": rid})

    assert "is not a memory id; ids are 12 hex characters" in error


async def test_profile_pin_of_a_missing_key_names_the_existing_keys(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "profile", {"pin": ["nickname"]})

    assert "no profile entry 'nickname'; entries are: name" in error


async def test_profile_set_of_an_invalid_key_shows_a_valid_one(client: Client, settings: Settings) -> None:
    error = await refused(client, settings, "profile", {"set": {"my key!": "x"}})

    assert "profile key 'my key!' is not valid" in error


async def test_a_profile_set_past_its_cap_is_refused_listing_what_could_be_demoted(tmp_path: Path) -> None:
    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home"), "MEMTIERS_HOT_CAP_TOKENS": "12"})
    async with Client(build_server(settings, run_timer=False)) as client:
        await client.call_tool("profile", {"set": {"name": "Ana", "city": "Lisbon"}})
        error = await refused(client, settings, "profile", {"set": {"project": "a rather long project description"}})
        profile = await client.call_tool("profile", {})

    # name and city are the person's: in the user profile, which the project's is read beside, under one cap
    assert "profile full: the hot profile would use 17 tokens (6 of them the user profile's" in error
    assert "over its cap of 12" in error
    assert "unset or demote entries first (candidates: city, name)" in error
    assert profile.structured_content is not None
    assert sorted(profile.structured_content["entries"]) == ["city", "name"]


async def test_a_corrupt_profile_file_is_named_and_left_byte_identical(tmp_path: Path) -> None:
    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home")})
    path = settings.folder / "profile.json"
    path.parent.mkdir(parents=True)
    garbage = b'{"version": 1, "entries": {"name": {"value": "Ana"'
    path.write_bytes(garbage)

    async with Client(build_server(settings, run_timer=False)) as client:
        plain = await client.call_tool("remember", {"content": "A memory that does not touch the profile"})
        assert not plain.is_error, text(plain)
        assert plain.structured_content is not None
        rid = plain.structured_content["stored"][0]["id"]
        errors_seen = [
            await refused(client, settings, "forget", {"id": rid}),
            await refused(client, settings, "promote", {"id": rid, "key": "note"}),
            await refused(client, settings, "profile", {}),
            await refused(client, settings, "profile", {"set": {"name": "Bea"}}),
            await refused(client, settings, "remember", {"content": "Bea", "key": "name"}),
            # said of the person it would go to the user scope's profile: kept in this one's, whose file is corrupt
            await refused(client, settings, "remember", {"content": "My name is Bea Santos", "scope": "project"}),
        ]
        with pytest.raises(MCPError) as resource_error:
            await client.read_resource("memory://profile")

    for error in [*errors_seen, str(resource_error.value)]:
        assert "corrupt profile" in error
        assert str(path) in error
        assert "fix or move that file" in error
    assert path.read_bytes() == garbage


def test_every_domain_error_is_mapped_to_its_own_readable_prefix() -> None:
    def subclasses(kind: type[MemtiersError]) -> list[type[MemtiersError]]:
        return [kind, *(sub for direct in kind.__subclasses__() for sub in subclasses(direct))]

    for kind in subclasses(MemtiersError):
        if kind.__module__ == errors.__name__:
            assert kind in PREFIX, f"{kind.__name__} reaches the model without a prefix"
            assert message(kind.__new__(kind)).startswith(f"{PREFIX[kind]}: ")
