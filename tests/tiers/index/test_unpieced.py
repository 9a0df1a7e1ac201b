"""Long memories stored before pieces were kept get them from the sweep, in both tiers, a batch a pass, each
process's indexes told; store.json then says none is left. A long Chinese memory once counted as one word
is looked at once more.

Real LanceDB on temporary folders and the real model.
"""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import lance
import numpy as np
import pytest

from tests.helpers import T0
from tests.tiers.index.test_pieces import NOTES, OTHERS, _first, _memory
from tiers.index.meta import PIECES_DONE
from tiers.model import embedder as embedder_module
from tiers.model.embedder import FastEmbedder, pieces
from tiers.namespace import backfill
from tiers.recall.rank import RecallSettings
from tiers.records import MemoryIn, Tier
from tiers.storage.tables import PIECES


def _as_before_pieces(folder: Path) -> None:
    """Make a store what it was before pieces were kept: no column, no saved index, store.json unmarked."""
    for name in ("warm", "cold"):
        lance.dataset(str(folder / "lance" / f"{name}.lance")).drop_columns([PIECES])
    for saved in ("warm-index", "cold-index"):
        shutil.rmtree(folder / saved, ignore_errors=True)
    meta = json.loads((folder / "store.json").read_text())
    meta.pop(PIECES)
    (folder / "store.json").write_text(json.dumps(meta))


def test_the_sweep_gives_long_memories_stored_before_pieces_their_pieces_in_both_tiers(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "ns"
    memory = _memory(folder, embedder)
    cold = memory.remember([MemoryIn(content=t) for t in [*OTHERS, NOTES]], T0)[-1].id
    later = T0 + timedelta(days=120)
    memory.sweep(later)  # the first notes and the short ones go cold
    fresh = [f"{text} (said again on the phone)" for text in OTHERS]
    warm = memory.remember([MemoryIn(content=t) for t in [*fresh, NOTES.replace("Kitchen", "Bathroom")]], later)[-1].id
    memory.close()
    _as_before_pieces(folder)

    old = _memory(folder, embedder)
    beside = _memory(folder, embedder)  # another process on the folder, its indexes read before the backfill
    try:
        assert old.get(cold).tier is Tier.COLD and old.get(warm).tier is Tier.WARM
        for each in (old, beside):
            with each.store.warm() as index:
                assert index.pieces.of(index.positions[warm]) is None
            with each.store.cold() as cold_index:
                assert cold_index.pieces.of(cold_index.position(cold)) is None

        monkeypatch.setattr(backfill, "FILL_BATCH", 1)  # one a pass: the next pass takes the rest
        assert old.sweep(later).pieces_filled == 1
        assert old.sweep(later).pieces_filled == 1
        assert old.sweep(later).pieces_filled == 0
        assert json.loads((folder / "store.json").read_text())[PIECES] == PIECES_DONE  # no pass looks again

        # By their best piece; by their means alone, as they were, neither ranked first (tried once by hand).
        assert _first(old, later, tiers=[Tier.COLD]) == cold
        assert _first(old, later, tiers=[Tier.WARM]) == warm
        for name in ("warm", "cold"):  # on disk, as a write today would leave them
            stored = lance.dataset(str(folder / "lance" / f"{name}.lance")).to_table().to_pylist()
            long = [row for row in stored if len(row["content"].split()) > 150]
            assert len(long) == 1 and len(long[0][PIECES]) == len(pieces(NOTES))
            assert all(row[PIECES] is None for row in stored if row not in long)
        assert old.sweep(later, dry_run=True).pieces_filled == 0
        with beside.store.warm() as index:  # told by the change feed
            assert np.asarray(index.pieces.of(index.positions[warm])).shape == (len(pieces(NOTES)), embedder.dim)
        with beside.store.cold() as cold_index:
            assert np.asarray(cold_index.pieces.of(cold_index.position(cold))).shape[0] == len(pieces(NOTES))
    finally:
        old.close()
        beside.close()

    again = _memory(folder, embedder)  # a new process reads them from the tables
    try:
        assert _first(again, later, tiers=[Tier.COLD]) == cold and _first(again, later, tiers=[Tier.WARM]) == warm
    finally:
        again.close()


# Minutes in Chinese, written without a space (about 270 characters, two pieces); the end is asked about.
_ZH_NOTES = (
    "厨房装修会议：橱柜布局再次确认，水槽移到窗下，台面用浅灰色石英石，供应商需要两周时间。" * 3
    + "花园委员会讨论了春季种植计划，番茄种在南边篱笆旁。" * 2
    + "最后一项：玛尔塔的护照三月十二日到期，她必须在里斯本会议之前续签。"
)


def test_a_long_chinese_memory_stored_as_one_word_gets_its_pieces_at_the_next_sweep_and_is_excerpted(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before words were counted by script, such a memory was one word: embedded whole, never cut, and its
    store marked as having every piece. The sweep looks once more and gives it its pieces."""
    folder = tmp_path / "ns"
    with monkeypatch.context() as patched:
        patched.setattr(embedder_module, "PIECE_WORDS", 10_000)  # as one word, it was stored without pieces
        memory = _memory(folder, embedder, RecallSettings())
        notes = memory.remember([MemoryIn(content=t) for t in [*OTHERS, _ZH_NOTES]], T0)[-1].id
        memory.close()
    meta = json.loads((folder / "store.json").read_text())
    (folder / "store.json").write_text(json.dumps(meta | {PIECES: True}))
    assert len(pieces(_ZH_NOTES)) == 2

    memory = _memory(folder, embedder, RecallSettings())
    try:
        assert memory.sweep(T0).pieces_filled == 1
        assert memory.sweep(T0).pieces_filled == 0
        assert json.loads((folder / "store.json").read_text())[PIECES] == PIECES_DONE

        packed = memory.recall("玛尔塔的护照什么时候到期？", T0, limit=3, max_tokens=220)

        assert packed.tokens <= 220
        [hit] = [h for h in packed.hits if h.record.id == notes]
        assert hit.excerpt is not None and hit.excerpt.last == hit.excerpt.words == len(_ZH_NOTES)
        assert hit.excerpt.text in _ZH_NOTES and "玛尔塔的护照三月十二日到期" in packed.text
    finally:
        memory.close()
