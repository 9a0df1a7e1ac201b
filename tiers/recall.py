"""Recall: fuse vector and full-text hits, then pack the best into the model's token budget.

The text built here is exactly what the model reads, so the budget is checked on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

from tiers.hot import Entry
from tiers.records import Record, Tier, tokens_of
from tiers.store import Hit

RRF_K = 60
TRAILER_RESERVE = 50  # characters kept free for the "left out" line


@dataclass(frozen=True)
class RecallSettings:
    """The recall techniques, each one switchable for measuring what it adds."""

    text_weight: float = 1.0

    def without(self, *names: str) -> RecallSettings:
        """These settings with the named techniques switched off."""
        off: dict[str, object] = {}
        for name in names:
            current = getattr(self, name)
            off[name] = 0.0 if isinstance(current, float) else False
        return replace(self, **off)

    def describe(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


@dataclass(frozen=True)
class Ranked:
    """A candidate after fusion: its record, fused score and best cosine similarity."""

    record: Record
    score: float
    similarity: float


@dataclass
class Packed:
    """What recall returns: the hits that fit, the matching profile entries, and the text the model reads."""

    hits: list[Ranked] = field(default_factory=list)
    profile: dict[str, Entry] = field(default_factory=dict)
    left_out: int = 0
    text: str = ""

    @property
    def tokens(self) -> int:
        return tokens_of(self.text)


def fuse(vector_hits: Sequence[Hit], text_hits: Sequence[Hit], text_weight: float = 1.0) -> list[Ranked]:
    """Reciprocal-rank fusion of the two lists; the score is scaled so a top hit in both scores 1."""
    scores: dict[str, float] = {}
    records: dict[str, Record] = {}
    similarity: dict[str, float] = {}
    for rank, hit in enumerate(vector_hits):
        scores[hit.record.id] = scores.get(hit.record.id, 0.0) + 1.0 / (RRF_K + rank + 1)
        records[hit.record.id] = hit.record
        similarity[hit.record.id] = hit.score
    for rank, hit in enumerate(text_hits):
        scores[hit.record.id] = scores.get(hit.record.id, 0.0) + text_weight / (RRF_K + rank + 1)
        records.setdefault(hit.record.id, hit.record)
    top = (1.0 + text_weight) / (RRF_K + 1)
    ranked = [Ranked(records[rid], score / top, similarity.get(rid, 0.0)) for rid, score in scores.items()]
    ranked.sort(key=lambda r: (-r.score, r.record.id))
    return ranked


def prefer_warm(ranked: list[Ranked], limit: int, good: float) -> list[Ranked]:
    """Default tiers: cold hits join only when warm has fewer than `limit` good hits."""
    good_warm = [r for r in ranked if r.record.tier is Tier.WARM and r.similarity >= good]
    if len(good_warm) >= limit:
        return [r for r in ranked if r.record.tier is not Tier.COLD]
    return ranked


def render_hit(hit: Ranked) -> str:
    """One compact line: id, date, tier when not warm, content, tags, and what superseded it."""
    record = hit.record
    head = f"[{record.id} {record.occurred_at.date().isoformat()}"
    if record.tier is not Tier.WARM:
        head += f" {record.tier.value}"
    line = f"{head}] {' '.join(record.content.split())}"
    if record.tags:
        line += " #" + " #".join(record.tags)
    if record.superseded_by:
        when = record.superseded_at.date().isoformat() if record.superseded_at else "?"
        line += f" (superseded by {record.superseded_by} on {when})"
    return line


def render_profile(entries: dict[str, Entry]) -> str:
    return "profile: " + "; ".join(f"{key}={entry.value}" for key, entry in sorted(entries.items()))


def pack(ranked: Sequence[Ranked], profile: dict[str, Entry], limit: int, max_tokens: int | None) -> Packed:
    """Take hits in rank order while they fit `max_tokens` (at 4 characters a token) and `limit`."""
    budget = None if max_tokens is None else max_tokens * 4
    lines: list[str] = []
    used = 0
    chosen_profile: dict[str, Entry] = {}
    if profile:
        line = render_profile(profile)
        if budget is None or len(line) <= budget - TRAILER_RESERVE:
            lines.append(line)
            used = len(line)
            chosen_profile = profile
    packed = Packed(profile=chosen_profile)
    for hit in ranked[:limit]:
        line = render_hit(hit)
        cost = len(line) + (1 if lines else 0)
        if budget is not None and used + cost > budget - TRAILER_RESERVE:
            packed.left_out += 1
            continue
        lines.append(line)
        used += cost
        packed.hits.append(hit)
    if packed.left_out:
        lines.append(f"({packed.left_out} more left out by the {max_tokens}-token budget)")
    if not lines:
        lines.append("no memories match")
    packed.text = "\n".join(lines)
    return packed
