"""The memory of one namespace: a thin facade over the write path, profile editing, search and moves.

Every method takes `now`, so time is a parameter and a year can be simulated in seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from tiers.errors import NotFound
from tiers.index.store import Store
from tiers.lifecycle.rules import Plan
from tiers.model import blas, rerank
from tiers.model.embedder import Embedder
from tiers.namespace.backfill import Backfill
from tiers.namespace.moves import Moves
from tiers.namespace.outcomes import Forgotten, ProfileChange, Promoted, Stored, SweepReport, Undone
from tiers.namespace.parts import MemorySettings, Parts, random_id
from tiers.namespace.profile import Edit, ProfileEditor
from tiers.namespace.search import Search
from tiers.namespace.writes import Writer
from tiers.privacy.secrets import screen_values
from tiers.recall import rank as ranking
from tiers.recall import updates
from tiers.records import MemoryIn, Record, Tier
from tiers.storage.hot import Entry, HotProfile
from tiers.storage.ledger import Ledger, Move

__all__ = ["Memory", "MemorySettings"]


class Memory:
    """Hot profile + warm and cold tiers + ledger of one namespace in one folder."""

    def __init__(
        self,
        folder: Path,
        embedder: Embedder,
        settings: MemorySettings | None = None,
        new_id: Callable[[], str] = random_id,
    ) -> None:
        """`new_id` makes record ids, injectable like the clock so that a simulation is reproducible.

        numpy's BLAS is set to one thread for the whole process (tiers/model/blas.py: recall's products are small).
        """
        blas.one_thread()
        self.parts = Parts(folder, embedder, settings or MemorySettings(), new_id)
        self._writer = Writer(self.parts)
        self._editor = ProfileEditor(self.parts, self._writer)
        self._search = Search(self.parts)
        self._moves = Moves(self.parts, self._editor)
        self._editor.on_new_project = self._moves.bring_back  # a project current again gets its entries back
        self._backfill = Backfill(self.parts)

    @property
    def folder(self) -> Path:
        return self.parts.folder

    @property
    def embedder(self) -> Embedder:
        return self.parts.embedder

    @property
    def settings(self) -> MemorySettings:
        return self.parts.settings

    @settings.setter
    def settings(self, value: MemorySettings) -> None:
        self.parts.settings = value

    @property
    def hot(self) -> HotProfile:
        return self.parts.hot

    @property
    def ledger(self) -> Ledger:
        return self.parts.ledger

    @property
    def store(self) -> Store:
        return self.parts.store

    def close(self) -> None:
        self.parts.close()

    def warm_up(self) -> None:
        """Open the store and read both tiers' indexes into memory now, not in the first recall (and load the
        cross-encoder where recall reranks)."""
        self.parts.store.indexes.warm_up()
        if self.settings.recall.rerank:
            rerank.shared().load()

    def remember(self, items: Sequence[MemoryIn], now: datetime) -> list[Stored]:
        """Store memories; a repeat is merged into the stored one (see tiers/namespace/writes.py)."""
        return self._writer.remember(items, now, self._set_from_memory)

    def updates_held(self, items: Sequence[MemoryIn], now: datetime) -> list[bool]:
        """Whether each memory, not yet stored, may update one stored here (tiers/namespace/writes.py)."""
        return self._writer.updates_held(items, now)

    def _set_from_memory(
        self, values: dict[str, str], now: datetime, pin: Sequence[str], sources: dict[str, tuple[str, ...]]
    ) -> ProfileChange:
        return self._editor.apply(Edit(values, pin=tuple(pin), sources=sources, rule="remember"), now)

    def set_profile(
        self,
        values: dict[str, str],
        now: datetime,
        unset: Sequence[str] = (),
        pin: Sequence[str] = (),
        unpin: Sequence[str] = (),
    ) -> ProfileChange:
        """Change the profile by hand; a replaced or removed value goes down to warm as a record, never lost."""
        values = screen_values(values, self.settings.secrets)  # a credential is refused (or redacted) first
        return self._editor.apply(Edit(dict(values), tuple(unset), tuple(pin), tuple(unpin)), now)

    def edit_profile(self, edit: Edit, now: datetime) -> ProfileChange:
        """Any profile change, with the records its values come from (imports and promotions use it)."""
        return self._editor.apply(edit, now)

    def profile(self) -> dict[str, Entry]:
        return self.parts.hot.entries()

    def flags(self) -> dict[str, dict[str, Any]]:
        """Profile entries a newer memory may update, said without their key (tiers/lifecycle/flags.py), by key."""
        return self.parts.flags.listed()

    def dismiss(self, keys: Sequence[str], now: datetime) -> list[str]:
        """Clear the flags of these entries, which stay as they are; the keys that had one (logged)."""
        flagged = self.parts.flags.listed()
        unknown = [key for key in keys if key not in flagged]
        if unknown:
            raise NotFound(f"no flag on {', '.join(unknown)}; flagged entries are: {', '.join(flagged) or 'none'}")
        had = self.parts.flags.drop(keys)
        self.parts.ledger.log([Move(now, flagged[k]["earlier"], "hot", "hot", "dismissed", key=k) for k in had])
        return had

    def candidates(self) -> tuple[dict[str, Any], ...]:
        """Records proposed for the profile, less those already in it, forgotten or superseded since."""
        return self.parts.candidates.listed()

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
    ) -> ranking.Packed:
        """The memories that best answer `query`, packed into `max_tokens`; each one returned counts as a use.
        `thorough`: the best candidates read again by the cross-encoder (Search.recall)."""
        return self._search.recall(query, now, limit, max_tokens, tiers, tags, since, until, thorough)

    def rank(self, query: str, limit: int, tiers: Sequence[Tier] | None = None) -> list[ranking.Ranked]:
        """The best `limit` records for `query` as recall ranks them, counting no use."""
        search = self._search
        parsed = search.parse(query, tiers)
        ranked = search.rank(parsed, max(limit, updates.WINDOW, ranking.NAMED_WITHIN))
        if self.settings.recall.names_first:
            ranked = ranking.named_first(query, ranked)
        if self.settings.recall.updates and len(ranked) > 1:
            ranked = search.later_first(parsed, ranked)
        return ranked[:limit]

    def get(self, rid: str) -> Record:
        return self._moves.get(rid)

    def promote(self, rid: str, now: datetime, to: Tier = Tier.HOT, key: str | None = None) -> Promoted:
        return self._moves.promote(rid, now, to, key)

    def demote(self, rid: str, now: datetime) -> Promoted:
        """Move a warm record to cold by hand (a profile entry goes down with `set_profile(unset=...)`)."""
        return self._moves.demote(rid, now)

    def undo(self, rid: str, now: datetime) -> Undone:
        """Reverse the last logged move of a record, logged as a move itself."""
        return self._moves.undo(rid, now)

    def forget(self, rid: str, now: datetime) -> Forgotten:
        return self._moves.forget(rid, now)

    def plan(self, now: datetime) -> Plan:
        return self._moves.plan(now)

    def sweep(
        self, now: datetime, dry_run: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> SweepReport:
        report = self._moves.sweep(now, dry_run, progress)
        if dry_run:
            return report
        return replace(report, pieces_filled=self._backfill.run())

    def moves(self, rid: str | None = None, limit: int = 100) -> list[Move]:
        """The move log, newest first: all of it, or one record's (with the profile entries it stated) or one key's."""
        return self.parts.ledger.moves(rid, limit)

    def heat_of(self, rid: str, now: datetime) -> float:
        return self._moves.heat_of(self.get(rid), now)

    def stats(self) -> dict[str, Any]:
        store = self.parts.store
        files, size = store.files()
        return {
            "folder": str(self.folder),
            "model": self.embedder.name,
            "hot_entries": len(self.hot.entries()),
            "hot_tokens": self.hot.tokens(),
            "hot_cap_tokens": self.hot.cap_tokens,
            "hot_flagged": sorted(self.parts.flags.listed()),
            "warm": store.count(Tier.WARM),
            "cold": store.count(Tier.COLD),
            "lance_files": files,
            "lance_bytes": size,
            "lance_versions": store.versions(),
        }
