"""Recall across the two scopes: each scope ranked and packed as it would be alone, then the two answers merged
into one, within the same limit and token budget, each hit and profile line under the scope it came from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tiers.recall.rank import (
    DURABLE_WITHIN,
    Packed,
    Ranked,
    about_user,
    grouped_lines,
    left_out_line,
    render_hit,
    render_profile,
)
from tiers.recall.updates import asks_past
from tiers.records import tokens_of
from tiers.scopes.routing import Scope
from tiers.storage.hot import Entry

HEADERS = {Scope.PROJECT: "project scope:", Scope.USER: "user scope (shared by every project):"}


@dataclass(frozen=True)
class Hit:
    """A recalled memory and the scope it came from."""

    scope: Scope
    ranked: Ranked


@dataclass
class Recalled:
    """What recall across scopes returns: the hits that fit, the profile entries shown, and the text the model reads."""

    hits: list[Hit] = field(default_factory=list)
    profile: dict[Scope, dict[str, Entry]] = field(default_factory=dict)
    left_out: int = 0
    text: str = ""

    @property
    def tokens(self) -> int:
        return tokens_of(self.text)


def alone(packed: Packed) -> Recalled:
    """One scope's answer, as it reads without the other (the text unchanged)."""
    hits = [Hit(Scope.PROJECT, hit) for hit in packed.hits]
    return Recalled(hits, {Scope.PROJECT: packed.profile} if packed.profile else {}, packed.left_out, packed.text)


def in_order(
    project: Sequence[Ranked], user: Sequence[Ranked], query: str = "", limit: int = 10, durable: int = 0
) -> list[Hit]:
    """Both scopes' hits in one order: each scope's own kept, and at each step the head nearer the query in meaning
    first (the two fused scores come from different pools and do not compare; cosines from one model do).

    For a query about the person, the user scope's best `durable` hits keep a place among the first DURABLE_WITHIN,
    at most half of them, as the person's durable facts do within one namespace (tiers/recall/rank.py): they are
    asked about in other words than they were said in, and a project's notes can be nearer in meaning."""
    order = _by_meaning([Hit(Scope.PROJECT, h) for h in project], [Hit(Scope.USER, h) for h in _small(user, query)])
    if not durable or not about_user(query):
        return order
    within = min(limit, DURABLE_WITHIN)
    shown = {id(hit.ranked) for hit in order[:within]}
    extra = [hit for hit in order if hit.scope is Scope.USER][: min(durable, within // 2)]
    extra = [hit for hit in extra if id(hit.ranked) not in shown]
    if not extra:
        return order
    kept = order[: within - len(extra)]
    placed = {id(hit.ranked) for hit in extra}
    rest = [hit for hit in order[len(kept) :] if id(hit.ranked) not in placed]
    return _by_meaning(kept, extra) + rest


def _small(hits: Sequence[Ranked], query: str) -> list[Ranked]:
    """The user scope's hits by meaning alone, each older one a later one may replace just after it (unless the query
    asks about the past, when the older may be the answer).

    The user scope holds a few short statements: ranked in a pool of a few rows, its fusion of ranks and word scores
    says little (the rank of a word among five rows), where each one's cosine to the query says what it means."""
    ordered = sorted(hits, key=lambda h: -h.similarity)
    if asks_past(query):
        return ordered
    out: list[Ranked] = []
    waiting: dict[str, list[Ranked]] = {}
    shown = {h.record.id for h in ordered}
    for hit in ordered:
        later = hit.later.id if hit.later is not None else None
        if later is not None and later in shown and later not in {h.record.id for h in out}:
            waiting.setdefault(later, []).append(hit)
            continue
        out.append(hit)
        out += waiting.pop(hit.record.id, [])
    return out + [h for held in waiting.values() for h in held]


def _by_meaning(first: Sequence[Hit], second: Sequence[Hit]) -> list[Hit]:
    """Two ordered lists as one, each kept in its order, the head more similar to the query taken at each step."""
    out: list[Hit] = []
    i = j = 0
    while i < len(first) or j < len(second):
        if j >= len(second) or (i < len(first) and first[i].ranked.similarity >= second[j].ranked.similarity):
            out.append(first[i])
            i += 1
        else:
            out.append(second[j])
            j += 1
    return out


def merge(
    project: Packed,
    user: Packed,
    limit: int,
    max_tokens: int | None,
    grouped: bool,
    query: str = "",
    durable: int = 0,
) -> Recalled:
    """The two scopes' answers as one: hits taken in `in_order` while they fit the limit and the budget (at 4
    characters a token, as `pack` counts), the user's profile line shown when it fits beside the project's.

    Each scope counted the uses of what it packed, as it does alone: a project's memories heat as they always did."""
    if not user.hits and not user.profile:
        return alone(project)
    reserve = len(left_out_line(limit + project.left_out + user.left_out, max_tokens)) + 1
    budget = None if max_tokens is None else max_tokens * 4 - reserve
    profile = {scope: p for scope, p in ((Scope.PROJECT, project.profile), (Scope.USER, user.profile)) if p}
    if budget is not None and len(render(profile, [], grouped)) > budget:
        profile.pop(Scope.USER, None)
    chosen: list[Hit] = []
    left_out = project.left_out + user.left_out
    for hit in in_order(project.hits, user.hits, query, limit, durable)[:limit]:
        if budget is not None and len(render(profile, [*chosen, hit], grouped)) > budget:
            left_out += 1
            continue
        chosen.append(hit)
    text = render(profile, chosen, grouped)
    if left_out:
        text = f"{text}\n{left_out_line(left_out, max_tokens)}" if text else left_out_line(left_out, max_tokens)
    return Recalled(chosen, profile, left_out, text or "no memories match")


def render(profile: dict[Scope, dict[str, Entry]], hits: Sequence[Hit], grouped: bool) -> str:
    """The text of an answer: each scope's profile line and hits under its header (none when only the project's)."""
    sections: list[tuple[Scope, list[str]]] = []
    for scope in Scope:
        lines = [render_profile(profile[scope])] if profile.get(scope) else []
        mine = [hit.ranked for hit in hits if hit.scope is scope]
        lines += grouped_lines(mine) if grouped else [render_hit(hit) for hit in mine]
        if lines:
            sections.append((scope, lines))
    headed = any(scope is Scope.USER for scope, _ in sections)
    return "\n".join(line for scope, lines in sections for line in ([HEADERS[scope]] if headed else []) + lines)
