"""Pieces for the long memories stored before memtiers kept them, a bounded batch at each sweep.

Recall ranks a long memory by its best piece and shows it by that piece when the whole does not fit
(tiers/index/pieces.py); a memory stored before the `pieces` column existed has none, so it ranks by its mean
alone and is left out, not excerpted, when it is over the budget. Rather than ask each user to run
`memtiers reembed`, the timer embeds up to FILL_BATCH of them each pass and writes them as a write of them
today would (their vector and pieces, nothing else). One scan of the tables finds them all (their ids are
kept, not their text); each pass reads only its batch by id, embeds it outside the write lock, so a
`remember` waits only for the write, and writes it under the lock. When none is left, a last scan under the
lock (a record may have changed tier between the two tables' scans) makes sure, and store.json then says so:
no pass looks again.
"""

from __future__ import annotations

import logging
import threading

from tiers.errors import MemtiersError
from tiers.model.embedder import embed_memories
from tiers.namespace.parts import Parts
from tiers.records import Tier

log = logging.getLogger("memtiers")

# Long memories embedded per sweep: about 300 pieces at most (a 1,000-word note is 8), a second or two of the
# default model on two cores, once every sweep interval until none is left.
FILL_BATCH = 32


class Backfill:
    """The long memories of one namespace still without pieces, as this process last found them."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self._pending: list[tuple[Tier, str]] | None = None  # None: not scanned yet
        self._guard = threading.Lock()  # one pass at a time in this process

    def run(self, limit: int | None = None) -> int:
        """Give up to `limit` (FILL_BATCH) long memories their pieces; the number given. Upkeep: a failure is
        logged and the next pass tries again."""
        try:
            with self._guard:
                return self._pass(FILL_BATCH if limit is None else limit)
        except MemtiersError as exc:
            log.warning("giving long memories their pieces deferred: %s", exc)
            return 0

    def _pass(self, limit: int) -> int:
        store = self.parts.store
        if store.unpieced.complete():
            return 0
        if not self._pending:
            self._pending = store.unpieced.find()
            if not self._pending:
                with self.parts.locked():
                    self._pending = store.unpieced.find()
                    if not self._pending:
                        store.unpieced.mark_complete()
                        return 0
        batch, self._pending = self._pending[:limit], self._pending[limit:]
        found = store.unpieced.texts(batch)  # those forgotten or moved since the scan are not
        if not found:
            return 0
        made = embed_memories(self.parts.embedder, [text for _, _, text in found])
        given = 0
        with self.parts.locked():
            for tier in (Tier.WARM, Tier.COLD):
                chosen = [(i, p) for i, p in enumerate(made.pieces) if found[i][0] is tier and p is not None]
                if chosen:
                    rows = [i for i, _ in chosen]
                    ids = [found[i][1] for i in rows]
                    given += store.unpieced.fill(tier, ids, made.vectors[rows], [p for _, p in chosen])
        log.info("gave %d long memories stored before pieces were kept their pieces", given)
        return given
