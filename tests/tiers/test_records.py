"""The vocabulary: content hashes fold case and spacing, token counts, and what `remember` accepts."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tiers.records import Kind, MemoryIn, content_hash, tokens_of


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
