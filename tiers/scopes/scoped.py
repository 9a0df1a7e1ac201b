"""A project's memory with the user's beside it: writes go to the scope they belong to, reads take both.

The user scope is a namespace of the same data folder that every project reads; a memory about the person is said
once there, and a project's own stays in the project. Which scope a write goes to: the one it names, else the one
already holding what it changes (a profile key, the memories it supersedes), else `routing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tiers.errors import InvalidInput, NotFound
from tiers.memory import Memory
from tiers.namespace.outcomes import Forgotten, ProfileChange, Promoted, Stored, Undone
from tiers.recall.updates import said_by_me
from tiers.records import MemoryIn, Tier
from tiers.scopes import recall as across
from tiers.scopes.routing import Scope, of_a_project, of_key, of_memory
from tiers.storage.hot import Entry


@dataclass(frozen=True)
class Placed:
    """What `remember` did with one memory, and the scope it went to."""

    scope: Scope
    stored: Stored


@dataclass(frozen=True)
class Profiles:
    """Both profiles after a read or a change: entries, tokens and cap shared by both, and what a change sent down."""

    entries: dict[Scope, dict[str, Entry]]
    tokens: int
    cap_tokens: int
    demoted: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()  # keys an explicit scope moved from the other profile
    candidates: tuple[dict[str, Any], ...] = field(default_factory=tuple)


class Scoped:
    """The memory a session works in: its project's, and the user scope's beside it (None: no user scope here)."""

    def __init__(self, project: Memory, user: Memory | None = None) -> None:
        self.project = project
        self.user = user if user is not project else None
        if self.user is not None:
            # What the model carries every turn is both profiles: a project's entries are capped with the user's.
            project.hot.beside = self.user.hot

    def memory(self, scope: Scope) -> Memory:
        if scope is Scope.USER:
            if self.user is None:
                raise InvalidInput("there is no user scope here (MEMTIERS_USER_SCOPE=off, or this is it)")
            return self.user
        return self.project

    def scopes(self) -> list[tuple[Scope, Memory]]:
        return [(Scope.PROJECT, self.project)] + ([(Scope.USER, self.user)] if self.user is not None else [])

    # writes

    def remember(self, items: Sequence[MemoryIn], now: datetime, scope: Scope | None = None) -> list[Placed]:
        """Store memories, each in its scope (`scope`, when given, for all), in one batch per scope."""
        chosen = [self.scope_of(item, scope) for item in items]
        if scope is None and self.user is not None:
            chosen = self._beside_what_they_update(items, chosen, now)
        placed: dict[int, Placed] = {}
        for where, memory in self.scopes():
            mine = [i for i, s in enumerate(chosen) if s is where]
            if mine:
                for i, stored in zip(mine, memory.remember([items[i] for i in mine], now), strict=True):
                    placed[i] = Placed(where, stored)
        return [placed[i] for i in range(len(items))]

    def _beside_what_they_update(self, items: Sequence[MemoryIn], chosen: list[Scope], now: datetime) -> list[Scope]:
        """A memory the rules leave in the project that may update one of the person's facts goes beside it, in the
        user scope ("I joined Initech this month" after "I work at Globex"): there recall shows it as the later
        word, and `remember` names the fact. One the agent keyed, that supersedes by id, or that says it is about a
        project (tiers/scopes/routing.py) stays where it was placed."""
        asked = [
            i
            for i, (item, where) in enumerate(zip(items, chosen, strict=True))
            if where is Scope.PROJECT
            and item.key is None
            and not item.supersedes
            and said_by_me(item.content)
            and not of_a_project(item.content)
        ]
        if not asked:
            return chosen
        held = self.memory(Scope.USER).updates_held([items[i] for i in asked], now)
        out = list(chosen)
        for i, beside in zip(asked, held, strict=True):
            if beside:
                out[i] = Scope.USER
        return out

    def scope_of(self, item: MemoryIn, scope: Scope | None = None) -> Scope:
        """The scope a memory goes to (see the module's docstring)."""
        if self.user is None:
            if scope is Scope.USER:
                self.memory(scope)  # says why there is none
            return Scope.PROJECT
        if scope is not None:
            return scope
        if item.key is not None and (keyed := self._holding_key(item.key)) is not None:
            return keyed
        held = {where for rid in item.supersedes if (where := self._holding(rid)) is not None}
        if len(held) == 1:  # where the memories it replaces are (ids held nowhere: the write path says so)
            return held.pop()
        return of_memory(item)

    def set_profile(
        self,
        values: dict[str, str],
        now: datetime,
        unset: Sequence[str] = (),
        pin: Sequence[str] = (),
        unpin: Sequence[str] = (),
        scope: Scope | None = None,
    ) -> Profiles:
        """Change both profiles: a key set goes to `scope`, else where it is, else where its name says (the project's
        when it does not say); a key an explicit scope takes from the other profile moves (its value kept there as
        history). `unset`, `pin` and `unpin` act where each key is."""
        changes: list[ProfileChange] = []
        moved: list[str] = []
        plan: dict[Scope, dict[str, Any]] = {s: {"values": {}, "unset": [], "pin": [], "unpin": []} for s in Scope}
        for key, value in values.items():
            held = self._holding_key(key)
            where = scope or held or (of_key(key) if self.user is not None else None) or Scope.PROJECT
            if self.user is None:
                where = Scope.PROJECT if scope is None else where
            plan[where]["values"][key] = value
            if held is not None and held is not where:
                plan[held]["unset"].append(key)
                moved.append(key)
        for name, keys in (("unset", unset), ("pin", pin), ("unpin", unpin)):
            for key in keys:
                held = self._holding_key(key)
                if held is None and key not in values:
                    raise NotFound(f"no profile entry {key!r}; entries are: {', '.join(self._all_keys()) or 'none'}")
                plan[held or self._scope_of_set(key, plan)][name].append(key)
        # Whatever leaves a profile first, so that what joins the other fits the cap both share.
        for where in sorted(plan, key=lambda s: not plan[s]["unset"]):
            edit = plan[where]
            if any(edit.values()):
                memory = self.memory(where)
                change = memory.set_profile(edit["values"], now, edit["unset"], edit["pin"], edit["unpin"])
                changes.append(change)
        return self.profiles(
            demoted=tuple(rid for change in changes for rid in change.demoted),
            moved=tuple(moved),
        )

    def _scope_of_set(self, key: str, plan: dict[Scope, dict[str, Any]]) -> Scope:
        return next(s for s in Scope if key in plan[s]["values"])

    def dismiss(self, keys: Sequence[str], now: datetime) -> list[str]:
        """Clear the flags of these entries, in whichever profile each is flagged."""
        done: list[str] = []
        for _, memory in self.scopes():
            flagged = [key for key in keys if key in memory.flags()]
            if flagged:
                done += memory.dismiss(flagged, now)
        unknown = [key for key in keys if key not in done]
        if unknown:
            raise NotFound(f"no flag on {', '.join(unknown)}; flagged entries are: {', '.join(self.flags()) or 'none'}")
        return done

    # reads

    def recall(
        self,
        query: str,
        now: datetime,
        limit: int = 10,
        max_tokens: int | None = None,
        tiers: Sequence[Tier] | None = None,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
        thorough: bool = False,
    ) -> across.Recalled:
        """Recall in both scopes, merged into one answer within `limit` and `max_tokens` (tiers/scopes/recall.py)."""
        args = (query, now, limit, max_tokens, tiers, tags, since, until, thorough)
        project = self.project.recall(*args)
        if self.user is None:
            return across.alone(project)
        user = self.user.recall(*args)
        settings = self.project.settings.recall
        return across.merge(project, user, limit, max_tokens, settings.grouped, query, settings.durable)

    def rank(self, query: str, limit: int, tiers: Sequence[Tier] | None = None) -> list[across.Hit]:
        """The best `limit` memories of both scopes for `query`, as recall orders them, counting no use."""
        project = self.project.rank(query, limit, tiers)
        user = self.user.rank(query, limit, tiers) if self.user is not None else []
        return across.in_order(project, user, query, limit, self.project.settings.recall.durable)[:limit]

    def profiles(self, demoted: tuple[str, ...] = (), moved: tuple[str, ...] = ()) -> Profiles:
        """Both profiles as the model carries them, with the tokens they use together of the cap they share."""
        entries = {scope: memory.profile() for scope, memory in self.scopes()}
        tokens = sum(memory.hot.tokens() for _, memory in self.scopes())
        candidates = tuple({**c, "scope": scope.value} for scope, memory in self.scopes() for c in memory.candidates())
        return Profiles(entries, tokens, self.project.hot.cap_tokens, demoted, moved, candidates)

    def flags(self) -> dict[str, dict[str, Any]]:
        """Profile entries a newer memory may update, by key, in both profiles."""
        out: dict[str, dict[str, Any]] = {}
        for scope, memory in reversed(self.scopes()):  # the project's, named the same, said last
            out.update({key: {**flag, "scope": scope.value} for key, flag in memory.flags().items()})
        return out

    def _holding_key(self, key: str) -> Scope | None:
        for scope, memory in self.scopes():
            if key in memory.profile():
                return scope
        return None

    def _all_keys(self) -> list[str]:
        return sorted({key for _, memory in self.scopes() for key in memory.profile()})

    # a record, wherever it is

    def _holding(self, rid: str) -> Scope | None:
        for scope, memory in self.scopes():
            try:
                memory.get(rid)
            except NotFound:
                continue
            return scope
        return None

    def locate(self, rid: str) -> Scope:
        """The scope holding memory `rid` (NotFound when neither does)."""
        found = self._holding(rid)
        if found is not None:
            return found
        where = "this project or the user scope" if self.user is not None else "this namespace"
        raise NotFound(f"no memory {rid!r} in {where} (it may have been forgotten)")

    def forget(self, rid: str, now: datetime) -> tuple[Scope, Forgotten]:
        scope = self.locate(rid)
        return scope, self.memory(scope).forget(rid, now)

    def promote(self, rid: str, now: datetime, to: Tier = Tier.HOT, key: str | None = None) -> tuple[Scope, Promoted]:
        """Promote a memory within its scope: to hot, into that scope's profile."""
        scope = self.locate(rid)
        return scope, self.memory(scope).promote(rid, now, to, key)

    def demote(self, rid: str, now: datetime) -> tuple[Scope, Promoted]:
        scope = self.locate(rid)
        return scope, self.memory(scope).demote(rid, now)

    def undo(self, rid: str, now: datetime) -> tuple[Scope, Undone]:
        scope = self.locate(rid)
        return scope, self.memory(scope).undo(rid, now)
