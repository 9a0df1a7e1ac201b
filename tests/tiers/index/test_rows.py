"""The warm rows: a written row is kept without its vector (the index holds it once), loaded rows are made only
when asked for, and a tag scope reads the loaded rows' tags in bulk."""

from __future__ import annotations

from dataclasses import replace

from tests.tiers.index.test_warm import DIM, row
from tiers.index.columns import rows_table as _table
from tiers.index.rows import Rows
from tiers.index.warm import WarmIndex


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
