"""The moves between tiers: promote (and undo), forget, and the sweep the timer runs.

The sweep decides and applies under one lock, against the state it locked: a record another process
recalled a moment before is counted as used, and a value it just set is not idle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from tiers.errors import InvalidInput, NotFound, ProfileCapExceeded, StorageError
from tiers.index.store import check_id
from tiers.lifecycle import projects
from tiers.lifecycle.rules import Plan, plan_sweep, record_heat
from tiers.namespace.outcomes import Forgotten, Promoted, SweepReport, Undone
from tiers.namespace.parts import Parts
from tiers.namespace.profile import Edit, ProfileEditor
from tiers.records import Kind, Record, Tier
from tiers.storage.ledger import Move

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
MOVE_BATCH = 5_000  # records moved per write: a sweep of a large store reports progress as it goes
UNDO = "undo"  # the rule of a move that reverses an earlier one


class Moves:
    """Promote, forget and sweep the records of one namespace."""

    def __init__(self, parts: Parts, editor: ProfileEditor) -> None:
        self.parts = parts
        self.editor = editor

    def get(self, rid: str) -> Record:
        found = self.parts.store.get([check_id(rid)])
        if rid not in found:
            raise NotFound(f"no memory {rid!r} in this namespace (it may have been forgotten)")
        return found[rid]

    def heat_of(self, record: Record, now: datetime) -> float:
        usage = self.parts.ledger.usage([record.id]).get(record.id)
        return record_heat({"occurred_at": record.occurred_at}, usage, now, self.parts.settings.rules)

    def promote(
        self, rid: str, now: datetime, to: Tier = Tier.HOT, key: str | None = None, rule: str = "promote"
    ) -> Promoted:
        """Move a record up: cold to warm, or into the profile as an entry sourced by it.

        This is also how any move is undone: a record gone cold comes back with `to=warm`, and a profile
        value that went down to warm (its history record keeps the key) comes back with `to=hot`.
        """
        record = self.get(rid)
        to = Tier(to)
        if to is Tier.COLD:
            raise InvalidInput("promote moves records up (to warm or hot); records go cold by the timer")
        heat_then = round(self.heat_of(record, now), 4)
        parts = self.parts
        if to is Tier.WARM:
            if record.tier is Tier.WARM:
                return Promoted(rid, Tier.WARM, "already_warm", src=Tier.WARM)
            with parts.locked():
                parts.store.move([Move(now, rid, record.tier.value, "warm", rule, heat_then)])
            parts.ledger.touch([rid], now)
            return Promoted(rid, Tier.WARM, "promoted", src=record.tier)
        key = key or record.metadata.get("profile_key")
        if not key:
            raise InvalidInput("promoting to hot needs a profile key, e.g. key='diet.allergy'")
        return self._to_hot(record, key, rule, heat_then, now)

    def demote(self, rid: str, now: datetime, rule: str = "demote") -> Promoted:
        """Move a warm record down to cold by hand, as the timer would: recall still finds it, it is not carried."""
        record = self.get(rid)
        if record.tier is Tier.COLD:
            return Promoted(rid, Tier.COLD, "already_cold", src=Tier.COLD)
        heat_then = round(self.heat_of(record, now), 4)
        with self.parts.locked():
            self.parts.store.move([Move(now, rid, "warm", "cold", rule, heat_then)])
        return Promoted(rid, Tier.COLD, "demoted", src=Tier.WARM)

    def undo(self, rid: str, now: datetime) -> Undone:
        """Reverse the last logged step of record `rid` through the same moves, logged under the rule `undo`.

        A step is the moves logged for it at one time: a promotion from cold to the profile is two (the entry
        and cold to warm), undone together. A forget cannot be undone: the record is deleted.
        """
        record = self.get(rid)
        mine = [m for m in self.parts.ledger.moves(rid, 200) if m.rid == rid]
        if not mine:
            raise InvalidInput(f"{rid} has no logged move to undo")
        step = [m for m in mine if m.at == mine[0].at]
        if step[0].rule == "supersedes":  # the agent's confirmed update: the record is current again
            with self.parts.locked():
                self.parts.store.update([record], {"superseded_by": None, "superseded_at": None})
            tier = record.tier.value
            self.parts.ledger.log([Move(now, rid, tier, tier, UNDO, note=f"no longer superseded ({step[0].note})")])
            return Undone(rid, record.tier, ("no longer superseded",), step[0].rule)
        if step[0].rule in ("flagged", "dismissed"):
            raise InvalidInput(f"the last step of {rid} is a profile flag: answer it with profile set or dismiss")
        done: list[str] = []
        for move in step:
            if move.dst == "hot" and move.key:
                entry = self.parts.hot.entries().get(move.key)
                if entry is None or rid not in entry.sources:
                    raise InvalidInput(f"profile entry {move.key!r} no longer holds {rid}: nothing to undo")
                self.editor.apply(Edit(unset=(move.key,), rule=UNDO, unset_rule=UNDO), now)
                done.append(f"{move.key} out of the profile")
            elif move.src == "hot" and move.dst == "warm" and move.key:
                self.promote(rid, now, Tier.HOT, move.key, rule=UNDO)
                done.append(f"{move.key} back into the profile")
        for move in step:
            if (move.src, move.dst) == ("warm", "cold") and record.tier is Tier.COLD:
                self.promote(rid, now, Tier.WARM, rule=UNDO)
                done.append("cold back to warm")
            elif (move.src, move.dst) == ("cold", "warm") and record.tier is Tier.WARM:
                self.demote(rid, now, rule=UNDO)
                done.append("warm back to cold")
        if not done:
            raise InvalidInput(f"the last move of {rid} ({step[0].src} -> {step[0].dst}, {step[0].rule}) has no undo")
        return Undone(rid, self.get(rid).tier, tuple(done), step[0].rule)

    def _to_hot(self, record: Record, key: str, rule: str, heat_then: float, now: datetime) -> Promoted:
        """Make `record` the value of profile entry `key` (a history record: the value it kept, with its sources)."""
        parts, rid = self.parts, record.id
        value = record.content
        given: tuple[str, ...] = (rid,)
        if record.kind is Kind.HISTORY and value.startswith(f"{key}: "):
            value = value[len(key) + 2 :]
            earlier = [s for s in str(record.metadata.get("sources", "")).split() if s != rid]
            still_stored = parts.store.get(earlier)
            given += tuple(s for s in earlier if s in still_stored)
        current = parts.hot.entries().get(key)
        if current is not None and current.value == value and rid in current.sources:
            return Promoted(rid, Tier.HOT, "already_hot", key, src=Tier.HOT)
        edit = Edit({key: value}, sources={key: given}, rule=rule, src=record.tier, heat=heat_then)
        self.editor.apply(edit, now)
        if record.tier is Tier.COLD:
            with parts.locked():
                parts.store.move([Move(now, rid, "cold", "warm", rule, heat_then)])
        parts.ledger.touch([rid], now)
        parts.candidates.drop([rid])
        return Promoted(rid, Tier.HOT, "promoted", key, src=record.tier)

    def bring_back(self, project: str, now: datetime) -> tuple[str, ...]:
        """The entries the timer moved away from the profile while `project` was not current, back now that it is:
        each key's latest parked value, unless the key holds a value again, or that value was forgotten or
        superseded. One that no longer fits under the profile's cap stays in warm (and says so in the log)."""
        here = projects.name(project)
        latest: dict[str, str] = {}
        for move in self.parts.ledger.moved_by(projects.AWAY):
            if move.key and projects.project_of(move.key) == here:
                latest[move.key] = move.rid
        entries = self.parts.hot.entries()
        waiting = {key: rid for key, rid in latest.items() if key not in entries}
        records = self.parts.store.get(list(waiting.values())) if waiting else {}
        back: list[str] = []
        for key, rid in sorted(waiting.items()):
            record = records.get(rid)
            if record is None or record.superseded_by:
                continue
            try:
                self._to_hot(record, key, projects.BACK, round(self.heat_of(record, now), 4), now)
            except ProfileCapExceeded as exc:
                log.warning("project %r is current again, but %s stays in warm: %s", project, key, exc)
                continue
            back.append(key)
        return tuple(back)

    def forget(self, rid: str, now: datetime) -> Forgotten:
        """Delete a record from every tier, file and index; the log keeps that it was forgotten, and when.

        Profile entries it alone sourced are named (the agent decides whether they go too).
        """
        record = self.get(rid)
        parts = self.parts
        parts.hot.entries()  # a corrupt profile fails the call here, before the row is deleted
        heat_then = round(self.heat_of(record, now), 4)
        with parts.locked():
            record = self.get(rid)  # as it is now, under the lock
            parts.store.delete(record)
        parts.ledger.forget(rid, [record.content])
        parts.ledger.log([Move(now, rid, record.tier.value, "gone", "forget", heat_then)])
        parts.candidates.drop([rid])
        orphaned: list[str] = []
        with parts.hot.editing() as entries:
            for key, entry in list(entries.items()):
                if rid in entry.sources:
                    remaining = tuple(s for s in entry.sources if s != rid)
                    entries[key] = replace(entry, sources=remaining)
                    if not remaining:
                        orphaned.append(key)
        return Forgotten(rid, record.tier, tuple(orphaned))

    def plan(self, now: datetime) -> Plan:
        """What a sweep as of `now` would do, changing nothing.

        Only warm records and the cold ones that were used can move: a cold record never recalled
        has no heat to come back with, so the cold tier is never read whole.
        """
        parts = self.parts
        rules = parts.settings.rules
        usage = parts.ledger.usage()
        used = [rid for rid, u in usage.items() if not rid.startswith("hot:")]
        hot_enough = [
            rid
            for rid in used
            if record_heat({"occurred_at": usage[rid].last_touch}, usage[rid], now, rules) >= rules.rewarm_at
        ]
        rows = parts.store.lifecycle_rows(hot_enough)
        return plan_sweep(rows, usage, parts.hot.entries(), now, rules)

    def sweep(self, now: datetime, dry_run: bool = False, progress: Progress | None = None) -> SweepReport:
        """One pass of the timer as of `now`: demote stale records, re-warm hot ones, propose candidates.

        `progress` is told (records moved, records to move) after each batch of moves.
        """
        with self.parts.locked():
            if not dry_run:  # a write killed mid-way reaches every index within a sweep
                self.parts.store.recovery.recover_writes()
            plan = self.plan(now)
            if not dry_run:
                self._apply(plan, now, progress)
        if not dry_run and any(m.src is not Tier.HOT for m in plan.moves):
            # Outside the write lock: folding a sweep's rows into the cold indexes must not hold up remember.
            # It is upkeep: if another process's write wins a conflict, the next sweep compacts instead.
            try:
                self.parts.store.compact()
            except StorageError as exc:
                log.warning("compaction after the sweep deferred: %s", exc)
        return SweepReport(now, dry_run, plan.moves, plan.hot_candidates)

    def _apply(self, plan: Plan, now: datetime, progress: Progress | None = None) -> None:
        parts = self.parts
        record_moves = [m for m in plan.moves if m.src is not Tier.HOT]
        for start in range(0, len(record_moves), MOVE_BATCH):
            batch = record_moves[start : start + MOVE_BATCH]
            parts.store.move([Move(now, m.rid, m.src.value, m.dst.value, m.rule, heat=round(m.heat, 4)) for m in batch])
            if progress is not None:
                progress(start + len(batch), len(record_moves))
        idle = {m.key: round(m.heat, 4) for m in plan.moves if m.src is Tier.HOT and m.key}
        rule_of = {m.key: m.rule for m in plan.moves if m.src is Tier.HOT and m.key}
        if idle:
            with parts.hot.editing() as entries:
                old = [(key, entries[key], rule_of[key]) for key in idle if key in entries]
                self.editor.demote(old, now, idle)  # written to warm before the entries leave the profile
                for key, _, _ in old:
                    del entries[key]
        parts.candidates.refresh(plan)
