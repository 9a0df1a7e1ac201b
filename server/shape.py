"""How answers read: compact text for the model, full structured data beside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server import hooks
from tiers.namespace.outcomes import Forgotten, Promoted, Stored
from tiers.recall.rank import Packed, Ranked
from tiers.records import tokens_of
from tiers.scopes.recall import Recalled
from tiers.scopes.routing import Scope
from tiers.scopes.scoped import Placed, Profiles
from tiers.storage.hot import Entry, render
from tiers.text.timeparse import iso


def stored_data(s: Stored) -> dict[str, Any]:
    data: dict[str, Any] = {"id": s.id, "tier": s.tier.value, "kind": s.kind.value, "protected": s.protected}
    for name in ("duplicate_of", "profile_key", "note"):
        if getattr(s, name):
            data[name] = getattr(s, name)
    if s.supersedes:
        data["supersedes"] = list(s.supersedes)
    if s.may_update:
        data["may_update"] = [
            {"id": e.id, "occurred_at": iso(e.occurred_at), "content": e.content} for e in s.may_update
        ]
    return data


def stored_text(stored: Sequence[Stored]) -> str:
    lines = []
    for s in stored:
        line = f"{s.id} {s.tier.value} {s.kind.value}" + (" protected" if s.protected else "")
        if s.duplicate_of:
            line += " (duplicate: refreshed the stored memory)"
        if s.profile_key:
            line += f" (profile key {s.profile_key})"
        if s.note:
            line += f" ({s.note})"
        if s.supersedes:
            line += f" (replaces {', '.join(s.supersedes)}, kept as history)"
        lines.append(line)
        for e in s.may_update:
            said = " ".join(e.content.split())
            said = said if len(said) <= 160 else said[:157] + "..."
            lines.append(f"  may update {e.id} of {e.occurred_at.date().isoformat()}: {said}")
        if s.may_update:
            lines.append("  (if it does, remember this again with supersedes=[id]; the earlier one is kept as history)")
    return "\n".join(lines)


def placed_data(placed: Placed) -> dict[str, Any]:
    return stored_data(placed.stored) | {"scope": placed.scope.value}


def placed_text(placed: Sequence[Placed]) -> str:
    """`stored_text`, each memory the user scope took said so on its first line."""
    lines: list[str] = []
    for p in placed:
        text = stored_text([p.stored])
        if p.scope is Scope.USER:
            first, _, rest = text.partition("\n")
            text = first + " (user scope: every project reads it)" + (f"\n{rest}" if rest else "")
        lines.append(text)
    return "\n".join(lines)


def recalled_data(recalled: Recalled) -> dict[str, Any]:
    """Recall's data across scopes: each hit with its scope; the project's profile entries shown, and the user's."""
    data = {
        "memories": [_hit_data(hit.ranked) | {"scope": hit.scope.value} for hit in recalled.hits],
        "profile": {key: e.value for key, e in recalled.profile.get(Scope.PROJECT, {}).items()},
        "left_out": recalled.left_out,
        "tokens": recalled.tokens,
    }
    if recalled.profile.get(Scope.USER):
        data["user_profile"] = {key: e.value for key, e in recalled.profile[Scope.USER].items()}
    return data


def profiles_text(profiles: Profiles, namespace: str | None = None) -> str:
    """Both profiles as the model reads them: under a header each when the user's holds entries (the project's
    naming its namespace), else the project's alone as it always read."""
    return hooks.profile_text(
        profiles.entries.get(Scope.USER) or {}, profiles.entries.get(Scope.PROJECT) or {}, namespace
    )


