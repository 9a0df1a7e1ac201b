"""Other memories' files: parsed into memories (pure), then stored through `remember` with the real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import T0
from tiers.errors import InvalidInput
from tiers.memory import Memory
from tiers.records import Kind, Record, Tier
from tiers.transfer import importers
from tiers.transfer.jsonl import import_file
from tiers.transfer.rows import read_rows

SAMPLES = Path(__file__).parent.parent / "samples"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("memory.jsonl", "memory-server"),
        ("mem0.json", "mem0"),
        ("MEMORY.md", "markdown"),
        ("memory-bank", "markdown"),
    ],
)
def test_the_format_of_each_sample_is_detected(name: str, fmt: str) -> None:
    assert importers.detect(SAMPLES / name) == fmt


def test_a_memtiers_header_and_a_bare_mem0_list_are_detected(tmp_path: Path) -> None:
    export = tmp_path / "backup.jsonl"
    export.write_text('{"format": "memtiers", "version": 1}\n{"type": "end"}\n')
    listed = tmp_path / "memories.json"
    listed.write_text(json.dumps([{"id": "1", "memory": "Likes green tea"}]))

    assert importers.detect(export) == "memtiers"
    assert importers.detect(listed) == "mem0"


def test_a_file_of_no_known_format_is_refused_saying_to_give_from(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some words\n")

    with pytest.raises(InvalidInput, match="give --from memtiers, memory-server, mem0 or markdown"):
        importers.detect(path)


def test_memory_server_observations_name_their_entity_and_are_tagged_and_sourced_by_it() -> None:
    items = importers.read(SAMPLES / "memory.jsonl", "memory-server")

    by_content = {item.content: item for item in items}
    assert "The user is allergic to peanuts" in by_content
    assert "The user's name is Priya Raman" in by_content
    marco = by_content["Marco Rossi speaks fluent Italian and Spanish"]
    assert marco.tags == ["Marco_Rossi"] and marco.source == "memory.jsonl#Marco_Rossi"
    assert marco.metadata == {"imported_from": "memory-server", "entity": "Marco_Rossi", "entity_type": "person"}
    works = by_content["The user works at Acme Corp"]
    assert works.tags == ["default_user", "Acme_Corp"] and works.metadata["relation"] == "works_at"
    assert "Marco Rossi maintains Billing Service" in by_content
    assert "Acme Corp is an organization" in by_content
    assert len(items) == 11


def test_a_memory_server_line_that_is_not_an_entity_or_relation_is_refused_with_its_number() -> None:
    text = '{"type":"entity","name":"a","entityType":"x","observations":["b"]}\n{"oops": 1}\n'

    with pytest.raises(InvalidInput, match=r"memory\.jsonl line 2 is not an entity or relation"):
        importers.memory_server(text)


def test_mem0_memories_keep_their_time_ids_metadata_and_categories() -> None:
    items = importers.read(SAMPLES / "mem0.json", "mem0")

    veg, trip, seats = items
    assert veg.content == "The user is a vegetarian"
    assert veg.occurred_at == "2025-03-03T02:20:11Z"
    assert veg.source == "mem0:5a3c1f0e-8b1d-4c39-9a55-2f0d6b7e9c11"
    assert veg.metadata["user_id"] == "priya" and veg.metadata["category"] == "food"
    assert trip.tags == ["travel"] and trip.content == "Planning a trip to Kyoto in April"
    assert seats.metadata["agent_id"] == "travel-agent" and seats.metadata["tags"] == '["travel", "flights"]'


def test_a_mem0_memory_without_text_is_refused_with_its_position() -> None:
    with pytest.raises(InvalidInput, match="mem0 memory #2 has no 'memory' text"):
        importers.mem0(json.dumps([{"memory": "Likes tea"}, {"id": "x"}]))


def test_markdown_gives_one_memory_per_bullet_paragraph_or_code_block_sourced_by_file_and_heading() -> None:
    items = importers.read(SAMPLES / "MEMORY.md", "markdown")

    pairs = [(item.source, item.content) for item in items]
    assert pairs == [
        ("MEMORY.md#Preferences", "Use pnpm, never npm, for this repository"),
        ("MEMORY.md#Preferences", "Prefer small commits with messages that say why"),
        ("MEMORY.md#Preferences", "I prefer tabs over spaces in Go files"),
        ("MEMORY.md#Commands", "Run the tests with `pnpm test -- --run`"),
        ("MEMORY.md#Commands", "Build the docs with `pnpm docs:build`; the output goes to `site/`"),
        (
            "MEMORY.md#Architecture",
            "The API lives in `packages/api` and talks to Postgres through Drizzle. "
            "Migrations are generated, never written by hand.",
        ),
        ("MEMORY.md#Architecture", "```sh\npnpm drizzle-kit generate\n```"),
    ]


def test_a_cline_memory_bank_folder_gives_every_file_with_its_path_as_source() -> None:
    items = importers.read(SAMPLES / "memory-bank", "markdown")

    sources = {item.source for item in items}
    assert sources == {
        "memory-bank/activeContext.md#Current focus",
        "memory-bank/activeContext.md#Next steps",
        "memory-bank/projectbrief.md#Goals",
        "memory-bank/projectbrief.md#Non-goals",
    }
    assert "Review the retry policy with Marco" in {item.content for item in items}


def test_markdown_skips_front_matter_rules_and_comments_and_reads_setext_headings() -> None:
    text = "---\nname: notes\n---\nSetup\n=====\n<!-- private -->\nInstall with uv.\n\n***\n- [x] Pinned the SDK\n"

    items = importers.markdown(text, "CLAUDE.md")

    assert [(i.source, i.content) for i in items] == [
        ("CLAUDE.md#Setup", "Install with uv."),
        ("CLAUDE.md#Setup", "[x] Pinned the SDK"),
    ]


def test_a_paragraph_longer_than_a_memory_is_cut_into_pieces_that_fit() -> None:
    items = importers.markdown("word " * 3_000, "long.md")

    assert len(items) == 2 and all(len(i.content) <= 8_000 for i in items)


def test_a_memory_server_file_imported_protects_durable_facts_and_fills_the_profile(memory: Memory) -> None:
    report = import_file(memory, SAMPLES / "memory.jsonl", T0)

    assert report.format == "memory-server" and report.added == 11
    allergy = _stored(memory, "The user is allergic to peanuts")
    assert allergy.kind is Kind.HEALTH and allergy.protected
    assert allergy.tags == ("default_user",) and allergy.source == "memory.jsonl#default_user"
    assert _stored(memory, "The user works at Acme Corp").protected
    assert not _stored(memory, "Billing service uses Postgres 16").protected
    assert memory.profile()["name"].value == "Priya Raman"
    assert report.profile_set == 1 and report.protected >= 4


def test_importing_the_same_file_again_stores_nothing_new(memory: Memory) -> None:
    import_file(memory, SAMPLES / "mem0.json", T0)

    again = import_file(memory, SAMPLES / "mem0.json", T0)

    assert (again.added, again.duplicates) == (0, 3)
    assert memory.store.count() == 3


def test_mem0_memories_imported_keep_their_time_and_durable_ones_are_protected(memory: Memory) -> None:
    report = import_file(memory, SAMPLES / "mem0.json", T0, fmt="mem0")

    veg = _stored(memory, "The user is a vegetarian")
    assert report.added == 3
    assert veg.kind is Kind.PREFERENCE and veg.protected and veg.tier is Tier.WARM
    assert veg.occurred_at.isoformat() == "2025-03-03T02:20:11+00:00"
    assert not _stored(memory, "Planning a trip to Kyoto in April").protected


def test_markdown_notes_imported_are_recalled_with_their_file_and_heading(memory: Memory) -> None:
    import_file(memory, SAMPLES / "MEMORY.md", T0)

    hits = memory.recall("which package manager should I use?", T0).hits

    assert hits[0].record.content == "Use pnpm, never npm, for this repository"
    assert hits[0].record.source == "MEMORY.md#Preferences"
    assert _stored(memory, "I prefer tabs over spaces in Go files").protected


def test_an_empty_file_is_refused_rather_than_reported_as_done(memory: Memory, tmp_path: Path) -> None:
    empty = tmp_path / "MEMORY.md"
    empty.write_text("# Memory\n")

    with pytest.raises(InvalidInput, match="found no memories to import in this markdown file"):
        import_file(memory, empty, T0)


def _stored(memory: Memory, content: str) -> Record:
    rows = [r for r in read_rows(memory, vectors=False) if r["content"] == content]
    assert rows, f"{content!r} was not stored"
    return memory.get(rows[0]["id"])
