"""Recall's packing: the text the model reads never passes the token budget, whatever the hits' lengths."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tiers.hot import Entry
from tiers.recall import Ranked, fuse, pack, prefer_warm
from tiers.records import Kind, Record, Tier
from tiers.store import Hit

T = datetime(2026, 3, 1, tzinfo=UTC)


def ranked(content: str, number: int = 0, tier: Tier = Tier.WARM, similarity: float = 0.9) -> Ranked:
    record = Record(f"{number:012x}", content, tier, Kind.NOTE, False, T, T)
    return Ranked(record, 1.0, similarity)


@pytest.mark.parametrize("max_tokens", [32, 33, 40, 57, 100, 1_000])
@pytest.mark.parametrize("with_profile", [False, True])
def test_packed_text_never_passes_the_budget_for_any_mix_of_line_lengths(max_tokens: int, with_profile: bool) -> None:
    profile = {"name": Entry("Ana", T), "diet": Entry("vegetarian", T)} if with_profile else {}
    for count in (1, 2, 3, 12, 150):
        for length in range(1, 200, 3):
            hits = [ranked("x" * length, i) for i in range(count)]

            packed = pack(hits, profile, 200, max_tokens)

            assert len(packed.text) <= max_tokens * 4, (count, length, packed.text)
            assert len(packed.hits) + packed.left_out == count
            if packed.left_out:
                assert packed.text.endswith(f"({packed.left_out} more left out by the {max_tokens}-token budget)")


def test_without_a_budget_pack_takes_hits_up_to_the_limit() -> None:
    hits = [ranked(f"memory {i}", i) for i in range(5)]

    packed = pack(hits, {}, 3, None)

    assert [h.record.content for h in packed.hits] == ["memory 0", "memory 1", "memory 2"]
    assert packed.left_out == 0
    assert packed.text == "\n".join(f"[{i:012x} 2026-03-01] memory {i}" for i in range(3))


def test_an_empty_result_says_no_memories_match() -> None:
    assert pack([], {}, 10, 100).text == "no memories match"


def test_fusion_puts_a_record_found_by_both_searches_first_with_score_one() -> None:
    both, vector_only, text_only = ranked("both", 1).record, ranked("v", 2).record, ranked("t", 3).record

    fused = fuse([Hit(both, 0.8), Hit(vector_only, 0.7)], [Hit(both, 9.0), Hit(text_only, 5.0)])

    assert fused[0].record.id == both.id
    assert fused[0].score == pytest.approx(1.0)
    assert {r.record.id: r.similarity for r in fused}[text_only.id] == 0.0


def test_cold_hits_join_only_when_warm_has_too_few_good_ones() -> None:
    warm = [ranked(f"w{i}", i, similarity=0.9) for i in range(3)]
    cold = [ranked("c", 9, Tier.COLD, similarity=0.95)]

    assert [r.record.content for r in prefer_warm(warm + cold, 3, 0.45)] == ["w0", "w1", "w2"]
    assert [r.record.content for r in prefer_warm(warm + cold, 4, 0.45)] == ["w0", "w1", "w2", "c"]
