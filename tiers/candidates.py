"""Candidates for the hot profile, kept in the ledger: facts that did not fit under the cap, and
records hot enough by heat. A candidate is listed until it is promoted, forgotten or superseded."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from tiers.hot import HotProfile
from tiers.ledger import Ledger
from tiers.rules import Plan
from tiers.store import Store


class Candidates:
    """The standing proposals for the profile of one namespace."""

    def __init__(self, ledger: Ledger, hot: HotProfile, store: Callable[[], Store], limit: int) -> None:
        self.ledger = ledger
        self.hot = hot
        self.store = store
        self.limit = limit

    def listed(self) -> tuple[dict[str, Any], ...]:
        """Records proposed for the profile (facts that did not fit under the cap, hot records by heat),
        less those already in it or forgotten since."""
        raw = self.ledger.get_state("hot_candidates")
        if not raw:
            return ()
        in_profile = {rid for entry in self.hot.entries().values() for rid in entry.sources}
        listed = [c for c in json.loads(raw) if c["id"] not in in_profile]
        alive = self.store().get([c["id"] for c in listed])
        return tuple(c for c in listed if c["id"] in alive)

    def add(self, rid: str, key: str | None, reason: str, heat: float | None = None, value: str | None = None) -> None:
        current = [c for c in self.listed() if c["id"] != rid]
        current.append({"id": rid, "key": key, "reason": reason, "heat": heat, "value": value})
        self.ledger.set_state("hot_candidates", json.dumps(current))

    def drop(self, rids: Sequence[str]) -> None:
        current = self.listed()
        kept = [c for c in current if c["id"] not in rids]
        if len(kept) != len(current):
            self.ledger.set_state("hot_candidates", json.dumps(kept))

    def refresh(self, plan: Plan) -> None:
        """Keep the candidates that are still true; heat candidates are replaced by this sweep's."""
        sourced = {rid for entry in self.hot.entries().values() for rid in entry.sources}
        kept = [c for c in self.listed() if c["reason"] != "heat"]
        fresh = plan.hot_candidates[: self.limit]
        records = self.store().get([c["id"] for c in kept] + [rid for rid, _ in fresh])
        alive = {rid for rid, r in records.items() if not r.superseded_by and rid not in sourced}
        out = [c for c in kept if c["id"] in alive]
        for rid, value in fresh:
            if rid in alive and all(c["id"] != rid for c in out):
                key = records[rid].metadata.get("profile_key")
                out.append({"id": rid, "key": key, "reason": "heat", "heat": round(value, 2), "value": None})
        if out != list(self.listed()):
            self.ledger.set_state("hot_candidates", json.dumps(out))