def profiles_view(
    profiles: Profiles, flags: dict[str, dict[str, Any]] | None = None, namespace: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The `profile` tool's answer over both scopes: each entry with its scope, the tokens both use of the cap."""
    body = profiles_text(profiles, namespace)
    text = (body or "(the profile is empty)") + f"\n({profiles.tokens}/{profiles.cap_tokens} tokens)"
    flags = flags or {}
    text += _flags_text(flags)
    if profiles.candidates:
        text += "\ncandidates for the profile (promote with a key): " + ", ".join(
            c["id"]
            + (f" as {c['key']}" if c.get("key") else "")
            + (" (user scope)" if c.get("scope") == "user" else "")
            for c in profiles.candidates
        )
    entries: dict[str, Any] = {}
    for scope in (Scope.USER, Scope.PROJECT):  # a key in both: the project's, which this project reads last
        for key, e in sorted(profiles.entries.get(scope, {}).items()):
            entries[key] = entry_data(e) | {"scope": scope.value}
    data = {
        "entries": dict(sorted(entries.items())),
        "tokens": profiles.tokens,
        "cap_tokens": profiles.cap_tokens,
        "candidates": list(profiles.candidates),
        "flagged": flags,
    }
    if namespace:
        data["namespace"] = namespace
    if profiles.moved:
        data["moved"] = list(profiles.moved)
    return text, data


def _flags_text(flags: dict[str, dict[str, Any]]) -> str:
    text = ""
    for key, flag in sorted(flags.items()):
        text += f"\n{key} may be out of date: {flag['by']} says {flag['said']!r}"
    if flags:
        text += "\n(confirm with profile set {key: new value}, the old kept as history; or profile dismiss [key])"
    return text


def recall_data(packed: Packed) -> dict[str, Any]:
    return {
        "memories": [_hit_data(h) for h in packed.hits],
        "profile": {key: entry.value for key, entry in packed.profile.items()},
        "left_out": packed.left_out,
        "tokens": packed.tokens,
    }


def _hit_data(hit: Ranked) -> dict[str, Any]:
    """A hit as data; a long memory shown by an excerpt gives the excerpt as its content, and where it lies."""
    record, cut = hit.record, hit.excerpt
    data = {
        "id": record.id,
        "tier": record.tier.value,
        "content": record.content if cut is None else cut.text,
        "score": round(hit.score, 4),
        "occurred_at": iso(record.occurred_at),
        "tags": list(record.tags),
        "metadata": record.metadata,
        "source": record.source,
        "superseded_by": record.superseded_by,
    }
    if hit.later is not None:
        data["later"] = {"id": hit.later.id, "occurred_at": iso(hit.later.occurred_at)}
    if cut is not None:
        data["excerpt"] = {
            "first_word": cut.first,
            "last_word": cut.last,
            "words": cut.words,
            "whole_tokens": cut.whole_tokens,
        }
    return data


def entry_data(entry: Entry) -> dict[str, Any]:
    return {
        "value": entry.value,
        "updated_at": iso(entry.updated_at),
        "pinned": entry.pinned,
        "sources": list(entry.sources),
    }


def profile_view(
    entries: dict[str, Entry],
    cap: int,
    candidates: Sequence[dict[str, Any]],
    flags: dict[str, dict[str, Any]] | None = None,
) -> tuple[str, dict[str, Any]]:
    body = render(entries)
    tokens = tokens_of(body)
    text = (body or "(the profile is empty)") + f"\n({tokens}/{cap} tokens)"
    flags = flags or {}
    text += _flags_text(flags)
    if candidates:
        text += "\ncandidates for the profile (promote with a key): " + ", ".join(
            c["id"] + (f" as {c['key']}" if c.get("key") else "") for c in candidates
        )
    data = {
        "entries": {key: entry_data(e) for key, e in sorted(entries.items())},
        "tokens": tokens,
        "cap_tokens": cap,
        "candidates": list(candidates),
        "flagged": flags,
    }
    return text, data


def promoted_text(p: Promoted) -> str:
    where = f"hot as {p.key!r}" if p.key else p.tier.value
    if p.outcome == "promoted":
        return f"{p.id} promoted to {where}"
    return f"{p.id} is already {where}: nothing to do"


def forgotten_text(f: Forgotten) -> str:
    text = f"{f.id} forgotten (was {f.tier.value})"
    if f.orphaned_profile_keys:
        text += "; profile entries now without a source: " + ", ".join(f.orphaned_profile_keys)
    return text
