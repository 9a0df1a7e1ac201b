"""Episodes of the warm tier: the rows of the same time and source, in the order they were stored.

Recall lends a hit's score to the rows stored just before and after it (a reply found by the turn before
it), so each position keeps the position before and after it in its episode (`prev`, `next`, -1 where
there is none), kept linked as rows are added and removed.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np


class Episodes:
    """The episode links of the warm positions, and each link's cosine once a recall asked for it."""

    def __init__(self) -> None:
        self.prev = np.zeros(0, dtype=np.int64)
        self.next = np.zeros(0, dtype=np.int64)
        # (source, occurred) -> [(created, position)] in order; made from `order` when first changed.
        self._episodes: dict[tuple[str | None, int], list[tuple[int, int]]] = {}
        self.order: np.ndarray | None = None  # the loaded rows' order, made into `_episodes` when first needed
        # Each position's cosine to the row after it in its episode, and which row that was (-2: not made):
        # made when a recall first asks, kept while the link is (a position's vector never changes).
        self._pair = np.zeros(0, dtype=np.float32)
        self._pair_with = np.zeros(0, dtype=np.int64)

    def grow(self, capacity: int) -> None:
        """Make room for `capacity` positions, the new ones linked to none."""
        for name in ("prev", "next"):
            old = getattr(self, name)
            out = np.full(capacity, -1, dtype=np.int64)
            out[: len(old)] = old
            setattr(self, name, out)

    def load(self, sources: Sequence[str | None], occurred_us: np.ndarray, created_us: np.ndarray, n: int) -> None:
        """Link the `n` rows of a load, in bulk: the episodes themselves wait for the first change."""
        codes = {s: i for i, s in enumerate(dict.fromkeys(sources))}
        source = np.asarray([codes[s] for s in sources], dtype=np.int64)
        order = np.lexsort((np.arange(n), created_us[:n], occurred_us[:n], source))
        a, b = order[:-1], order[1:]
        same = (occurred_us[a] == occurred_us[b]) & (source[a] == source[b])
        self.next[a[same]], self.prev[b[same]] = b[same], a[same]
        self.order = order  # a recall needs only the links

    def _map(
        self, sources: Sequence[str | None], occurred_us: np.ndarray, created_us: np.ndarray
    ) -> dict[tuple[str | None, int], list[tuple[int, int]]]:
        """Each episode's rows as (created, position), in order; built from the load on first use."""
        order, self.order = self.order, None
        if order is not None:
            for position in order.tolist():
                key = (sources[position], int(occurred_us[position]))
                self._episodes.setdefault(key, []).append((int(created_us[position]), position))
        return self._episodes

    def link(
        self, sources: Sequence[str | None], occurred_us: np.ndarray, created_us: np.ndarray, position: int
    ) -> None:
        """Put a new position into its episode, between the rows stored before and after it."""
        episodes = self._map(sources, occurred_us, created_us)
        episode = episodes.setdefault((sources[position], int(occurred_us[position])), [])
        entry = (int(created_us[position]), position)
        at = bisect.bisect(episode, entry)
        episode.insert(at, entry)
        before = episode[at - 1][1] if at > 0 else -1
        after = episode[at + 1][1] if at + 1 < len(episode) else -1
        self.prev[position], self.next[position] = before, after
        if before >= 0:
            self.next[before] = position
        if after >= 0:
            self.prev[after] = position

    def unlink(
        self, sources: Sequence[str | None], occurred_us: np.ndarray, created_us: np.ndarray, position: int
    ) -> None:
        """Take a position out of its episode, joining the rows on either side of it."""
        episodes = self._map(sources, occurred_us, created_us)
        key = (sources[position], int(occurred_us[position]))
        episode = episodes.get(key, [])
        entry = (int(created_us[position]), position)
        at = bisect.bisect_left(episode, entry)
        if at < len(episode) and episode[at] == entry:
            episode.pop(at)
        if not episode:
            episodes.pop(key, None)
        before, after = int(self.prev[position]), int(self.next[position])
        if before >= 0:
            self.next[before] = after
        if after >= 0:
            self.prev[after] = before
        self.prev[position] = self.next[position] = -1

    def near(self, position: int, reach: int) -> tuple[list[int], list[int]]:
        """The positions of up to `reach` rows stored just before and just after this one, nearest first."""
        out: list[list[int]] = []
        for links in (self.prev, self.next):
            found: list[int] = []
            at = position
            for _ in range(reach):
                at = int(links[at])
                if at < 0:
                    break
                found.append(at)
            out.append(found)
        return out[0], out[1]

    def next_similarity(self, vectors: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The cosine of each of these rows to the row stored just after it in its episode (each has one)."""
        if len(self._pair) < len(self.next):
            grown = len(self.next)
            self._pair = np.concatenate([self._pair, np.zeros(grown - len(self._pair), dtype=np.float32)])
            self._pair_with = np.concatenate([self._pair_with, np.full(grown - len(self._pair_with), -2, np.int64)])
        after = self.next[positions]
        stale = positions[self._pair_with[positions] != after]
        if len(stale):
            pairs = self.next[stale]
            self._pair[stale] = np.einsum("ij,ij->i", vectors[stale], vectors[pairs])
            self._pair_with[stale] = pairs
        return self._pair[positions]
