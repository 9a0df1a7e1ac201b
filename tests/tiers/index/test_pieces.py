"""A long memory is found by its best piece: what the end of long notes says, by meaning, in either tier.

Real LanceDB on temporary folders and the real model; the arithmetic of `Pieces` alone on made-up vectors.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import lance
import lancedb
import numpy as np
import pyarrow as pa
import pytest

from tests.helpers import T0
from tiers.index import signs
from tiers.index import synced as synced_module
from tiers.index.meta import PIECES_DONE
from tiers.index.pieces import Pieces, piece_scores
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder, pieces
from tiers.recall.rank import RecallSettings
from tiers.records import MemoryIn, Tier
from tiers.storage.tables import PIECES, Connection, Table, schema
from tiers.text.terms import words
from tiers.transfer.jsonl import export, restore
from tiers.transfer.reembed import reembed

# Minutes of a long meeting (three pieces, ~325 words); what it ends on is what is asked about.
_KITCHEN = (
    "Kitchen renovation meeting with the contractor. We walked through the cabinet layout again and agreed "
    "to move the sink under the window so the dishwasher sits to its left. The countertop will be quartz, "
    "pale grey, with a square edge; the supplier needs two weeks after the templates are cut. Tiling goes "
    "behind the hob only, not the whole wall, which saves about a third of the tile budget. "
)
_GARDEN = (
    "The garden committee went over the spring planting plan: tomatoes along the south fence, beans on "
    "the trellis, and the compost bins moved behind the shed. Watering rota starts in May; each plot holder "
    "takes one week. The tool shed lock is broken and needs replacing before the season starts. "
)
_BUDGET = (
    "Quarterly budget review: marketing spend came in under plan, travel over by a little, and the office "
    "lease renewal goes up by four percent from July. Hiring stays frozen until the autumn forecast is in. "
)
_LAST = "Last item: Marta's passport expires on 12 March, so she must renew it before the Lisbon conference."
NOTES = f"{_KITCHEN * 2}{_GARDEN * 2}{_BUDGET * 2} {_LAST}"
OTHERS = [
    "The boiler service is booked for the second week of October.",
    "Bought a new pair of running shoes, half a size larger than the last ones.",
    "We are thinking about a weekend in Porto sometime in the spring.",
    "Renewed the car insurance online; the premium went up slightly.",
    "The visa appointment for the India trip is on the 5th at the consulate.",
    "Library books are due back on Friday; two of them can be renewed online.",
]
QUERY = "what must Marta do before the conference"
# Words off, and the names the query writes: the note shares "Marta" and "conference".
BY_MEANING = RecallSettings().without("text_weight", "names_first")


def _memory(folder: Path, embedder: FastEmbedder, recall: RecallSettings = BY_MEANING) -> Memory:
    return Memory(folder, embedder, MemorySettings(recall=recall))


def _first(memory: Memory, when: object = T0, **kwargs: object) -> str:
    return memory.recall(QUERY, when, limit=3, **kwargs).hits[0].record.id  # type: ignore[arg-type]


def _stored(memory: Memory) -> str:
    stored = memory.remember([MemoryIn(content=t) for t in [*OTHERS, NOTES]], T0)
    return stored[-1].id


def test_the_notes_are_long_enough_that_their_mean_loses_what_they_end_on() -> None:
    assert len(pieces(NOTES)) == 3 and _LAST in pieces(NOTES)[-1]


@pytest.mark.parametrize("by_pieces", [True, False])
def test_recall_finds_what_the_end_of_long_notes_says_by_its_best_piece(
    tmp_path: Path, embedder: FastEmbedder, by_pieces: bool
) -> None:
    """By meaning alone the notes rank first; by the mean of their pieces alone (the technique off) they do not."""
    recall = BY_MEANING if by_pieces else BY_MEANING.without("pieces")
    memory = _memory(tmp_path / "ns", embedder, recall)
    try:
        notes = _stored(memory)
        hit = memory.recall(QUERY, T0, limit=3).hits
        assert (hit[0].record.id == notes) is by_pieces
        if by_pieces:
            assert hit[0].record.content == NOTES  # returned whole, not the piece that matched
    finally:
        memory.close()


def test_long_notes_sent_cold_are_found_by_their_best_piece_and_come_back_with_them(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = _memory(tmp_path / "ns", embedder)
    try:
        notes = _stored(memory)
        later = T0 + timedelta(days=120)
        memory.sweep(later)
        assert memory.get(notes).tier is Tier.COLD

        assert _first(memory, later, tiers=[Tier.COLD]) == notes
        assert _first(memory, later) == notes

        # Said again, they come back warm, pieces and all (the row moves as it is).
        memory.remember([MemoryIn(content=NOTES)], later)
        assert memory.get(notes).tier is Tier.WARM
        assert _first(memory, later, tiers=[Tier.WARM]) == notes
    finally:
        memory.close()


def test_a_restarted_process_finds_long_notes_by_their_pieces_from_the_saved_indexes(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(synced_module, "SAVED_FROM", 1)  # every full read saved for the next process
    memory = _memory(tmp_path / "ns", embedder)
    notes = _stored(memory)
    memory.recall(QUERY, T0)  # the warm tier read whole, and saved
    memory.remember([MemoryIn(content=f"cold note {i}") for i in range(3)], T0)
    memory.sweep(T0 + timedelta(days=120))
    memory.recall(QUERY, T0 + timedelta(days=120))  # the cold tier read whole, and saved
    memory.close()
    assert list((tmp_path / "ns").rglob("piece_vectors.npy"))

    again = _memory(tmp_path / "ns", embedder)
    try:
        assert _first(again, T0 + timedelta(days=120)) == notes
        with again.store.cold() as index:
            assert index.mapped_from is not None  # opened from the saved copy, not the table
            assert index.pieces.count == len(pieces(NOTES))
    finally:
        again.close()


def test_forgotten_notes_leave_no_piece_to_be_found_by(tmp_path: Path, embedder: FastEmbedder) -> None:
    memory = _memory(tmp_path / "ns", embedder)
    try:
        notes = _stored(memory)
        memory.forget(notes, T0)

        assert notes not in [h.record.id for h in memory.recall(QUERY, T0, limit=10).hits]
        with memory.store.warm() as index:
            assert not len(index.pieces.best(np.ones((1, index.dim), np.float32), index.alive[: index.size])[0])
    finally:
        memory.close()


def test_an_export_imported_elsewhere_finds_long_notes_by_their_pieces(tmp_path: Path, embedder: FastEmbedder) -> None:
    source = _memory(tmp_path / "a", embedder)
    _stored(source)
    lines = list(export(source, "a", T0, vectors=True))
    source.close()

    target = _memory(tmp_path / "b", embedder)
    try:
        restore(target, lines, T0)
        [notes] = [
            h.record.id for h in target.recall("kitchen renovation", T0, limit=10).hits if "Marta" in h.record.content
        ]
        assert _first(target) == notes
    finally:
        target.close()


def test_reembed_makes_the_pieces_again_with_the_new_model(tmp_path: Path, embedder: FastEmbedder) -> None:
    memory = _memory(tmp_path / "ns", embedder)
    notes = _stored(memory)
    memory.close()
    meta = json.loads((tmp_path / "ns" / "store.json").read_text())
    (tmp_path / "ns" / "store.json").write_text(json.dumps({k: v for k, v in meta.items() if k != PIECES}))

    reembed(tmp_path / "ns", embedder)
    assert json.loads((tmp_path / "ns" / "store.json").read_text())[PIECES] == PIECES_DONE  # the sweep has none to fill

    again = _memory(tmp_path / "ns", embedder)
    try:
        assert _first(again) == notes
        with again.store.warm() as index:
            kept = index.pieces.of(index.positions[notes])
        assert kept is not None and kept.shape == (len(pieces(NOTES)), embedder.dim)
        np.testing.assert_allclose(kept, embedder.embed(pieces(NOTES)), atol=1e-5)
    finally:
        again.close()


def test_a_store_made_before_pieces_is_read_as_it_was_and_its_first_write_adds_the_column(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = _memory(tmp_path / "ns", embedder)
    short = memory.remember([MemoryIn(content=OTHERS[0])], T0)[0].id
    memory.sweep(T0 + timedelta(days=120))  # one row in each table
    memory.remember([MemoryIn(content=OTHERS[1])], T0 + timedelta(days=120))
    memory.close()
    for name in ("warm", "cold"):  # the tables as a store made before the column was would have them
        dataset = lance.dataset(str(tmp_path / "ns" / "lance" / f"{name}.lance"))
        dataset.drop_columns([PIECES])
        assert PIECES not in lance.dataset(str(tmp_path / "ns" / "lance" / f"{name}.lance")).schema.names

    old = _memory(tmp_path / "ns", embedder)
    try:
        assert {h.record.id for h in old.recall("boiler service", T0, limit=5).hits} >= {short}  # read without it
        notes = old.remember([MemoryIn(content=t) for t in [*OTHERS, NOTES]], T0)[-1].id
        assert _first(old) == notes
        old.sweep(T0 + timedelta(days=240))  # the cold table gets the column with the first row moved into it
        assert _first(old, T0 + timedelta(days=240)) == notes
    finally:
        old.close()
    for name in ("warm", "cold"):
        assert PIECES in lance.dataset(str(tmp_path / "ns" / "lance" / f"{name}.lance")).schema.names


def test_pieces_score_each_owner_by_its_best_piece_among_those_kept() -> None:
    found = Pieces(2)
    found.add(np.array([1, 1, 4]), np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32))
    keep = np.ones(5, dtype=bool)

    owners, best = found.best(np.array([[0.0, 1.0]], dtype=np.float32), keep)
    assert owners.tolist() == [1, 4] and best.tolist() == pytest.approx([1.0, 0.8])

    keep[1] = False
    owners, best = found.best(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32), keep)  # the best form counts
    assert owners.tolist() == [4] and best.tolist() == pytest.approx([0.8])
    assert found.of(1) is not None and found.of(2) is None


def test_quantized_pieces_score_within_int8_rounding_of_float_ones() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(40, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owners = np.repeat(np.arange(10), 4)
    exact, coded = Pieces(16), Pieces(16, quantized=True)
    exact.add(owners, vectors)
    coded.add(owners, vectors)
    query = vectors[:1]

    keep = np.ones(10, dtype=bool)
    assert exact.best(query, keep)[1] == pytest.approx(coded.best(query, keep)[1], abs=0.02)
    assert np.allclose(coded.of(3), vectors[12:16], atol=0.01)  # type: ignore[arg-type]


def test_a_pieces_column_is_read_by_row_and_saved_arrays_that_do_not_fit_are_refused() -> None:
    kind = schema(2).field(PIECES).type
    column = pa.array([None, [[1.0, 0.0], [0.0, 1.0]], None, [[0.6, 0.8]]], type=kind)
    found = Pieces(2)
    found.add_column(column, first=10)
    assert found.owner[: found.count].tolist() == [11, 11, 13]

    saved = found.arrays()
    assert Pieces(2).set_arrays(saved, size=14)
    assert not Pieces(2).set_arrays(saved, size=12)  # an owner past the index's positions
    assert not Pieces(2).set_arrays({**saved, "piece_vectors": saved["piece_vectors"][:1]}, size=14)


def test_a_table_reached_through_lancedb_gains_the_column_at_its_first_write_and_keeps_the_pieces(
    tmp_path: Path,
) -> None:
    """The path a table on object storage takes (every call through LanceDB), here on a file:// URI."""
    uri = f"file://{tmp_path / 'db'}"
    old = pa.schema([f for f in schema(2) if f.name != PIECES])
    first = {name: None for name in old.names} | {"id": "ba9876543210", "vector": [0.0, 1.0], "tags": []}
    lancedb.connect(uri).create_table("warm", data=pa.Table.from_pylist([first], schema=old))
    table = Table(Connection(uri), "warm", 2, uri, tmp_path / "read.lock", indexed=False)
    before = pa.Table.from_batches(list(table.scan(["id", "vector", PIECES])))
    assert before.select(["id", PIECES]).to_pylist() == [{"id": "ba9876543210", "pieces": None}]  # as if none
    assert table.get(["ba9876543210"])[PIECES].to_pylist() == [None]

    row = {name: None for name in schema(2).names} | {
        "id": "0123456789ab", "content": "notes", "tier": "warm", "kind": "note", "protected": False,
        "tags": [], "before": [], "after": [], "vector": [1.0, 0.0], "pieces": [[1.0, 0.0], [0.0, 1.0]],
    }  # fmt: skip
    table.add(pa.Table.from_pylist([row], schema=schema(2)))

    got = pa.Table.from_batches(list(table.scan(["id", PIECES]))).to_pylist()
    assert sorted(got, key=lambda r: r["id"]) == [
        {"id": "0123456789ab", "pieces": [[1.0, 0.0], [0.0, 1.0]]},
        {"id": "ba9876543210", "pieces": None},
    ]


