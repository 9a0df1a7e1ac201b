"""The sweep timer the lifespan owns: it runs on its own, demotes stale records, and recall still finds them."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from pathlib import Path

import anyio
import pytest
from mcp import Client

from server.app import build_server
from server.settings import Settings
from tests.helpers import Clock, count_rows, text

pytestmark = pytest.mark.anyio


async def wait_until(condition: object, timeout: float = 20) -> None:
    """Poll a cheap condition in short steps until it holds; fail after `timeout` seconds."""
    assert callable(condition)
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.01)


def _logged_moves(ledger: Path, rid: str) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(ledger)) as db:
        return db.execute("SELECT src, dst FROM moves WHERE rid = ? ORDER BY at", (rid,)).fetchall()


async def test_the_timer_demotes_a_stale_record_and_recall_still_finds_it_in_cold(tmp_path: Path) -> None:
    clock = Clock()
    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home"), "MEMTIERS_SWEEP_INTERVAL": "0.05"})
    async with Client(build_server(settings, clock=clock)) as client:
        stored = await client.call_tool("remember", {"content": "The hackathon team name was Blue Otters"})
        durable = await client.call_tool("remember", {"content": "I am allergic to penicillin"})
        assert stored.structured_content is not None and durable.structured_content is not None
        rid = stored.structured_content["stored"][0]["id"]
        protected = durable.structured_content["stored"][0]["id"]

        clock.advance(days=60)  # past the ~46 days an unused note stays warm
        # The move copies to cold, deletes from warm, then logs itself: until then recall may find it in warm.
        await wait_until(lambda: ("warm", "cold") in _logged_moves(settings.folder / "ledger.sqlite", rid))
        assert count_rows(settings.folder, "cold") == 1 and count_rows(settings.folder, "warm") == 0
        assert count_rows(settings.for_namespace("user").folder, "warm") == 1  # the allergy: the person's, kept warm

        found = await client.call_tool("recall", {"query": "hackathon team name"})
        warm = await client.call_tool("recall", {"query": "allergies", "tiers": ["warm"]})

    assert found.structured_content is not None and warm.structured_content is not None
    assert [(m["id"], m["tier"]) for m in found.structured_content["memories"]][:1] == [(rid, "cold")]
    assert f"2026-01-05 cold:\n[{rid}] The hackathon team name was Blue Otters" in text(found)
    assert [m["id"] for m in warm.structured_content["memories"]] == [protected]


async def test_the_timer_moves_an_idle_profile_entry_down_and_notifies_listeners(settings: Settings) -> None:
    clock = Clock()
    settings = dataclasses.replace(settings, sweep_interval=0.05)
    async with Client(build_server(settings, clock=clock)) as client:
        await client.call_tool("profile", {"set": {"name": "Ana", "project": "memtiers"}})
        await client.call_tool("profile", {"pin": ["name"]})
        async with client.listen(resource_subscriptions=["memory://profile"]) as subscription:
            clock.advance(days=91)
            with anyio.fail_after(20):
                await subscription.__anext__()
        profile = await client.call_tool("profile", {})
        history = await client.call_tool("recall", {"query": "project memtiers", "tiers": ["warm"]})

    assert profile.structured_content is not None and history.structured_content is not None
    assert list(profile.structured_content["entries"]) == ["name"]
    assert "project: memtiers" in [m["content"] for m in history.structured_content["memories"]]


async def test_a_server_built_without_the_timer_never_sweeps(settings: Settings) -> None:
    clock = Clock()
    async with Client(build_server(settings, clock=clock, run_timer=False)) as client:
        await client.call_tool("remember", {"content": "Parking spot 42 on level 3"})
        clock.advance(days=365)
        found = await client.call_tool("recall", {"query": "parking spot"})

    assert found.structured_content is not None
    assert [m["tier"] for m in found.structured_content["memories"]] == ["warm"]


async def test_a_failed_sweep_is_logged_and_the_timer_keeps_going(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    settings = dataclasses.replace(settings, sweep_interval=0.05)
    profile = settings.folder / "profile.json"
    async with Client(build_server(settings, clock=clock)) as client:
        await client.call_tool("remember", {"content": "The bike lock code is 0451"})
        profile.write_text("{broken")
        clock.advance(days=60)
        await wait_until(lambda: any("sweep failed" in r.getMessage() for r in caplog.records))
        assert count_rows(settings.folder, "cold") == 0

        profile.unlink()
        await wait_until(lambda: count_rows(settings.folder, "cold") == 1)

    [failure, *_] = [r for r in caplog.records if "sweep failed" in r.getMessage()]
    assert failure.levelname == "WARNING"
    assert str(profile) in failure.getMessage()


async def test_at_start_the_server_says_which_model_the_store_holds_and_that_reembed_moves_it(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="memtiers")
    async with Client(build_server(settings)) as client:
        await client.call_tool("remember", {"content": "The hackathon team name was Blue Otters"})
        await wait_until(lambda: any("holds memories embedded with" in r.getMessage() for r in caplog.records))

    said = next(r.getMessage() for r in caplog.records if "holds memories embedded with" in r.getMessage())
    assert f"{settings.folder} holds memories embedded with memtiers/all-MiniLM-L6-v2-int8" in said
    assert "`memtiers reembed` moves them" in said
