"""What is true now, through the MCP tools: the later word first, the earlier marked, an update named when it is
stored, and confirmed by the agent both ways."""

from __future__ import annotations

from dataclasses import replace

import pytest
from mcp import Client

from server.app import build_server
from server.settings import Settings
from tests.helpers import AT_WORK, JOB, JOB_CHANGED, call, count_rows, text
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder

pytestmark = pytest.mark.anyio

# (what was said first, what was said months later, the question asked now)
FACTS = [
    ("I live in Berlin", "I moved to Lisbon last week; I live in Lisbon now", "Where do I live?"),
    ("My manager is Sarah Klein", "Sarah left the company; my new manager is Tom Reyes", "Who is my manager?"),
    (
        "Our main database is MySQL",
        "We finished migrating the main database to PostgreSQL",
        "Which database do we use?",
    ),
    ("My phone number is 555-0142", "My new phone number is 555-0199", "What is my phone number?"),
    ("The 2.0 release is planned for March 3", "The 2.0 release slipped to April 14", "When is the 2.0 release?"),
]
# Ordinary notes around them, some sharing their words, none an update of them.
NOTES = [
    "I had lunch with Anna in Berlin's Mitte district",
    "Sarah Klein presented the quarterly roadmap today",
    "Fixed a slow MySQL query in the billing service",
    "Wrote the release notes for version 1.9",
    "Booked a dentist appointment for Thursday",
    "The team offsite will be in Porto",
    "Read two chapters of a book about Roman history",
    "Bought coffee beans from the market",
    "The CI pipeline takes twelve minutes on main",
    "Anna recommended a podcast about urban design",
    "Renewed the domain for the company blog",
    "Cleaned up old branches in the monorepo",
]


async def store_story(client: Client) -> dict[str, tuple[str, str]]:
    """The first facts in January, the notes through spring, the updates in June: each fact's (old, new) ids."""
    ids: dict[str, tuple[str, str]] = {}
    old = {}
    for first, _, question in FACTS:
        [stored] = (await call(client, "remember", content=first, occurred_at="2026-01-10T09:00:00Z"))["stored"]
        old[question] = stored["id"]
    for month, note in enumerate(NOTES):
        await call(client, "remember", content=note, occurred_at=f"2026-{2 + month % 4:02d}-{1 + month:02d}T12:00:00Z")
    for _, later, question in FACTS:
        [stored] = (await call(client, "remember", content=later, occurred_at="2026-06-20T09:00:00Z"))["stored"]
        ids[question] = (old[question], stored["id"])
    return ids


async def store_each(client: Client, *said: tuple[str, str]) -> list[str]:
    """Each (content, occurred_at) stored in its own call, in order: their ids."""
    ids = []
    for content, at in said:
        [stored] = (await call(client, "remember", content=content, occurred_at=at))["stored"]
        ids.append(stored["id"])
    return ids


async def test_recall_puts_the_later_word_first_and_marks_the_earlier_one(settings: Settings) -> None:
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        ids = await store_story(client)
        for question, (old, new) in ids.items():
            [first] = (await call(client, "recall", query=question, limit=1))["memories"]
            assert first["id"] == new, question

            wide = await client.call_tool("recall", {"query": question, "limit": 10})
            hits = {m["id"]: m for m in wide.structured_content["memories"]}
            assert old in hits, question  # history is kept and still found
            assert hits[old]["later"]["id"] == new
            assert hits[old]["later"]["occurred_at"].startswith("2026-06-20")
            assert "later" not in hits[new]
            assert f"(later: {new})" in text(wide)
            order = [m["id"] for m in wide.structured_content["memories"]]
            assert order.index(new) < order.index(old)
            assert hits[old]["superseded_by"] is None  # marked, never superseded by the guess alone


