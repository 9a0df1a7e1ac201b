"""Pieces for the long memories stored before memtiers kept them, a bounded batch at each sweep.

Recall ranks a long memory by its best piece and shows it by that piece when the whole does not fit
(tiers/pieces.py); a memory stored before the `pieces` column existed has none, so it ranks by its mean
alone and is left out, not excerpted, when it is over the budget. Rather than ask each user to run
`memtiers reembed`, the timer embeds up to FILL_BATCH of them each pass and writes them as a write of them
today would (their vector and pieces, nothing else). The embedding is done outside the write lock, so a
`remember` waits only for the write; once a pass finds none left, store.json says so and no pass looks again.
"""

from __future__ import annotations

import logging

from tiers.embedder import embed_memories
from tiers.parts import Parts
from tiers.records import Tier

log = logging.getLogger("memtiers")

# Long memories embedded per sweep: about 300 pieces at most (a 1,000-word note is 8), a second or two of the
# default model on two cores, once every sweep interval until none is left.
FILL_BATCH = 32


def fill_pieces(parts: Parts, limit: int | None = None) -> int:
    """Embed up to `limit` (FILL_BATCH) long memories that lack pieces and store them; the number given pieces."""
    store = parts.store
    limit = FILL_BATCH if limit is None else limit
    if store.pieces_complete():
        return 0
    found = store.lacking_pieces(limit)
    if not found:
        with parts.locked():
            store.mark_pieces_complete()
        return 0
    made = embed_memories(parts.embedder, [text for _, _, text in found])
    given = 0
    with parts.locked():
        for tier in (Tier.WARM, Tier.COLD):
            chosen = [
                (i, p)
                for i, ((t, _, _), p) in enumerate(zip(found, made.pieces, strict=True))
                if t is tier and p is not None
            ]
            if chosen:
                rows = [i for i, _ in chosen]
                ids = [found[i][1] for i in rows]
                given += store.fill_pieces(tier, ids, made.vectors[rows], [p for _, p in chosen])
    log.info("gave %d long memories stored before pieces were kept their pieces", given)
    return given
