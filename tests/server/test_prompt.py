"""The memory-protocol prompt: listed, and rendered as one short user message that names every tool."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp_types import TextContent

from server.app import build_server
from server.settings import Settings

pytestmark = pytest.mark.anyio


async def test_the_memory_protocol_prompt_is_listed_with_a_description(settings: Settings) -> None:
    async with Client(build_server(settings, run_timer=False)) as client:
        listed = await client.list_prompts()

    [prompt] = listed.prompts
    assert prompt.name == "memory-protocol"
    assert prompt.arguments in (None, [])
    assert prompt.description is not None and "recall before answering" in prompt.description


async def test_the_memory_protocol_prompt_renders_the_protocol_in_both_eras(settings: Settings) -> None:
    for mode in ("legacy", "auto"):
        async with Client(build_server(settings, run_timer=False), mode=mode) as client:  # type: ignore[arg-type]
            rendered = await client.get_prompt("memory-protocol")

        [message] = rendered.messages
        assert message.role == "user"
        assert isinstance(message.content, TextContent)
        body = message.content.text
        assert body.index("memory://profile") < body.index("`recall`") < body.index("`remember`")
        assert body.index("`remember`") < body.index("`promote`") < body.index("`forget`")
        assert "`kind`" in body
        assert len(body) < 1_500  # short: a host inserts it into every conversation
