"""Editing the hot profile: set, unset, pin, unpin; a replaced or removed value goes down to warm as a
history record with its sources, and the records that stated an older value are marked superseded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from tiers.errors import NotFound
from tiers.lifecycle import projects
from tiers.lifecycle.rules import hot_rid
from tiers.namespace.outcomes import ProfileChange
from tiers.namespace.parts import Parts
from tiers.namespace.writes import Origin, Writer, prepare
from tiers.records import Kind, MemoryIn, Tier
from tiers.storage.hot import Entry, check_key, with_value
from tiers.storage.ledger import Move


@dataclass(frozen=True)
class Edit:
    """One change of the profile, and for the move log where its values come from."""

    values: dict[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    pin: tuple[str, ...] = ()
    unpin: tuple[str, ...] = ()
    sources: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the records each value came from
    rule: str = "profile"
    src: Tier = Tier.WARM  # the tier of the record a value came from
    heat: float | None = None  # that record's heat when it was promoted
    unset_rule: str = "unset"  # the rule logged for the values `unset` sends down to warm


class ProfileEditor:
    """Changes the hot profile of one namespace, never losing a value."""

    def __init__(self, parts: Parts, writer: Writer) -> None:
        self.parts = parts
        self.writer = writer
        # Told when `current_project` takes a new value, after the change is written (tiers/lifecycle/projects.py).
        self.on_new_project: Callable[[str, datetime], object] | None = None

    def apply(self, edit: Edit, now: datetime) -> ProfileChange:
        """Change the profile; a replaced or removed value goes down to warm as a record, never lost."""
        hot = self.parts.hot
        moves: list[Move] = []
        changed: list[str] = []
        with hot.editing() as entries:
            before = dict(entries)
            for key in [*edit.unset, *edit.pin, *edit.unpin]:
                if key not in entries and key not in edit.values:
                    raise NotFound(f"no profile entry {key!r}; entries are: {', '.join(sorted(entries)) or 'none'}")
            old: list[tuple[str, Entry, str]] = []
            for key, value in edit.values.items():
                check_key(key)
                prior = entries.get(key)
                given = edit.sources.get(key, ())
                entries[key] = with_value(prior, value, now, given)
                if prior is not None and prior.value != value:
                    old.append((key, prior, "superseded"))
                if prior is None or prior.value != value:
                    changed.append(key)
                if prior is None or prior.value != value or not set(given) <= set(prior.sources):
                    who = given[0] if given else hot_rid(key)
                    src = edit.src.value if given else "new"
                    moves.append(Move(now, who, src, "hot", edit.rule, edit.heat, key, value[:200]))
            for key in edit.unset:
                old.append((key, entries.pop(key), edit.unset_rule))
            for key in edit.pin:
                entries[key] = replace(entries[key], pinned=True)
            for key in edit.unpin:
                entries[key] = replace(entries[key], pinned=False)
            hot.check_cap(before, entries)
            # The old values are written to warm before the new profile is: a crash in between loses nothing.
            demoted = self.demote(old, now)
            after = dict(entries)
        for key, value in edit.values.items():
            self._mark_superseded(key, value, edit.sources.get(key, ()), now, key in changed)
        self.parts.ledger.log(moves)
        self.parts.flags.drop([*edit.values, *edit.unset])  # the entry said anew (or removed): its flag is answered
        self.parts.ledger.touch([hot_rid(k) for k in edit.values], now)
        if projects.CURRENT in changed and self.on_new_project is not None:
            self.on_new_project(edit.values[projects.CURRENT], now)
            after = hot.entries()
        return ProfileChange(after, hot.tokens(after), hot.cap_tokens, demoted, self.parts.candidates.listed())

    def _mark_superseded(self, key: str, value: str, given: Sequence[str], now: datetime, changed: bool) -> None:
        """Records that stated another value of `key` are superseded by this one; those stating it are current."""
        ledger, store = self.parts.ledger, self.parts.store
        linked = ledger.linked(key)
        ledger.link(key, [(rid, value) for rid in given])
        if not changed:
            return
        with self.parts.locked():
            records = store.get(list(dict.fromkeys([*linked, *given])))
            stale = [r for rid, v in linked.items() if (r := records.get(rid)) and rid not in given and v != value]
            stale = [r for r in stale if not r.superseded_by]
            current = [
                r for rid, r in records.items() if (rid in given or linked.get(rid) == value) and r.superseded_by
            ]
            if stale:
                by = given[0] if given else f"profile:{key}"
                store.update(stale, {"superseded_by": by, "superseded_at": now})
            if current:
                store.update(current, {"superseded_by": None, "superseded_at": None})

    def demote(
        self, old: list[tuple[str, Entry, str]], now: datetime, heats: dict[str, float] | None = None
    ) -> tuple[str, ...]:
        """Write replaced, removed or idle profile values down to warm, with their sources and when they were set."""
        if not old:
            return ()
        items = [
            MemoryIn(
                content=f"{key}: {entry.value}",
                metadata={
                    "profile_key": key,
                    "sources": " ".join(entry.sources),
                    "was_set_at": entry.updated_at.isoformat(),
                },
                occurred_at=entry.updated_at.isoformat(),
                kind=Kind.HISTORY,
            )
            for key, entry, _ in old
        ]
        origins = [
            # A value demoted for being idle, or for its project not being current, is still the user's current
            # one: it stays protected from going cold.
            Origin("hot", why, key, (heats or {}).get(key), protected=why in ("hot_idle", projects.AWAY))
            for key, _, why in old
        ]
        prepared = [prepare(item, now, self.parts.new_id()) for item in items]
        stored = self.writer.write(prepared, now, origins)
        for (key, entry, _), result in zip(old, stored, strict=True):
            self.parts.ledger.link(key, [(result.id, entry.value)])
        return tuple(r.id for r in stored)
