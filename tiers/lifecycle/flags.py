"""Flags on hot profile entries: a newer memory may update what an entry was made from (tiers/recall/updates.py), said
without the entry's key. A flag stands, in the profile the agent reads, until the agent or the person confirms
it (sets the entry anew, its old value kept as history) or dismisses it; it never changes the entry itself."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tiers.storage.hot import HotProfile
from tiers.storage.ledger import Ledger

STATE = "profile_flags"  # the ledger's state value holding the flags, as JSON: key -> flag


class Flags:
    """The standing flags on one namespace's profile entries."""

    def __init__(self, ledger: Ledger, hot: HotProfile) -> None:
        self.ledger = ledger
        self.hot = hot

    def listed(self) -> dict[str, dict[str, Any]]:
        """Each flagged entry's key with its flag (`by`: the newer memory's id, `said`: its text, `earlier`: the
        entry's source it may update, `at`: when it was flagged), less entries removed since."""
        raw = self.ledger.get_state(STATE)
        if not raw:
            return {}
        entries = self.hot.entries()
        return {key: flag for key, flag in json.loads(raw).items() if key in entries}

    def add(self, key: str, by: str, said: str, earlier: str, at: datetime) -> None:
        flag = {"by": by, "said": said[:300], "earlier": earlier, "at": at.isoformat()}

        def change(raw: str | None) -> str:
            return json.dumps({**(json.loads(raw) if raw else {}), key: flag})

        self.ledger.change_state(STATE, change)

    def drop(self, keys: Sequence[str]) -> list[str]:
        """Clear the flags of these keys (confirmed or dismissed); the keys that had one."""
        gone = set(keys)
        had: list[str] = []

        def change(raw: str | None) -> str | None:
            current = json.loads(raw) if raw else {}
            had[:] = [key for key in current if key in gone]
            return json.dumps({k: v for k, v in current.items() if k not in gone}) if had else None

        self.ledger.change_state(STATE, change)
        return had
