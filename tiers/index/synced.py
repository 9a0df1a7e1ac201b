"""One tier's index in memory, kept in step with what every process has written to its table.

The index is read once per process: from the copy the last full read saved (tiers/index/saved.py), brought
up to date from the ledger's change feed, or else from the table whole, which saves a new copy when the
tier is large. After that, each read first applies the changes the feed lists since the index last looked
(another process's writes), so no write, move or compaction costs work in proportion to the tier.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from tiers.records import Tier
from tiers.storage.ledger import Ledger
from tiers.storage.tables import Table

log = logging.getLogger(__name__)

# Rows of a tier from which its full read is saved for the next process. Besides the time of the read,
# a process that opens the copies holds less than one that read both tables through pylance.
SAVED_FROM = 1_000


class Index(Protocol):
    """What the keeper reads of an index: its rows (`live`, and `size` with the removed ones) and, opened from
    a saved copy, the feed's position that copy was made at."""

    size: int
    live: int
    saved_seen: int


IndexT = TypeVar("IndexT", bound=Index)


@dataclass(frozen=True)
class Kind(Generic[IndexT]):
    """How one tier's index is made, saved, opened again and brought up to date."""

    read: Callable[[Table], IndexT]  # the table read whole into a new index
    save: Callable[[IndexT, Path, dict[str, object]], bool]  # a fresh read saved under a folder with a stamp
    open: Callable[[Path, dict[str, object]], IndexT | None]  # a saved copy opened, if its stamp matches
    catch_up: Callable[[IndexT, Table, set[str]], None]  # these records read again from the table
    mapped: bool = False  # the saved copy is mapped: a fresh read is swapped for the copy it just saved


class Synced(Generic[IndexT]):
    """One tier's index, loaded when first read and held in step with its table through the change feed.

    `guard` is held while a caller reads the index; the store takes the warm keeper's before the cold one's.
    """

    def __init__(
        self,
        tier: Tier,
        table: Table,
        ledger: Ledger,
        saved: Path,
        kind: Kind[IndexT],
        stamp: Callable[[], dict[str, object]],
    ) -> None:
        self.tier = tier
        self.table = table
        self.ledger = ledger
        self.saved = saved  # where the last full read is saved for the next process
        self.kind = kind
        self.stamp = stamp  # what a saved copy must match to be read: its layout, its table, the model
        self.index: IndexT | None = None
        self.seen = 0  # the feed's position the index reflects
        self.guard = threading.RLock()

    def current(self) -> IndexT:
        """The index as every process has written it; the caller holds `guard`."""
        if self.index is None:
            return self._load()
        newest, changed = self._changes_since(self.seen)
        if changed is None:
            return self._load()
        if changed:
            self.kind.catch_up(self.index, self.table, changed)
        self.seen = newest
        return self.index

    def close(self) -> None:
        with self.guard:
            self.index = None

    def applied(self, change: Callable[[IndexT], object] | None, before: int, newest: int, count: int) -> None:
        """Apply this process's own change to a loaded index; `before`: the feed's position the index reflected
        when the change was noted, now `newest` after `count` records. The feed is skipped ahead only when no
        other process wrote in between (else the next read catches up on theirs)."""
        if self.index is None or change is None:
            return
        change(self.index)
        if newest == before + count:
            self.seen = newest

    def _load(self) -> IndexT:
        """Open the copy the last full read saved and catch up from the feed, or read the table whole."""
        if self.index is None:
            opened = self.kind.open(self.saved, self.stamp())
            newest = None if opened is None else self._caught_up(opened)
            if opened is not None and newest is not None:
                self.index, self.seen = opened, newest
                _settle()
                return opened
        seen = self.ledger.last_change()  # read first: a change made during the load is applied after it
        index = self.kind.read(self.table)
        self.index, self.seen = index, seen
        if index.size >= SAVED_FROM and self._save(index, seen) and self.kind.mapped:
            mapped = self.kind.open(self.saved, self.stamp())
            if mapped is not None and mapped.live == index.live:  # map what was saved: memory only where read
                self.index = mapped
        _settle()
        return self.index

    def _caught_up(self, index: IndexT) -> int | None:
        """Bring an index opened from its saved copy up to date from the feed: the feed's position, or None
        when the table is to be read whole instead (a trimmed feed, an old copy, one that does not add up)."""
        newest, changed = self._changes_since(index.saved_seen)
        if changed is None or len(changed) > index.live // 4:  # an old copy: a full read saves a new one
            return None
        if changed:
            self.kind.catch_up(index, self.table, changed)
        if index.live != self.table.count():  # a copy that does not add up is never trusted
            tier = self.tier.value
            log.warning("the saved %s index disagrees with the %s table; reading the table", tier, tier)
            return None
        return newest

    def _changes_since(self, seen: int) -> tuple[int, set[str] | None]:
        """The feed's newest position and the records of this tier changed since `seen`; None: read it whole."""
        newest, changed = self.ledger.changes_since(seen, self.tier.value)
        return newest, None if changed is None or "*" in changed else changed

    def _save(self, index: IndexT, seen: int) -> bool:
        """Save a freshly read index for the next process; False when nothing was saved."""
        try:
            return self.kind.save(index, self.saved, self.stamp() | {"seen": seen})
        except OSError as exc:  # a disk too full for the copy costs the next process a full read, no more
            log.warning("could not save the %s index under %s: %s", self.table.name, self.saved, exc)
            return False


def _settle() -> None:
    """After a full read: what was just loaded lives as long as the process, so the collector stops scanning it.

    A full collection scans every object a large warm tier made, a pause that lands on a recall now and then
    (the scale benchmark's p99); frozen, those objects are never scanned again.
    """
    gc.freeze()
