"""Export and import in the memtiers format: a namespace out and back in, identical, without duplicates."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.helpers import T0, count_rows
from tiers.errors import InvalidInput
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.namespace.profile import Edit
from tiers.records import MemoryIn, Tier
from tiers.transfer.jsonl import VERSION, export, import_file, restore
from tiers.transfer.rows import read_rows


@pytest.fixture
def lived_in(memory: Memory) -> Memory:
    """A namespace with a history: a profile with a pin and a replaced value, uses, a cold record, a forget."""
    name, allergy, printer, beta, _lunch = memory.remember(
        [
            MemoryIn(content="My name is Ana Souza"),
            MemoryIn(content="I am allergic to peanuts", tags=["health"]),
            MemoryIn(content="The printer on floor 2 is out of toner", source="slack:C01/123"),
            MemoryIn(
                content="Decided to ship the beta on Friday",
                metadata={"sprint": 12, "team": "web"},
                occurred_at="2026-01-04T10:00:00Z",
                forget_after="P30D",
            ),
            MemoryIn(content="Lunch with the design team was moved to Thursday"),
        ],
        T0,
    )
    memory.edit_profile(Edit({"project": "memtiers"}, pin=("project",), sources={"project": (beta.id,)}), T0)
    memory.set_profile({"project": "atlas"}, T0 + timedelta(days=1))
    memory.recall("what can't I eat?", T0 + timedelta(days=2))
    memory.sweep(T0 + timedelta(days=60))
    memory.promote(printer.id, T0 + timedelta(days=61), to=Tier.WARM)
    memory.forget(_lunch.id, T0 + timedelta(days=62))
    assert memory.store.count(Tier.COLD) >= 1
    assert {name.id, allergy.id} <= set(memory.store.get([name.id, allergy.id]))
    return memory


@pytest.fixture
def fresh(tmp_path: Path, embedder: FastEmbedder) -> Iterator[Memory]:
    mem = Memory(tmp_path / "fresh", embedder)
    yield mem
    mem.close()


def lines_of(memory: Memory, vectors: bool = False) -> list[str]:
    return list(export(memory, "default", T0 + timedelta(days=90), vectors=vectors))


def without_time(lines: list[str]) -> list[str]:
    header = json.loads(lines[0])
    del header["exported_at"]
    return [json.dumps(header), *lines[1:]]


def test_an_export_starts_with_a_header_and_holds_the_profile_records_ledger_and_log(lived_in: Memory) -> None:
    lines = [json.loads(line) for line in lines_of(lived_in)]

    header, body = lines[0], lines[1:]
    kinds = [line["type"] for line in body]
    assert header | {"exported_at": None} == {
        "format": "memtiers",
        "version": VERSION,
        "namespace": "default",
        "model": "memtiers/all-MiniLM-L6-v2-int8",
        "dim": 384,
        "vectors": False,
        "exported_at": None,
    }
    assert kinds[-1] == "end"
    assert kinds == sorted(kinds, key=["profile", "record", "provenance", "use", "move", "end"].index)
    profile = {line["key"]: line for line in body if line["type"] == "profile"}
    assert profile["project"]["value"] == "atlas" and profile["project"]["pinned"] is True
    assert profile["name"]["value"] == "Ana Souza" and len(profile["name"]["sources"]) == 1
    records = [line for line in body if line["type"] == "record"]
    assert {r["tier"] for r in records} == {"warm", "cold"}
    beta = next(r for r in records if r["content"].startswith("Decided"))
    assert beta["metadata"] == {"sprint": 12, "team": "web"} and beta["forget_after"] is not None
    history = next(r for r in records if r["content"] == "project: memtiers")
    assert history["kind"] == "history" and history["superseded_by"] is not None
    assert "vector" not in beta
    assert any(line["type"] == "move" and line["dst"] == "gone" for line in body)
    assert any(line["type"] == "use" and line["uses"] >= 1 for line in body)
    assert lines[-1]["records"] == len(records)


def test_export_then_import_into_an_empty_namespace_then_export_is_identical(lived_in: Memory, fresh: Memory) -> None:
    first = lines_of(lived_in, vectors=True)

    report = restore(fresh, first, T0 + timedelta(days=91))
    second = lines_of(fresh, vectors=True)

    assert without_time(second) == without_time(first)
    assert (report.added, report.duplicates, report.renamed, report.embedded) == (report.read, 0, 0, 0)
    assert report.complete and report.profile_set == 2
    assert fresh.recall("what can't I eat?", T0 + timedelta(days=92)).hits[0].record.content == (
        "I am allergic to peanuts"
    )


def test_an_import_without_vectors_embeds_every_record_and_still_round_trips(lived_in: Memory, fresh: Memory) -> None:
    first = lines_of(lived_in)

    report = restore(fresh, first, T0)

    assert report.embedded == report.added == lived_in.store.count()
    assert without_time(lines_of(fresh)) == without_time(first)
    assert _rows(fresh)[0]["vector"] == next(r["vector"] for r in _rows(lived_in) if r["id"] == _rows(fresh)[0]["id"])


def test_vectors_of_another_model_are_not_trusted_and_are_embedded_again(lived_in: Memory, fresh: Memory) -> None:
    lines = [json.loads(line) for line in lines_of(lived_in, vectors=True)]
    for line in lines:
        if line.get("type") == "record":
            line["vector"]["model"] = "BAAI/bge-small-en-v1.5"

    report = restore(fresh, [json.dumps(line) for line in lines], T0)

    assert report.embedded == report.added > 0


def test_a_file_of_a_newer_format_version_is_refused_saying_to_upgrade(fresh: Memory) -> None:
    header = json.dumps({"format": "memtiers", "version": VERSION + 1})

    with pytest.raises(InvalidInput, match=rf"format version {VERSION + 1}, newer .* upgrade memtiers"):
        restore(fresh, [header, '{"type": "end"}'], T0)
    assert fresh.store.count() == 0


def test_a_file_that_is_not_an_export_is_refused_naming_the_header_it_lacks(fresh: Memory) -> None:
    with pytest.raises(InvalidInput, match="not a memtiers export"):
        restore(fresh, ['{"type": "entity", "name": "x"}'], T0)


def test_an_import_cut_short_keeps_what_it_read_and_the_whole_file_then_adds_only_the_rest(
    lived_in: Memory, fresh: Memory, tmp_path: Path
) -> None:
    first = lines_of(lived_in, vectors=True)
    cut = next(i for i, line in enumerate(first) if '"type": "record"' in line) + 3
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(first[:cut]) + "\n" + first[cut][:40])
    whole = tmp_path / "whole.jsonl"
    whole.write_text("\n".join(first) + "\n")

    with pytest.raises(InvalidInput, match=rf"line {cut + 1} is not JSON \(the file may be cut short\)"):
        import_file(fresh, partial, T0)
    kept = fresh.store.count()
    report = import_file(fresh, whole, T0)

    assert kept == 3
    assert report.duplicates == 3 and report.added == lived_in.store.count() - 3
    assert count_rows(fresh.folder) == lived_in.store.count()
    assert without_time(lines_of(fresh, vectors=True)) == without_time(first)


def test_an_import_run_twice_adds_nothing_the_second_time(lived_in: Memory, fresh: Memory) -> None:
    first = lines_of(lived_in)
    restore(fresh, first, T0)

    again = restore(fresh, first, T0)

    assert (again.added, again.moves, again.profile_set) == (0, 0, 0)
    assert again.duplicates == again.read
    assert without_time(lines_of(fresh)) == without_time(first)


def test_a_file_without_its_end_line_is_reported_incomplete(lived_in: Memory, fresh: Memory) -> None:
    report = restore(fresh, lines_of(lived_in)[:-1], T0)

    assert not report.complete


def test_importing_into_a_used_namespace_maps_a_repeated_memory_onto_the_stored_one(
    lived_in: Memory, tmp_path: Path, embedder: FastEmbedder
) -> None:
    target = Memory(tmp_path / "used", embedder, new_id=iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb"]).__next__)
    try:
        (mine,) = target.remember([MemoryIn(content="i am  allergic to PEANUTS")], T0)
        theirs = next(r for r in _rows(lived_in) if r["content"] == "I am allergic to peanuts")

        report = restore(target, lines_of(lived_in), T0)

        assert report.duplicates == 1 and report.renamed == 0
        assert target.store.count() == lived_in.store.count() + 1 - 1
        assert target.store.get([theirs["id"]]) == {}
        assert {m.rule for m in target.moves(mine.id)} >= {"remember:health"}
        assert target.ledger.usage([mine.id])[mine.id].uses >= 1  # the file's uses of that memory, merged in
    finally:
        target.close()


def test_an_id_already_taken_by_another_memory_gets_a_new_one_everywhere_it_is_named(
    lived_in: Memory, tmp_path: Path, embedder: FastEmbedder
) -> None:
    profile = lived_in.profile()
    name_id = profile["name"].sources[0]
    target = Memory(tmp_path / "taken", embedder, new_id=lambda: name_id)
    try:
        target.remember([MemoryIn(content="The staging database is rebuilt every night")], T0)

        report = restore(target, lines_of(lived_in), T0)

        new_id = target.profile()["name"].sources[0]
        assert report.renamed == 1 and new_id != name_id
        assert target.get(new_id).content == "My name is Ana Souza"
        assert target.get(name_id).content == "The staging database is rebuilt every night"
        assert any(m.rule.startswith("remember") for m in target.moves(new_id))
    finally:
        target.close()


def test_a_profile_key_already_set_to_another_value_keeps_it_and_is_reported(lived_in: Memory, fresh: Memory) -> None:
    fresh.set_profile({"project": "zephyr"}, T0)

    report = restore(fresh, lines_of(lived_in), T0)

    assert report.profile_kept == ("project",)
    assert fresh.profile()["project"].value == "zephyr"
    assert fresh.profile()["name"].value == "Ana Souza"


def test_progress_is_told_the_records_done_and_the_total(lived_in: Memory, fresh: Memory, tmp_path: Path) -> None:
    told: list[tuple[int, int | None]] = []
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(export(lived_in, "default", T0, progress=lambda d, t: told.append((d, t)))) + "\n")
    exported = list(told)
    told.clear()

    import_file(fresh, path, T0, progress=lambda d, t: told.append((d, t)))

    n = lived_in.store.count()
    assert exported[-1] == (n, n)
    assert told[-1] == (n, n)


def _rows(memory: Memory) -> list[dict[str, object]]:
    return read_rows(memory, vectors=True)
