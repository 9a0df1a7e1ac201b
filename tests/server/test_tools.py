"""Every tool through a real in-memory MCP client, on real LanceDB and the real model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta

import anyio
import pytest
from mcp import Client

from server.app import build_server
from server.settings import HttpToken, Settings
from tests.helpers import T0, Clock, call, count_rows, text
from tests.server.http_running import http_client, running_http
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import Kind, MemoryIn

pytestmark = pytest.mark.anyio


TOKEN = "tools-suite-token-0123456789"


@pytest.fixture(params=["in-memory", "http"])
async def client(request: pytest.FixtureRequest, settings: Settings, embedder: FastEmbedder) -> AsyncIterator[Client]:
    """The suite runs twice: in memory, and once over the streamable HTTP transport with a bearer token."""
    if request.param == "in-memory":
        async with Client(build_server(settings, run_timer=False)) as connected:
            yield connected
        return
    over_http = replace(settings, http_tokens=(HttpToken(TOKEN),))
    with running_http(over_http, embedder) as url:
        async with http_client(f"{url}/mcp", TOKEN) as connected:
            yield connected


def seed_cold(settings: Settings, embedder: FastEmbedder, content: str) -> str:
    """Store `content` long ago and let the sweep take it to cold, before the server opens the folder."""
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        [stored] = memory.remember([MemoryIn(content=content, kind=Kind.NOTE)], T0)
        memory.sweep(T0 + timedelta(days=120))
        assert memory.get(stored.id).tier.value == "cold"
        return stored.id
    finally:
        memory.close()


# remember


async def test_remember_stores_a_warm_memory_that_recall_then_finds(client: Client, settings: Settings) -> None:
    stored = await call(client, "remember", content="The staging database runs on port 5433", tags=["infra"])

    [item] = stored["stored"]
    assert item["tier"] == "warm"
    assert len(item["id"]) == 12
    found = await call(client, "recall", query="which port does staging use?")
    assert [m["id"] for m in found["memories"]] == [item["id"]]
    assert count_rows(settings.folder) == 1


async def test_remember_of_the_same_text_returns_duplicate_of_and_adds_no_row(
    client: Client, settings: Settings
) -> None:
    first = await call(client, "remember", content="We deploy on Tuesdays")
    again = await client.call_tool("remember", {"content": "  we DEPLOY on   tuesdays "})

    [item] = first["stored"]
    assert again.structured_content is not None
    assert again.structured_content["stored"][0]["duplicate_of"] == item["id"]
    assert "duplicate" in text(again)
    assert count_rows(settings.folder) == 1


async def test_remember_keeps_tags_metadata_source_and_occurred_at_for_recall(client: Client) -> None:
    await call(
        client,
        "remember",
        content="The quarterly budget review moved to Thursday",
        tags=["work", "meetings"],
        metadata={"ticket": "OPS-12", "priority": 2, "urgent": False},
        source="slack://general/123",
        occurred_at="2026-03-02T10:30:00Z",
        kind="event",
    )

    found = await call(client, "recall", query="budget review")
    [memory] = found["memories"]
    assert memory["tags"] == ["work", "meetings"]
    assert memory["metadata"] == {"ticket": "OPS-12", "priority": 2, "urgent": False}
    assert memory["source"] == "slack://general/123"
    assert memory["occurred_at"] == "2026-03-02T10:30:00Z"


async def test_remember_with_a_kind_marks_durable_kinds_protected(client: Client) -> None:
    durable = await call(client, "remember", content="Lunch order: the usual", kind="preference")
    passing = await call(client, "remember", content="Buy milk on the way home", kind="task")

    assert durable["stored"][0] == {
        "id": durable["stored"][0]["id"],
        "tier": "warm",
        "kind": "preference",
        "protected": True,
        "scope": "project",  # a preference said of no one: this project's
    }
    assert passing["stored"][0]["kind"] == "task"
    assert passing["stored"][0]["protected"] is False


async def test_remember_with_a_key_also_puts_the_fact_in_the_profile(client: Client) -> None:
    stored = await call(client, "remember", content="vegetarian", key="diet")

    [item] = stored["stored"]
    assert item["tier"] == "hot"
    assert item["profile_key"] == "diet"
    profile = await call(client, "profile")
    assert profile["entries"]["diet"]["value"] == "vegetarian"
    assert profile["entries"]["diet"]["sources"] == [item["id"]]


async def test_remember_with_forget_after_in_the_past_goes_cold_at_the_next_sweep(
    settings: Settings, embedder: FastEmbedder
) -> None:
    clock = Clock()
    async with Client(build_server(settings, clock=clock, run_timer=False)) as client:
        stored = await call(client, "remember", content="The door code this week is 4711", forget_after="P7D")
    rid = stored["stored"][0]["id"]
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        assert memory.sweep(clock.advance(days=6)).moves == ()
        [move] = memory.sweep(clock.advance(days=2)).moves
    finally:
        memory.close()
    assert (move.rid, move.dst.value, move.rule) == (rid, "cold", "forget_after")


async def test_remember_a_batch_stores_each_memory_with_its_own_fields(client: Client, settings: Settings) -> None:
    batch = [
        {"content": "Ana leads the payments team", "tags": ["people"]},
        {"content": "The payments service is written in Go", "metadata": {"repo": "payments"}},
        {"content": "Release 4.2 shipped on a Friday", "occurred_at": "2026-02-13", "kind": "event"},
        {"content": "Remind Ana about the offsite", "forget_after": "P30D", "source": "email:42"},
        {"content": "Europe/Lisbon", "key": "timezone"},
    ]
    stored = await call(client, "remember", memories=batch)

    items = stored["stored"]
    assert len(items) == 5
    assert len({i["id"] for i in items}) == 5
    assert [i["tier"] for i in items] == ["warm", "warm", "warm", "warm", "hot"]
    assert [i["scope"] for i in items] == ["project", "project", "project", "project", "user"]  # the person's timezone
    assert items[2]["kind"] == "event"
    assert count_rows(settings.folder) == 4
    assert count_rows(settings.for_namespace("user").folder) == 1
    found = await call(client, "recall", query="payments service language", tags=["people"])
    assert [m["content"] for m in found["memories"]] == ["Ana leads the payments team"]


async def test_remember_a_batch_with_a_repeat_inside_adds_one_row(client: Client, settings: Settings) -> None:
    stored = await call(client, "remember", memories=[{"content": "Same thing"}, {"content": "same   thing"}])

    first, second = stored["stored"]
    assert second["duplicate_of"] == first["id"]
    assert count_rows(settings.folder) == 1


# recall


async def test_recall_with_max_tokens_keeps_all_its_text_within_the_budget(client: Client) -> None:
    notes = [f"Meeting note {i}: the team discussed the migration of service {i} to the new cluster" for i in range(30)]
    await call(client, "remember", memories=[{"content": n, "tags": ["migration"]} for n in notes])
    await call(client, "profile", set={"project": "cluster migration"})

    for budget in (32, 60, 200):
        result = await client.call_tool("recall", {"query": "cluster migration", "max_tokens": budget})
        assert not result.is_error
        assert len(text(result)) <= budget * 4, budget
        assert result.structured_content is not None
        assert result.structured_content["left_out"] > 0
        assert f"left out by the {budget}-token budget" in text(result)


async def test_recall_text_fits_every_budget_from_the_smallest_up(client: Client) -> None:
    phrase = "the garden shed holds tools seeds pots gloves and a very old wheelbarrow"
    notes = [f"Garden note {i}: {phrase[: 10 + 5 * i]}" for i in range(24)]
    await call(client, "remember", memories=[{"content": n} for n in notes])
    await call(client, "profile", set={"garden": "allotment 14"})

    for budget in range(32, 80):
        result = await client.call_tool("recall", {"query": "garden shed", "max_tokens": budget})
        assert not result.is_error
        assert len(text(result)) <= budget * 4, (budget, text(result))


async def test_recall_without_a_budget_returns_at_most_limit_memories(client: Client) -> None:
    await call(client, "remember", memories=[{"content": f"Fact number {i} about the garden"} for i in range(8)])

    found = await call(client, "recall", query="garden", limit=3)

    assert len(found["memories"]) == 3


async def test_recall_with_tags_returns_only_memories_with_any_of_them(client: Client) -> None:
    await call(
        client,
        "remember",
        memories=[
            {"content": "The kitchen tap drips", "tags": ["home"]},
            {"content": "The office printer jams", "tags": ["work"]},
            {"content": "The car needs new tyres", "tags": ["car", "home"]},
        ],
    )

    found = await call(client, "recall", query="things that need fixing", tags=["home"])

    assert sorted(m["content"] for m in found["memories"]) == ["The car needs new tyres", "The kitchen tap drips"]


async def test_recall_with_since_and_until_returns_only_memories_inside_the_window(client: Client) -> None:
    await call(
        client,
        "remember",
        memories=[
            {"content": "Trip to Porto", "occurred_at": "2025-05-01"},
            {"content": "Trip to Berlin", "occurred_at": "2026-03-10"},
            {"content": "Trip to Oslo", "occurred_at": "2026-09-20"},
        ],
    )

    found = await call(client, "recall", query="trip", since="2026-01-01", until="2026-06-30T23:59:59Z")
    after = await call(client, "recall", query="trip", since="2026-01-01")

    assert [m["content"] for m in found["memories"]] == ["Trip to Berlin"]
    assert sorted(m["content"] for m in after["memories"]) == ["Trip to Berlin", "Trip to Oslo"]


async def test_recall_of_cold_tier_only_finds_a_cold_memory_and_warm_only_does_not(
    settings: Settings, embedder: FastEmbedder
) -> None:
    rid = seed_cold(settings, embedder, "The old VPN gateway was vpn1.example.org")
    async with Client(build_server(settings, run_timer=False)) as client:
        await call(client, "remember", content="The new VPN gateway is vpn2.example.org")
        cold = await call(client, "recall", query="VPN gateway", tiers=["cold"])
        warm = await call(client, "recall", query="VPN gateway", tiers=["warm"])

    assert [(m["id"], m["tier"]) for m in cold["memories"]] == [(rid, "cold")]
    assert rid not in [m["id"] for m in warm["memories"]]
    assert [m["tier"] for m in warm["memories"]] == ["warm"]


async def test_recall_lists_matching_profile_entries_when_hot_is_searched(client: Client) -> None:
    await call(client, "profile", set={"editor": "neovim with the lazy plugin manager"})

    found = await call(client, "recall", query="which editor do I use?", tiers=["hot"])

    assert found["profile"] == {"editor": "neovim with the lazy plugin manager"}
    assert found["memories"] == []


# profile


async def test_profile_with_no_arguments_reads_an_empty_profile(client: Client) -> None:
    result = await client.call_tool("profile", {})

    assert not result.is_error
    assert "(the profile is empty)" in text(result)
    assert result.structured_content is not None
    assert result.structured_content["entries"] == {}


async def test_profile_set_then_change_keeps_the_old_value_in_warm_as_superseded_history(client: Client) -> None:
    await call(client, "profile", set={"project": "memtiers"})
    changed = await call(client, "profile", set={"project": "lancebench"})

    assert changed["entries"]["project"]["value"] == "lancebench"
    [history_id] = changed["history_ids"]
    found = await call(client, "recall", query="project memtiers", tiers=["warm"])
    [old] = [m for m in found["memories"] if m["id"] == history_id]
    assert old["content"] == "project: memtiers"
    assert old["superseded_by"] == "profile:project"


async def test_profile_unset_removes_the_entry_and_keeps_it_in_warm(client: Client) -> None:
    await call(client, "profile", set={"city": "Lisbon", "name": "Ana"})
    after = await call(client, "profile", unset=["city"])

    assert list(after["entries"]) == ["name"]
    assert len(after["history_ids"]) == 1
    found = await call(client, "recall", query="city Lisbon", tiers=["warm"])
    assert "city: Lisbon" in [m["content"] for m in found["memories"]]


async def test_profile_pin_and_unpin_mark_the_entry(client: Client) -> None:
    await call(client, "profile", set={"name": "Ana"})
    pinned = await call(client, "profile", pin=["name"])
    unpinned = await call(client, "profile", unpin=["name"])

    assert pinned["entries"]["name"]["pinned"] is True
    assert unpinned["entries"]["name"]["pinned"] is False


async def test_profile_text_shows_the_entries_and_the_token_count(client: Client) -> None:
    result = await client.call_tool("profile", {"set": {"name": "Ana", "project": "memtiers"}})

    assert text(result) == (
        "user scope (shared by every project):\nname: Ana\nproject scope (namespace default):\nproject: memtiers\n"
        "(8/1000 tokens)"  # each profile's lines at 4 characters a token, rounded up: 9 and 17 characters
    )


# promote


async def test_promote_a_cold_memory_to_warm_then_again_says_it_is_already_warm(
    settings: Settings, embedder: FastEmbedder
) -> None:
    rid = seed_cold(settings, embedder, "The 2019 offsite was in Sintra")
    async with Client(build_server(settings, run_timer=False)) as client:
        first = await call(client, "promote", id=rid, to="warm")
        again = await client.call_tool("promote", {"id": rid, "to": "warm"})
        found = await call(client, "recall", query="offsite Sintra", tiers=["warm"])

    assert (first["outcome"], first["tier"]) == ("promoted", "warm")
    assert not again.is_error
    assert again.structured_content is not None
    assert again.structured_content["outcome"] == "already_warm"
    assert "already" in text(again)
    assert [(m["id"], m["tier"]) for m in found["memories"]] == [(rid, "warm")]
    assert count_rows(settings.folder, "cold") == 0


async def test_promote_a_warm_memory_to_hot_makes_a_profile_entry_then_says_already_hot(client: Client) -> None:
    stored = await call(client, "remember", content="Prefers dark roast coffee")
    rid = stored["stored"][0]["id"]

    first = await call(client, "promote", id=rid, key="coffee")
    again = await call(client, "promote", id=rid, key="coffee")
    profile = await call(client, "profile")

    assert (first["outcome"], first["key"]) == ("promoted", "coffee")
    assert again["outcome"] == "already_hot"
    assert profile["entries"]["coffee"]["value"] == "Prefers dark roast coffee"
    assert profile["entries"]["coffee"]["sources"] == [rid]


async def test_promote_to_hot_without_a_key_asks_for_one(client: Client) -> None:
    stored = await call(client, "remember", content="Uses a standing desk")

    result = await client.call_tool("promote", {"id": stored["stored"][0]["id"]})

    assert result.is_error
    assert "needs a profile key" in text(result)
    assert (await call(client, "profile"))["entries"] == {}


# forget


async def test_forget_removes_the_memory_from_search_and_the_table(client: Client, settings: Settings) -> None:
    stored = await call(client, "remember", content="My old phone number was 555-0101")
    rid = stored["stored"][0]["id"]

    done = await call(client, "forget", id=rid)
    found = await call(client, "recall", query="old phone number", tiers=["warm", "cold"])

    assert (done["id"], done["tier"], done["orphaned_profile_keys"]) == (rid, "warm", [])
    assert rid not in [m["id"] for m in found["memories"]]
    assert count_rows(settings.folder) == 0


async def test_forget_names_the_profile_entries_it_alone_sourced(client: Client) -> None:
    stored = await call(client, "remember", content="Allergic to shellfish", key="allergy")
    rid = stored["stored"][0]["id"]

    result = await client.call_tool("forget", {"id": rid})
    profile = await call(client, "profile")

    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["orphaned_profile_keys"] == ["allergy"]
    assert "allergy" in text(result)
    assert profile["entries"]["allergy"]["sources"] == []


# concurrency


async def test_concurrent_calls_on_one_server_lose_nothing_and_store_a_repeat_once(
    client: Client, settings: Settings
) -> None:
    stored: list[tuple[str, str]] = []

    async def remember(content: str) -> None:
        stored.append((content, (await call(client, "remember", content=content))["stored"][0]["id"]))

    async def set_profile(key: str, value: str) -> None:
        await call(client, "profile", set={key: value})

    async with anyio.create_task_group() as group:
        for i in range(6):
            group.start_soon(remember, "The same thing, said six times at once")
            group.start_soon(remember, f"A distinct memory number {i}")
            group.start_soon(set_profile, f"key{i}", f"value {i}")

    assert count_rows(settings.folder) == 7
    assert len({rid for content, rid in stored if content.startswith("The same")}) == 1
    assert sorted((await call(client, "profile"))["entries"]) == [f"key{i}" for i in range(6)]


# the public contract


async def test_every_tool_keeps_its_parameter_names(client: Client) -> None:
    listed = await client.list_tools()

    parameters = {tool.name: list(tool.input_schema["properties"]) for tool in listed.tools}
    assert parameters == {
        "remember": [
            "content", "tags", "metadata", "source", "occurred_at", "forget_after", "kind", "key", "supersedes",
            "memories", "scope",
        ],
        "recall": ["query", "limit", "max_tokens", "tiers", "tags", "since", "until", "thorough"],
        "profile": ["set", "unset", "pin", "unpin", "dismiss", "scope"],  # dismiss: for updates; scope: issue 35
        "promote": ["id", "to", "key"],
        "forget": ["id"],
    }  # fmt: skip
    required = {tool.name: sorted(tool.input_schema.get("required", [])) for tool in listed.tools}
    assert required == {"remember": [], "recall": ["query"], "profile": [], "promote": ["id"], "forget": ["id"]}


async def test_every_tool_has_a_description_that_says_when_to_use_it(client: Client) -> None:
    listed = await client.list_tools()

    for tool in listed.tools:
        assert tool.description is not None and len(tool.description) > 100, tool.name
        assert "Use" in tool.description or "use" in tool.description, tool.name


async def test_recall_shows_a_long_memory_over_the_budget_by_the_excerpt_that_answers(client: Client) -> None:
    filler = "The garden committee went over the planting plan, the watering rota and the broken shed lock. " * 20
    last = "Finally: the office alarm code changes to 4417 on Monday."
    stored = await call(client, "remember", content=f"{filler}{last}")
    [item] = stored["stored"]

    found = await client.call_tool("recall", {"query": "new office alarm code", "max_tokens": 200})

    assert not found.is_error and found.structured_content is not None
    [memory] = found.structured_content["memories"]
    assert memory["id"] == item["id"] and last in memory["content"] and last in text(found)
    assert memory["excerpt"]["last_word"] == memory["excerpt"]["words"] == len(f"{filler}{last}".split())
    assert "(excerpt: words" in text(found) and found.structured_content["tokens"] <= 200


# recall, reranked (MEMTIERS_RERANK, or `thorough` on one call)


async def test_recall_told_to_rerank_finds_what_words_miss_and_says_how_to_get_the_model(
    settings: Settings, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from tests.tiers.model.test_rerank import ANSWER, AROUND, QUESTION
    from tiers.model import rerank

    real = importlib.util.find_spec

    def without_package(name: str) -> object:
        return None if name == rerank.PACKAGE else real(name)

    for reranking, asked in ((replace(settings, rerank=20), {}), (replace(settings, rerank=0), {"thorough": True})):
        async with Client(build_server(reranking, run_timer=False, embedder=embedder)) as client:
            for day, line in enumerate([*AROUND[:8], ANSWER, AROUND[8]]):
                await call(client, "remember", content=line, occurred_at=f"2024-01-{day + 1:02d}T12:00:00Z")
            found = await client.call_tool("recall", {"query": QUESTION, "limit": 3, **asked})
            assert not found.is_error
            assert ANSWER in text(found)
            if asked:  # the same server, not asked to be thorough, misses it
                assert ANSWER not in text(await client.call_tool("recall", {"query": QUESTION, "limit": 3}))

            monkeypatch.setattr(rerank, "_SHARED", None)
            monkeypatch.setattr(importlib.util, "find_spec", without_package)
            missing = await client.call_tool("recall", {"query": QUESTION, "limit": 3, **asked})
            assert missing.is_error
            assert "recall without `thorough`" in text(missing) and "pip install 'memtiers[rerank]'" in text(missing)
            monkeypatch.undo()
