"""Candidates for the hot profile, kept in the ledger: facts that did not fit under the cap, and
records hot enough by heat. A candidate is listed until it is promoted, forgotten or superseded."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from tiers.index.store import Store
from tiers.lifecycle.rules import Plan
from tiers.storage.hot import HotProfile
from tiers.storage.ledger import Ledger

STATE = "hot_candidates"  # the ledger's state value holding the list, as JSON


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
        raw = self.ledger.get_state(STATE)
        if not raw:
            return ()
        in_profile = {rid for entry in self.hot.entries().values() for rid in entry.sources}
        listed = [c for c in _read(raw) if c["id"] not in in_profile]
        alive = self.store().get([c["id"] for c in listed])
        return tuple(c for c in listed if c["id"] in alive)

    def add(self, rid: str, key: str | None, reason: str, heat: float | None = None, value: str | None = None) -> None:
        proposed = {"id": rid, "key": key, "reason": reason, "heat": heat, "value": value}
        self.ledger.change_state(STATE, lambda raw: _written([c for c in _read(raw) if c["id"] != rid] + [proposed]))

    def drop(self, rids: Sequence[str]) -> None:
        gone = set(rids)

        def change(raw: str | None) -> str | None:
            current = _read(raw)
            kept = [c for c in current if c["id"] not in gone]
            return _written(kept) if len(kept) != len(current) else None

        self.ledger.change_state(STATE, change)

    def refresh(self, plan: Plan) -> None:
        """Keep the candidates that are still true; heat candidates are replaced by this sweep's.

        What is true is read first (the store, the profile); the list is then changed in one ledger
        transaction, so a candidate another process proposed meanwhile is kept."""
        sourced = {rid for entry in self.hot.entries().values() for rid in entry.sources}
        checked = [c["id"] for c in _read(self.ledger.get_state(STATE)) if c["reason"] != "heat"]
        fresh = plan.hot_candidates[: self.limit]
        records = self.store().get(checked + [rid for rid, _ in fresh])
        alive = {rid for rid, r in records.items() if not r.superseded_by and rid not in sourced}
        dead = set(checked) - alive
        by_heat = [
            {
                "id": rid,
                "key": records[rid].metadata.get("profile_key"),
                "reason": "heat",
                "heat": round(heat, 2),
                "value": None,
            }
            for rid, heat in fresh
            if rid in alive
        ]

        def change(raw: str | None) -> str | None:
            current = _read(raw)
            out = [c for c in current if c["reason"] != "heat" and c["id"] not in dead]
            for candidate in by_heat:
                if all(c["id"] != candidate["id"] for c in out):
                    out.append(candidate)
            return _written(out) if out != current else None

        self.ledger.change_state(STATE, change)


def _read(raw: str | None) -> list[dict[str, Any]]:
    return json.loads(raw) if raw else []


def _written(candidates: list[dict[str, Any]]) -> str:
    return json.dumps(candidates)
