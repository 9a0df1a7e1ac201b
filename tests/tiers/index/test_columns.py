"""Rows as the tier tables store them: a table made from rows reads back as the same rows, pieces are null
where a row has none, and field values are stored as the table holds them."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np

from tests.helpers import T0
from tests.tiers.index.test_warm import DIM, row
from tiers.index.columns import pieces_column, rows_table, stored_values
from tiers.index.rows import rows_of
from tiers.records import Kind


def test_a_table_made_from_rows_reads_back_as_the_same_rows_with_their_vectors_and_pieces() -> None:
    long = replace(row(2, "a long memory", tags=("x",)), pieces=np.full((2, DIM), 0.5, np.float32))
    written = [row(1, "short one"), long]
    back = rows_of(rows_table(written, DIM))
    assert [(r.record, r.hash, r.terms) for r in back] == [(r.record, r.hash, r.terms) for r in written]
    np.testing.assert_array_equal(np.stack([r.vector for r in back]), np.stack([r.vector for r in written]))
    assert back[0].pieces is None and back[1].pieces is not None
    np.testing.assert_array_equal(back[1].pieces, long.pieces)
    assert pieces_column([None, None], DIM).null_count == 2


def test_field_values_are_stored_as_the_table_holds_them() -> None:
    values = {"metadata": {"a": "é"}, "tags": ("t",), "kind": Kind.HEALTH, "forget_after": T0 + timedelta(days=1)}
    stored = stored_values(values)
    assert stored["metadata"] == '{"a": "é"}' and stored["tags"] == ["t"] and stored["kind"] == "health"
    assert stored["forget_after"].utcoffset() == timedelta(0)
