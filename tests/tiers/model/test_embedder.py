"""Embedding memories: a long one in pieces, so what its end says counts by meaning too."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import T0
from tiers.memory import Memory, MemorySettings
from tiers.model import embedder as embedder_module
from tiers.model.embedder import PIECE_OVERLAP, PIECE_WORDS, FastEmbedder, embed_memories, is_long, pieces
from tiers.recall.rank import RecallSettings
from tiers.records import MemoryIn

# Meeting notes: 200 words on a kitchen renovation (about what the model reads), then a paragraph on a trip.
_KITCHEN = (
    "Kitchen renovation meeting with the contractor. We walked through the cabinet layout again and agreed "
    "to move the sink under the window so the dishwasher sits to its left. The countertop will be quartz, "
    "pale grey, with a square edge; the supplier needs two weeks after the templates are cut. Tiling goes "
    "behind the hob only, not the whole wall, which saves about a third of the tile budget. "
) * 3
_TRIP = (
    "Then we planned the trip to Japan in April: flights to Osaka on the 3rd, four nights at a ryokan in "
    "Kyoto near the temples, a seven-day rail pass for the bullet train to Tokyo, and a day trip to see "
    "Mount Fuji if the weather is clear. Book the ryokan this week; cherry blossom season fills it early."
)
_OTHERS = [
    "The boiler service is booked for the second week of October.",
    "Bought a new pair of running shoes, half a size larger than the last ones.",
    "The cat needs her vaccination booster at the vet next month.",
    "Library books are due back on Friday; two of them can be renewed online.",
    "The car's front tyres are worn and should be replaced before winter.",
]
_QUERY = "what is planned for the trip to Japan"


def test_a_text_past_the_piece_size_is_cut_into_overlapping_pieces_that_cover_every_word() -> None:
    text = " ".join(f"w{i}" for i in range(400))

    cut = [p.split() for p in pieces(text)]

    assert all(len(w) <= PIECE_WORDS for w in cut) and [w[0] for w in cut] == ["w0", "w120", "w240", "w360"]
    assert all(a[-PIECE_OVERLAP:] == b[:PIECE_OVERLAP] for a, b in pairwise(cut))
    assert cut[-1][-1] == "w399"
    assert pieces("a short note") == ["a short note"]


def _pieces_at_whitespace(text: str) -> list[str]:
    """Pieces as they were cut before words were counted by script: at whitespace alone."""
    words = text.split()
    if len(words) <= PIECE_WORDS:
        return [text]
    step = PIECE_WORDS - PIECE_OVERLAP
    return [" ".join(words[start : start + PIECE_WORDS]) for start in range(0, len(words) - PIECE_OVERLAP, step)]


def test_english_memories_are_cut_and_embedded_exactly_as_before_words_were_counted_by_script(
    embedder: FastEmbedder,
) -> None:
    """Stored vectors of English memories must not change, or every store would need re-embedding."""
    texts = [
        f"{_KITCHEN} {_TRIP}",
        *_OTHERS,
        "We met at the café – the “usual” place 🎉\n\tthen walked home. " * 30,
        " ".join(["word"] * PIECE_WORDS),
        " ".join(["word"] * (PIECE_WORDS + 1)),
    ]
    for text in texts:
        assert pieces(text) == _pieces_at_whitespace(text)
        assert is_long(text) is (len(text.split()) > PIECE_WORDS)

    made = embed_memories(embedder, texts)

    cut = [_pieces_at_whitespace(text) for text in texts]
    flat = embedder.embed([piece for p in cut for piece in p])
    at = 0
    for row, p in enumerate(cut):
        mean = flat[at : at + len(p)].mean(axis=0)
        assert np.array_equal(made.vectors[row], mean / max(float(np.linalg.norm(mean)), 1e-12))
        at += len(p)


def test_a_long_chinese_memory_is_cut_into_pieces_of_characters() -> None:
    text = "我们讨论了厨房装修的细节。" * 35  # 455 characters, no space
    assert len(text.split()) == 1 and is_long(text)

    cut = pieces(text)

    assert [len(p) for p in cut] == [PIECE_WORDS, PIECE_WORDS, PIECE_WORDS, 455 - 3 * (PIECE_WORDS - PIECE_OVERLAP)]
    assert cut[0] == text[:PIECE_WORDS] and cut[1] == text[120:270] and cut[-1].endswith(text[-20:])
    assert not is_long("我对花生过敏。" * 21) and is_long("我对花生过敏。" * 22)  # 147 and 154 characters


def test_short_memories_are_embedded_as_the_model_embeds_them(embedder: FastEmbedder) -> None:
    texts = ["a short note", " ".join(["word"] * PIECE_WORDS)]
    made = embed_memories(embedder, texts)
    assert np.array_equal(made.vectors, embedder.embed(texts))
    assert made.pieces == [None, None]


def test_a_long_memory_stands_for_all_its_pieces(embedder: FastEmbedder) -> None:
    note = f"{_KITCHEN} {_TRIP}"
    assert len(pieces(note)) == 2
    query = embedder.embed([_QUERY])[0]

    made = embed_memories(embedder, [note, _OTHERS[0]])
    stored, short = made.vectors
    truncated = embedder.embed([note])[0]  # what the model makes of the first 256 word pieces alone

    assert np.linalg.norm(stored) == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(short, embedder.embed([_OTHERS[0]])[0], atol=1e-5)  # a batch may mix both kinds
    assert float(stored @ query) > float(truncated @ query)
    kept = made.pieces[0]
    assert kept is not None and made.pieces[1] is None
    np.testing.assert_allclose(kept, embedder.embed(pieces(note)), atol=1e-5)  # each piece as the model reads it
    assert float((kept @ query).max()) > float(stored @ query)  # the trip's piece, undiluted by the kitchen


@pytest.mark.parametrize("in_pieces", [True, False])
def test_recall_by_meaning_finds_what_the_end_of_a_long_note_says(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch, in_pieces: bool
) -> None:
    """By meaning alone (words off), the long note ranks first; embedded truncated (the premise), it does not."""
    if not in_pieces:
        monkeypatch.setattr(embedder_module, "PIECE_WORDS", 10_000)
    off = RecallSettings().without("text_weight", "names_first")  # words, and the names the query writes, off
    memory = Memory(tmp_path / "ns", embedder, MemorySettings(recall=off))
    try:
        stored = memory.remember([MemoryIn(content=t) for t in [*_OTHERS, f"{_KITCHEN} {_TRIP}"]], T0)
        first = memory.recall(_QUERY, T0, limit=3).hits[0].record.id
        assert (first == stored[-1].id) is in_pieces
    finally:
        memory.close()


def test_a_settings_file_left_empty_in_the_model_folder_is_written_again_and_the_model_loads(tmp_path: Path) -> None:
    # What a second server saw while the first was still writing the file, or what a crash leaves.
    folder = embedder_module.packaged_model_folder(tmp_path)
    (folder / "config.json").write_text("")
    (folder / "tokenizer_config.json").write_text('{"model_max')

    fresh = FastEmbedder(cache_dir=tmp_path)

    assert fresh.embed(["the model loads"]).shape == (1, fresh.dim)
    assert json.loads((folder / "config.json").read_text())["model_type"] == "bert"
    assert not list(folder.glob("*.part"))


_ASSEMBLE = """
import sys
from pathlib import Path
from tiers.model.embedder import FastEmbedder
print(FastEmbedder(cache_dir=Path(sys.argv[1]), threads=1).embed(["hello"]).shape[1])
"""


def test_servers_starting_together_on_a_new_cache_folder_all_load_the_model(tmp_path: Path) -> None:
    runs = [
        subprocess.Popen([sys.executable, "-c", _ASSEMBLE, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [run.communicate(timeout=120)[0].strip() for run in runs]

    assert [run.returncode for run in runs] == [0, 0, 0, 0]
    assert outputs == ["384"] * 4
