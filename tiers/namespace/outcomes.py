"""What the memory's operations did, as values: expected outcomes are results, not exceptions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tiers.lifecycle.rules import Planned
from tiers.records import Kind, Tier
from tiers.storage.hot import Entry


@dataclass(frozen=True)
class Earlier:
    """An earlier memory a new one may update (tiers/recall/updates.py): the agent confirms with `supersedes`."""

    id: str
    occurred_at: datetime
    content: str


@dataclass(frozen=True)
class Stored:
    """What `remember` did with one memory."""

    id: str
    tier: Tier
    kind: Kind
    protected: bool
    duplicate_of: str | None = None
    profile_key: str | None = None
    note: str | None = None
    may_update: tuple[Earlier, ...] = ()  # earlier memories this one may be the later word on
    supersedes: tuple[str, ...] = ()  # earlier memories this one replaces, as the agent confirmed


@dataclass(frozen=True)
class Promoted:
    id: str
    tier: Tier
    outcome: str  # promoted | already_hot | already_warm | demoted | already_cold
    key: str | None = None
    src: Tier | None = None


@dataclass(frozen=True)
class Undone:
    """What an undo reversed: the record, where it is now, each change made, and the rule of the step undone."""

    id: str
    tier: Tier
    changes: tuple[str, ...]
    undid: str


@dataclass(frozen=True)
class Forgotten:
    id: str
    tier: Tier
    orphaned_profile_keys: tuple[str, ...]


@dataclass(frozen=True)
class SweepReport:
    at: datetime
    dry_run: bool
    moves: tuple[Planned, ...]
    hot_candidates: tuple[tuple[str, float], ...]
    pieces_filled: int = 0  # long memories stored before pieces were kept, given them (tiers/namespace/backfill.py)


@dataclass(frozen=True)
class ProfileChange:
    entries: dict[str, Entry]
    tokens: int
    cap_tokens: int
    demoted: tuple[str, ...] = ()
    candidates: tuple[dict[str, Any], ...] = ()
