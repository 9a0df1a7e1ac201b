"""The vocabulary: content hashes fold case and spacing, token counts, and what `remember` accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pyarrow as pa
import pytest
from pydantic import ValidationError

from tiers.records import Kind, MemoryIn, Tier, content_hash, record_from_dict, records_of, tokens_of
from tiers.storage.tables import schema


def test_content_hash_folds_case_and_every_kind_of_spacing() -> None:
    same = ["I am allergic to peanuts", "  i AM allergic\tto\n\npeanuts  ", "I  am  allergic  to  peanuts"]

    assert len({content_hash(text) for text in same}) == 1


def test_content_hash_keeps_words_and_punctuation_apart() -> None:
    different = ["I am allergic to peanuts", "I am allergic to peanuts.", "I am allergic to pecans", "Iam allergic"]

    assert len({content_hash(text) for text in different}) == len(different)
    assert len(content_hash("anything")) == 32


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("abc", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100)])
def test_tokens_are_counted_at_four_characters_rounded_up(text: str, tokens: int) -> None:
    assert tokens_of(text) == tokens


def test_a_full_memory_is_accepted_as_given() -> None:
    memory = MemoryIn(
        content="Deploy freeze",
        tags=["ops"],
        metadata={"n": 1, "ok": True, "ratio": 0.5, "who": "ana"},
        source="https://example.org",
        occurred_at="2026-11-30T10:00:00Z",
        forget_after="P30D",
        kind=Kind.CONSTRAINT,
        key="ops.freeze",
    )

    assert memory.kind == "constraint"
    assert memory.metadata == {"n": 1, "ok": True, "ratio": 0.5, "who": "ana"}


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"content": ""}, "at least 1 character"),
        ({"content": "   "}, "content is blank"),
        ({"content": "x" * 8_001}, "at most 8000 characters"),
        ({"content": "ok", "tags": [""]}, "at least 1 character"),
        ({"content": "ok", "tags": [f"t{i}" for i in range(33)]}, "at most 32 items"),
        ({"content": "ok", "metadata": {"nested": {"a": 1}}}, "metadata.nested"),
        ({"content": "ok", "metadata": {f"k{i}": i for i in range(33)}}, "at most 32"),
        ({"content": "ok", "metadata": {"long": "x" * 1_001}}, "over 1,000 characters"),
        ({"content": "ok", "occurred_at": "noon"}, "occurred_at 'noon' is not an ISO 8601 time"),
        ({"content": "ok", "forget_after": "P1Q"}, "not an ISO 8601 duration"),
        ({"content": "ok", "forget_after": "later"}, "forget_after 'later' is not an ISO 8601 time"),
        ({"content": "ok", "key": "has space"}, "should match pattern"),
        ({"content": "ok", "kind": "gossip"}, "kind"),
        ({"content": "ok", "colour": "red"}, "Extra inputs are not permitted"),
    ],
)
def test_a_memory_with_a_bad_field_is_refused_saying_which(fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        MemoryIn(**fields)


def test_records_made_a_column_at_a_time_are_those_made_row_by_row() -> None:
    """Every field, with nulls, empty and full metadata, an aware and a naive time (naive is UTC)."""
    when = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
    rows = [
        {"id": "00000000000a", "content": "plain", "tier": "warm", "kind": "note", "protected": False,
         "tags": None, "metadata": None, "source": None, "occurred_at": when, "created_at": when,
         "forget_after": None, "superseded_by": None, "superseded_at": None},
        {"id": "00000000000b", "content": "full", "tier": "cold", "kind": "preference", "protected": True,
         "tags": ["a", "b"], "metadata": '{"k": [1, "x"]}', "source": "import",
         "occurred_at": when - timedelta(days=400),
         "created_at": when.astimezone(timezone(timedelta(hours=-5))), "forget_after": when + timedelta(days=1),
         "superseded_by": "00000000000c", "superseded_at": when + timedelta(seconds=1)},
        {"id": "00000000000c", "content": "", "tier": "warm", "kind": "task", "protected": False,
         "tags": [], "metadata": "{}", "source": "", "occurred_at": datetime(1960, 1, 1), "created_at": when,
         "forget_after": None, "superseded_by": None, "superseded_at": None},
    ]  # fmt: skip
    fields = [f for f in schema(4) if f.name in rows[0]]
    table = pa.Table.from_pylist(rows, pa.schema(fields))
    naive = table.set_column(
        table.schema.get_field_index("occurred_at"), "occurred_at", table["occurred_at"].cast(pa.timestamp("us"))
    )

    expected = [record_from_dict(r) for r in table.to_pylist()]
    assert records_of(table) == expected
    assert records_of(naive) == expected
    assert {t.tzinfo for r in records_of(naive) for t in (r.occurred_at, r.created_at)} == {UTC}
    assert records_of(table.to_batches()[0], ["00000000000f"] * 3, Tier.COLD) == [
        record_from_dict(r | {"id": "00000000000f", "tier": "cold"}) for r in table.to_pylist()
    ]