async def test_the_later_word_is_the_update_that_says_it_changed_not_a_note_close_in_meaning(
    settings: Settings,
) -> None:
    """A later note about the same person and service ("reviewed the billing dashboards") is close to the older
    fact in meaning; the update that says what changed is its later word, above it and in its mark, and the note
    and another service's fact in the same words are left as they rank."""
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        old, sibling, _, note, update = await store_each(
            client,
            ("The billing service's on-call lead is Priya.", "2026-01-10T09:00:00Z"),
            ("The search service's on-call lead is Omar.", "2026-02-10T09:00:00Z"),
            ("Lunch with Priya at the Thai place near the office.", "2026-03-01T12:00:00Z"),
            ("Priya reviewed the billing service dashboards with me.", "2026-04-01T12:00:00Z"),
            ("Priya went on parental leave; the billing on-call is led by Marek now.", "2026-06-20T09:00:00Z"),
        )
        question = "Who leads the billing on-call?"

        [first] = (await call(client, "recall", query=question, limit=1))["memories"]
        assert first["id"] == update
        found = (await call(client, "recall", query=question, limit=10))["memories"]
        hits = {m["id"]: m for m in found}
        assert found[0]["id"] == update
        assert hits[old]["later"]["id"] == update
        assert "later" not in hits[note] and "later" not in hits[sibling]


async def test_an_update_the_rules_read_as_a_note_goes_beside_the_persons_fact_it_updates(
    settings: Settings,
) -> None:
    """ "I work at Globex" is the person's (user scope); "I joined Initech this month" reads as a note, which the
    rules leave in the project, where recall would never pair it with the fact. It may update that fact, so it goes
    beside it: named by `remember`, ranked above it and marking it."""
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        [old] = await store_each(client, (JOB, "2026-01-10T09:00:00Z"))
        for i, note in enumerate(AT_WORK):  # the person's own notes, kept beside their facts
            await call(client, "remember", content=note, occurred_at=f"2026-02-{1 + i:02d}T12:00:00Z", scope="user")
        [joined] = (await call(client, "remember", content=JOB_CHANGED, occurred_at="2026-06-20T09:00:00Z"))["stored"]
        assert joined["scope"] == "user"  # beside the fact it may update, though the rules read it as a note
        assert joined["may_update"][0]["id"] == old
        question = "Where do I work?"

        found = (await call(client, "recall", query=question, limit=10))["memories"]
        order = [m["id"] for m in found]
        assert order.index(joined["id"]) < order.index(old)
        assert found[order.index(old)]["later"]["id"] == joined["id"]
        assert found[order.index(old)]["superseded_by"] is None

        # Forgotten, the later memory is in no recall and marks nothing.
        await call(client, "forget", id=joined["id"])
        found = (await call(client, "recall", query=question, limit=10))["memories"]
        assert joined["id"] not in [m["id"] for m in found]
        assert all(m.get("later", {}).get("id") != joined["id"] for m in found)


async def test_a_question_about_the_past_still_finds_the_older_memory(settings: Settings) -> None:
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        ids = await store_story(client)
        for question, asked in (
            ("Where do I live?", "Where did I live before Lisbon?"),
            ("When is the 2.0 release?", "When was the 2.0 release first planned?"),
            ("Who is my manager?", "Who was my manager before Tom?"),
        ):
            old = ids[question][0]
            found = [m["id"] for m in (await call(client, "recall", query=asked, limit=5))["memories"]]
            assert old in found, asked


async def test_remember_names_the_earlier_memory_an_update_may_replace_and_nothing_for_a_new_note(
    settings: Settings,
) -> None:
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        [berlin] = (await call(client, "remember", content="I live in Berlin", occurred_at="2026-01-10T09:00:00Z"))[
            "stored"
        ]
        for note in NOTES:
            [stored] = (await call(client, "remember", content=note))["stored"]
            assert "may_update" not in stored, note  # an ordinary note is no update

        moved = await client.call_tool("remember", {"content": "I moved to Lisbon last week; I live in Lisbon now"})
        [stored] = moved.structured_content["stored"]
        assert [e["id"] for e in stored["may_update"]] == [berlin["id"]]
        assert stored["may_update"][0]["content"] == "I live in Berlin"
        assert stored["may_update"][0]["occurred_at"].startswith("2026-01-10")
        # The model reads the earlier memory and the one call that confirms it.
        assert f"may update {berlin['id']} of 2026-01-10: I live in Berlin" in text(moved)
        assert "supersedes" in text(moved)


