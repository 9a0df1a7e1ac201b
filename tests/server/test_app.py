"""build_server: the profile resource, change notifications for both protocol eras, what the server advertises."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import ResourceUpdatedNotification, TextResourceContents

from server.app import build_server
from server.settings import Settings
from tests.helpers import call

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client]:
    async with Client(build_server(settings, run_timer=False)) as connected:
        yield connected


async def test_the_server_introduces_itself_and_offers_subscriptions_in_both_eras(settings: Settings) -> None:
    for mode in ("legacy", "auto"):
        async with Client(build_server(settings, run_timer=False), mode=mode) as client:  # type: ignore[arg-type]
            assert client.server_info is not None and client.server_info.name == "memtiers"
            assert client.instructions is not None and "memory://profile" in client.instructions
            assert client.server_capabilities.resources is not None
            assert client.server_capabilities.resources.subscribe is True


# the profile resource


async def test_the_profile_resource_reads_key_value_lines(client: Client) -> None:
    empty = await client.read_resource("memory://profile")
    await call(client, "profile", set={"name": "Ana", "project": "memtiers"})
    filled = await client.read_resource("memory://profile")

    [before] = empty.contents
    [after] = filled.contents
    assert isinstance(before, TextResourceContents) and isinstance(after, TextResourceContents)
    assert before.text == "(the profile is empty)"
    assert (
        after.text
        == "user scope (shared by every project):\nname: Ana\nproject scope (namespace default):\nproject: memtiers"
    )


async def test_a_listening_modern_client_is_told_when_the_profile_changes(client: Client) -> None:
    async with client.listen(resource_subscriptions=["memory://profile"]) as subscription:
        await call(client, "profile", set={"name": "Ana"})
        with anyio.fail_after(10):
            event = await subscription.__anext__()

    assert str(event.uri) == "memory://profile"  # type: ignore[union-attr]


async def test_a_subscribed_legacy_client_is_told_when_the_profile_changes(settings: Settings) -> None:
    updated = anyio.Event()
    uris: list[str] = []

    async def on_message(message: object) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            uris.append(str(message.params.uri))
            updated.set()

    server = build_server(settings, run_timer=False)
    async with Client(server, mode="legacy", message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # the legacy API is what is under test
            await client.subscribe_resource("memory://profile")
        await call(client, "remember", content="Ana", key="name")
        with anyio.fail_after(10):
            await updated.wait()

    assert uris == ["memory://profile"]
