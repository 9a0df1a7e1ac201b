"""No tool and no resource blocks the event loop: asyncio's debug mode reports every callback over 50 ms."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest
from mcp import Client

from server.app import build_server
from server.settings import Settings
from tests.helpers import T0, Clock, call
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn

SLOW = 0.05  # seconds: a callback that long stalls every other request the server is serving


def seed(settings: Settings, embedder: FastEmbedder) -> list[str]:
    """A folder as a server finds it after a restart: warm and cold records, a profile, and a standing candidate."""
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        trips = [MemoryIn(content=f"Trip {i}: the ferry to island {i} left at {i % 12 + 1} am") for i in range(30)]
        old = memory.remember(trips, T0)
        memory.sweep(T0 + timedelta(days=50))  # cold now
        tides = [
            MemoryIn(content=f"Tide table {i}: high water at {i % 24}:{i % 60:02d} on pier {i}") for i in range(150)
        ]
        memory.remember(tides, T0 + timedelta(days=49))  # warm: what a restarted server loads into memory
        memory.set_profile({"name": "Ada", "city": "Bergen"}, T0 + timedelta(days=50))
        memory.parts.candidates.add(old[0].id, "ferry", "profile full", value="the ferry leaves at 6 am")
        assert memory.candidates()
        return [s.id for s in old]
    finally:
        memory.close()


@pytest.mark.anyio
async def test_no_tool_and_no_resource_runs_a_slow_callback_on_the_event_loop(
    settings: Settings, embedder: FastEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    cold = seed(settings, embedder)
    server = build_server(
        settings, Clock(T0 + timedelta(days=50)), run_timer=False, embedder=embedder
    )  # before the watch
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    loop.slow_callback_duration = SLOW
    caplog.set_level(logging.WARNING, logger="asyncio")

    async with Client(server) as client:
        # First, as a host does after a restart: the profile (which opens the store and lists the candidate).
        listed = await call(client, "profile")
        assert [c["id"] for c in listed["candidates"]] == [cold[0]]
        [stored] = (await call(client, "remember", content="The ferry timetable changes in May", tags=["trip"]))[
            "stored"
        ]
        assert await call(client, "remember", memories=[{"content": f"Batch note {i} on tides"} for i in range(20)])
        found = await call(client, "recall", query="when does the ferry leave", tiers=["hot", "warm", "cold"])
        assert found["memories"]
        await call(client, "profile", set={"city": "Oslo"}, pin=["name"])
        await call(client, "promote", id=cold[1], to="warm")
        await call(client, "promote", id=stored["id"], to="hot", key="timetable")
        await call(client, "forget", id=cold[2])
        resource = await client.read_resource("memory://profile")
        assert "city: Oslo" in str(resource)
        assert await client.list_tools()
        await call(client, "profile")

    loop.set_debug(False)
    slow = [r.getMessage() for r in caplog.records if r.name == "asyncio" and " took " in r.getMessage()]
    assert slow == []