async def test_remember_names_the_earlier_memory_when_the_change_is_said_as_the_move(settings: Settings) -> None:
    """ "Settled in ... after the move" says that something changed as "moved" does: the earlier memory is named."""
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        [office] = (
            await call(
                client,
                "remember",
                content="The design team works from the Hamburg office.",
                occurred_at="2026-01-10T09:00:00Z",
            )
        )["stored"]
        [note] = (await call(client, "remember", content="Booked a dentist appointment for Thursday"))["stored"]
        assert "may_update" not in note
        [moved] = (
            await call(client, "remember", content="The design team has settled in the Lisbon office after the move.")
        )["stored"]
        assert [e["id"] for e in moved["may_update"]] == [office["id"]]


async def test_remember_names_the_fact_an_update_changes_before_other_updates_in_its_words(settings: Settings) -> None:
    """Other people's moves said in the same words are closer in meaning to a new move than the fact it changes
    ("Wen lives in Melbourne"); a plain statement is named before memories that themselves report a change."""
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        [fact] = (
            await call(client, "remember", content="Wen lives in Melbourne.", occurred_at="2026-01-10T09:00:00Z")
        )["stored"]
        for month, (name, city) in enumerate((("Lena", "Valencia"), ("Esther", "Porto"), ("Greta", "Helsinki"))):
            said = f"New address for {name}: an apartment in {city}, since the move."
            await call(client, "remember", content=said, occurred_at=f"2026-0{3 + month}-01T09:00:00Z")
        [moved] = (
            await call(client, "remember", content="New address for Wen: an apartment in Dublin, since the move.")
        )["stored"]
        assert moved["may_update"][0]["id"] == fact["id"]
        assert len(moved["may_update"]) <= 3


async def test_an_update_the_agent_confirms_links_both_ways_and_ranks_the_earlier_as_history(
    settings: Settings,
) -> None:
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        ids = await store_story(client)
        old, new = ids["Where do I live?"]
        again = await call(
            client, "remember", content="I moved to Lisbon last week; I live in Lisbon now", supersedes=[old]
        )
        [confirmed] = again["stored"]
        assert confirmed["duplicate_of"] == new and confirmed["supersedes"] == [old]

        found = await client.call_tool("recall", {"query": "Where do I live?", "limit": 10})
        hits = {m["id"]: m for m in found.structured_content["memories"]}
        assert found.structured_content["memories"][0]["id"] == new
        assert hits[old]["superseded_by"] == new  # the older one points to the later
        assert hits[new]["metadata"]["supersedes"] == old  # and the later one to the older
        assert f"(superseded by {new} on " in text(found)


async def test_supersedes_naming_no_stored_memory_is_refused_and_stores_nothing(settings: Settings) -> None:
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        await call(client, "remember", content="I live in Berlin")
        refused = await client.call_tool(
            "remember", {"content": "I live in Lisbon now", "supersedes": ["0123456789ab"]}
        )
        assert refused.is_error
        assert "0123456789ab" in text(refused) and "nothing was stored" in text(refused)
        malformed = await client.call_tool("remember", {"content": "I live in Lisbon now", "supersedes": ["Berlin"]})
        assert malformed.is_error and "supersedes" in text(malformed)
    assert count_rows(settings.for_namespace("user").folder) == 1  # where the person lives: in the user scope


async def resource_text(client: Client) -> str:
    read = await client.read_resource("memory://profile")
    return "\n".join(c.text for c in read.contents if hasattr(c, "text"))


