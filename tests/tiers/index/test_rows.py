"""The warm rows: a written row is kept without its vector (the index holds it once), loaded rows are made only
when asked for, and a tag scope reads the loaded rows' tags in bulk."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.tiers.index.test_warm import DIM, rid, row
from tiers.index import rows as rows_module
from tiers.index.columns import rows_table as _table
from tiers.index.rows import Rows
from tiers.index.warm import Scope, WarmIndex


def test_a_written_row_is_kept_without_its_vector_and_given_back_with_the_index_one() -> None:
    written = row(1, "kayak paddle")
    index = WarmIndex(DIM)
    index.put([written])
    assert index.rows.made[0].vector.size == 0 and index.rows.made[0].pieces is None
    given = index.row(0)
    assert given.record == written.record and (given.vector == written.vector).all()
    assert given.vector.base is index.vectors or given.vector.base is index.vectors.base  # a view: no copy kept


def test_loaded_rows_are_made_when_asked_for_and_tags_are_read_in_bulk() -> None:
    loaded = [row(n, f"w{n}", tags=("a",) if n % 2 else ()) for n in range(6)]
    rows = Rows()
    rows.load(_table(loaded, DIM).drop_columns(["vector", "pieces"]))
    assert rows.tagged(["a"], 6).tolist() == [False, True, False, True, False, True] and not rows.made
    rows.make([2, 4])
    assert sorted(rows.made) == [2, 4] and rows.kept(4).record == loaded[4].record
    rows.put(6, replace(row(6, "w6", tags=("a",))))
    assert rows.tagged(["a"], 7).tolist()[-1] and rows.kept(6).vector.size == 0


def test_written_rows_are_folded_into_the_base_and_read_back_as_they_were_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rows_module, "FOLD_FROM", 4)
    written = [row(n, f"w{n} shared", tags=("a",) if n % 3 == 0 else (), source="s", minute=n) for n in range(30)]
    index = WarmIndex(DIM)
    index.put(written[:10])
    assert index.rows.size >= 5 and len(index.rows.made) < 10  # most written rows now live in the base
    index.put(written[10:])
    index.replace_record(replace(written[2].record, tags=("new",)))
    index.remove([written[4].record.id])
    index.put([row(40, "after a removal", source="s", minute=40) for _ in range(1)])

    for n, expected in enumerate(written):
        got = index.get(expected.record.id)
        if n == 4:
            assert got is None
            continue
        record = replace(expected.record, tags=("new",)) if n == 2 else expected.record
        assert got is not None and (got.record, got.hash, got.terms) == (record, expected.hash, expected.terms)
        assert (got.vector == expected.vector).all()
    tagged = {index.ids[p] for p in np.flatnonzero(index.mask(Scope(tags=("a",))))}
    assert tagged == {r.record.id for n, r in enumerate(written) if n % 3 == 0 and n != 4}
    assert [r.record.id for r in index.live_rows()][:3] == [written[0].record.id, written[1].record.id, rid(2)]


def test_a_removed_row_among_those_written_keeps_them_from_the_base_until_a_repack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rows_module, "FOLD_FROM", 4)
    index = WarmIndex(DIM)
    index.put([row(1, "one"), row(2, "two")])
    index.remove([rid(1)])
    index.put([row(n, f"w{n}") for n in range(3, 12)])
    assert index.rows.size == 0 and len(index.rows.made) == 10  # position 0 is gone: nothing folded
    assert index.get(rid(7)) is not None and index.get(rid(1)) is None