def test_past_the_exact_limit_the_sign_codes_choose_which_pieces_are_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signs, "EXACT_UP_TO", 100)
    monkeypatch.setattr(signs, "PRESELECT", 50)
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(1_000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    found = Pieces(32, quantized=True)
    found.add(np.repeat(np.arange(250), 4), vectors)
    keep = np.ones(250, dtype=bool)

    owners, best = found.best(vectors[[401]], keep)  # piece 401 is the second of position 100's

    assert len(owners) < 250  # not every piece was scored
    assert owners[np.argmax(best)] == 100 and best.max() == pytest.approx(1.0, abs=0.02)
    keep[100] = False
    assert 100 not in found.best(vectors[[401]], keep)[0]


def test_long_notes_over_the_budget_are_shown_by_the_piece_that_answers(tmp_path: Path, embedder: FastEmbedder) -> None:
    memory = _memory(tmp_path / "ns", embedder)
    try:
        notes = _stored(memory)
        packed = memory.recall(QUERY, T0, limit=3, max_tokens=300)

        assert packed.tokens <= 300
        [hit] = [h for h in packed.hits if h.record.id == notes]
        assert hit.excerpt is not None and _LAST in hit.excerpt.text and _LAST in packed.text
        assert hit.excerpt.last == hit.excerpt.words == len(NOTES.split())  # its last piece: where the answer is
        assert "(excerpt: words" in packed.text and _KITCHEN.split()[0] + " renovation meeting" not in packed.text

        whole = memory.recall(QUERY, T0, limit=3, max_tokens=hit.excerpt.whole_tokens + 200)
        assert [h.excerpt for h in whole.hits if h.record.id == notes] == [None]
        assert " ".join(NOTES.split()) in whole.text

        memory.sweep(T0 + timedelta(days=120))  # cold: the same piece, from the cold index's int8 pieces
        cold = memory.recall(QUERY, T0 + timedelta(days=120), limit=3, max_tokens=300)
        assert any(h.excerpt is not None and _LAST in h.excerpt.text for h in cold.hits if h.record.id == notes)
    finally:
        memory.close()


def nearest_piece(cosines: np.ndarray, texts: list[str], terms: list[str], weight: float) -> int:
    return int(np.argmax(piece_scores(cosines, texts, terms, weight)))


def test_an_excerpt_is_the_piece_nearest_by_meaning_and_by_the_query_s_words() -> None:
    texts = ["the kitchen sink moves under the window", "Marta must renew her passport before Lisbon"]
    cosines = np.array([0.9, 0.5], dtype=np.float32)  # the first piece nearer by meaning

    assert nearest_piece(cosines, texts, words("Lisbon passport"), weight=0.0) == 0
    assert nearest_piece(cosines, texts, words("Lisbon passport"), weight=1.0) == 1  # 0.5 + 1 > 0.9
    assert nearest_piece(cosines, texts, words("Lisbon window"), weight=1.0) == 0  # half each: meaning decides
    assert nearest_piece(cosines, texts[:1], words("Lisbon"), weight=1.0) == 0  # texts that do not match: meaning