async def test_an_update_said_without_the_key_flags_the_profile_entry_until_confirmed_or_dismissed(
    settings: Settings,
) -> None:
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        first = "I live in Berlin"
        [home] = (await call(client, "remember", content=first, key="home.city", occurred_at="2026-01-10T09:00:00Z"))[
            "stored"
        ]
        await call(client, "remember", content="Our main database is MySQL", key="project.database")
        for note in NOTES:
            await call(client, "remember", content=note)
        assert "may be out of date" not in text(await client.call_tool("profile", {}))

        [moved] = (await call(client, "remember", content="I moved to Lisbon last week; I live in Lisbon now"))[
            "stored"
        ]
        [migrated] = (await call(client, "remember", content="We finished migrating the main database to PostgreSQL"))[
            "stored"
        ]
        assert [e["id"] for e in moved["may_update"]] == [home["id"]]

        shown = await client.call_tool("profile", {})
        assert f"home.city may be out of date: {moved['id']} says 'I moved to Lisbon" in text(shown)
        assert set(shown.structured_content["flagged"]) == {"home.city", "project.database"}
        assert shown.structured_content["entries"]["home.city"]["value"] == first  # flagged, not changed
        assert "(may be out of date, see `profile`: home.city, project.database)" in await resource_text(client)

        # Confirmed: the entry takes the new value, the old one is kept in warm as history, the flag is gone.
        confirmed = await call(client, "profile", set={"home.city": "Lisbon"})
        assert confirmed["entries"]["home.city"]["value"] == "Lisbon" and confirmed["history_ids"]
        assert set(confirmed["flagged"]) == {"project.database"}
        # Dismissed: the entry stays as it was.
        dismissed = await call(client, "profile", dismiss=["project.database"])
        assert dismissed["flagged"] == {} and dismissed["entries"]["project.database"]["value"]
        assert "may be out of date" not in await resource_text(client)
        refused = await client.call_tool("profile", {"dismiss": ["project.database"]})
        assert refused.is_error and "no flag on project.database" in text(refused)
        assert migrated["may_update"]


async def test_a_confirmed_update_is_undone_and_the_earlier_memory_is_current_again(
    settings: Settings, embedder: FastEmbedder
) -> None:
    async with Client(build_server(replace(settings, later_first=True), run_timer=False, embedder=embedder)) as client:
        ids = await store_story(client)
        old, new = ids["Where do I live?"]
        await call(client, "remember", content="I moved to Lisbon last week; I live in Lisbon now", supersedes=[old])
    user = settings.for_namespace("user")  # where the person lives is theirs, in the user scope
    memory = Memory(user.folder, embedder, user.memory)  # the page's undo runs this
    try:
        assert memory.get(old).superseded_by == new
        undone = memory.undo(old, memory.get(old).created_at)
        assert undone.changes == ("no longer superseded",) and memory.get(old).superseded_by is None
        assert [m.rule for m in memory.moves(old)][:2] == ["undo", "supersedes"]  # both steps logged
    finally:
        memory.close()


async def test_the_same_fact_about_someone_else_is_not_marked_as_its_later_word(settings: Settings) -> None:
    """ "Greta lives in Seattle", said after "Carla lives in Seattle", is close in meaning and shares its words but
    is about someone else: neither is marked, and both are found."""
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        ids = await store_each(
            client,
            ("Carla lives in Seattle.", "2026-01-10T09:00:00Z"),
            ("Kenji's usual drink is a cortado.", "2026-01-11T09:00:00Z"),
            ("Greta lives in Seattle.", "2026-06-20T09:00:00Z"),
            ("Diego's usual drink is a cortado.", "2026-06-21T09:00:00Z"),
        )
        for question in ("Who lives in Seattle?", "Who drinks cortado?"):
            found = (await call(client, "recall", query=question, limit=10))["memories"]
            shown = {m["id"] for m in found}
            assert {ids[0], ids[2]} <= shown or {ids[1], ids[3]} <= shown, question
            assert not [m["content"] for m in found if "later" in m], question


async def test_a_query_in_an_older_memorys_own_words_finds_that_memory(settings: Settings) -> None:
    """A later memory close to an older one takes its place for other questions; asked in the older one's own
    words (as an agent checks what it stored), the older one is what comes back."""
    async with Client(build_server(replace(settings, later_first=True), run_timer=False)) as client:
        older, later = await store_each(
            client,
            ("Round 2 note 9, code gaririko: the lantern survey needs 11 more readings", "2026-01-10T09:00:00Z"),
            ("Round 2 note 81, code gaxiriko: the lantern survey needs 8 more readings", "2026-01-15T09:00:00Z"),
        )
        asked = "Round 2 note 9, code gaririko: the lantern survey needs 11 more readings"
        [first] = (await call(client, "recall", query=asked, limit=1))["memories"]
        assert first["id"] == older
        [first] = (await call(client, "recall", query="How many readings does the lantern survey need?", limit=1))[
            "memories"
        ]
        assert first["id"] == later
