"""Each file memtiers owns, damaged in turn: every call either works or is a readable error naming that file,
the damaged file is never written to, and with it restored nothing stored is lost."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import T0
from tiers.errors import CorruptFile, CorruptProfile, MemtiersError, StorageError
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier

NOTES = [f"Survey {i}: the {w} gauge reads {i * 3} cm" for i, w in enumerate(["river", "tide", "snow", "rain"] * 3)]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedder) -> tuple[Path, dict[str, str]]:
    """A data folder with every file memtiers writes: a profile, warm and cold records with their indexes, a ledger."""
    folder = tmp_path_factory.mktemp("template") / "ns"
    memory = Memory(folder, embedder)
    try:
        old = memory.remember([MemoryIn(content=c) for c in NOTES[:6]], T0)
        memory.sweep(T0 + timedelta(days=50))  # these go cold; the cold table gets its full-text and id indexes
        new = memory.remember([MemoryIn(content=c) for c in NOTES[6:]], T0 + timedelta(days=50))
        memory.set_profile({"name": "Ada"}, T0 + timedelta(days=50))
        with memory.parts.locked():
            memory.store.compact()  # one manifest per table: the one damaged is the one read
        assert {memory.get(s.id).tier for s in old} == {Tier.COLD}
        return folder, {s.id: c for s, c in zip(old + new, NOTES, strict=True)}
    finally:
        memory.close()


def garble_head(data: bytes) -> bytes:
    return b"garbage!" * 8 + data[64:]


def garble_page(data: bytes) -> bytes:
    """SQLite's second page (the header on page one still says 'SQLite format 3')."""
    return data[:4096] + b"\x5a" * 4096 + data[8192:]


def garble_tail(data: bytes) -> bytes:
    """A Lance file's last bytes: its footer, which says where everything else is."""
    return data[:-40] + b"\xa5" * 40


# what is damaged, how, which error, and what the message must name (relative to the data folder)
DAMAGES: dict[str, tuple[str, Callable[[bytes], bytes], type[MemtiersError], str]] = {
    "profile.json": ("profile.json", garble_head, CorruptProfile, "profile.json"),
    "store.json": ("store.json", garble_head, CorruptFile, "store.json"),
    "ledger.sqlite, its header": ("ledger.sqlite", garble_head, CorruptFile, "ledger.sqlite"),
    "ledger.sqlite, one page": ("ledger.sqlite", garble_page, CorruptFile, "ledger.sqlite"),
    "warm manifest": ("lance/warm.lance/_versions/*.manifest", garble_tail, StorageError, "lance/warm.lance"),
    "warm data file": ("lance/warm.lance/data/*.lance", garble_tail, StorageError, "lance/warm.lance"),
    "cold manifest": ("lance/cold.lance/_versions/*.manifest", garble_tail, StorageError, "lance/cold.lance"),
    "cold data file": ("lance/cold.lance/data/*.lance", garble_tail, StorageError, "lance/cold.lance"),
    "cold id or hash index": ("lance/cold.lance/_indices/*/page_data.lance", garble_tail, StorageError,
                              "lance/cold.lance"),
}  # fmt: skip

CALLS: dict[str, Callable[[Memory], Any]] = {
    "recall": lambda m: m.recall("gauge reading", T0, tiers=[Tier.HOT, Tier.WARM, Tier.COLD]),
    "get what recall found": lambda m: [m.get(h.record.id) for h in m.recall("gauge", T0, tiers=[Tier.COLD]).hits],
    "remember": lambda m: m.remember([MemoryIn(content="The boat leaves at dawn")], T0),
    "profile": lambda m: m.profile(),
    "profile set": lambda m: m.set_profile({"city": "Oslo"}, T0),
    "sweep": lambda m: m.sweep(T0 + timedelta(days=60)),
    "stats": lambda m: m.stats(),
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=list(DAMAGES))
def test_a_damaged_file_is_a_readable_error_naming_it_and_is_never_written_to(
    tmp_path: Path,
    embedder: FastEmbedder,
    template: tuple[Path, dict[str, str]],
    damage: tuple[str, Callable[[bytes], bytes], type[MemtiersError], str],
) -> None:
    pattern, garble, error, named = damage
    folder = tmp_path / "ns"
    shutil.copytree(template[0], folder)
    paths = sorted(folder.glob(pattern))  # cold's two BTree indexes (id, hash) are both damaged
    assert paths, pattern
    originals = [path.read_bytes() for path in paths]
    for path, original in zip(paths, originals, strict=True):
        path.write_bytes(garble(original))
    damaged = [path.read_bytes() for path in paths]

    outcomes: dict[str, str] = {}
    try:
        memory = Memory(folder, embedder)
    except MemtiersError as exc:
        outcomes["open"] = f"{type(exc).__name__}: {exc}"
    else:
        try:
            for name, call in CALLS.items():
                try:
                    call(memory)
                    outcomes[name] = "ok"
                except MemtiersError as exc:  # anything else fails the test as it is raised
                    outcomes[name] = f"{type(exc).__name__}: {exc}"
        finally:
            memory.close()

    failed = {name: text for name, text in outcomes.items() if text != "ok"}
    assert failed, outcomes
    for text in failed.values():
        assert text.startswith(f"{error.__name__}: "), text
        assert str(folder / named) in text, text
        assert "restore" in text.lower() or "move it aside" in text or "fix or move" in text, text
    assert [path.read_bytes() for path in paths] == damaged  # never written to, never replaced

    for path, original in zip(paths, originals, strict=True):
        path.write_bytes(original)
    memory = Memory(folder, embedder)
    try:
        assert {rid: r.content for rid, r in memory.store.get(list(template[1])).items()} == template[1]
        assert memory.profile()["name"].value == "Ada"
    finally:
        memory.close()
