"""Episodes: the rows of one time and source, linked in the order they were stored, relinked when one leaves."""

from __future__ import annotations

import numpy as np

from tiers.index.episodes import Episodes


def test_rows_are_linked_in_the_order_they_were_stored_and_healed_when_one_leaves() -> None:
    sources = ["chat", "chat", "mail", "chat"]
    occurred = np.array([5, 5, 5, 5], dtype=np.int64)
    created = np.array([1, 3, 2, 2], dtype=np.int64)
    episodes = Episodes()
    episodes.grow(4)
    for position in range(4):
        episodes.link(sources, occurred, created, position)

    assert episodes.near(0, 2) == ([], [3, 1])  # chat: 0 (created 1), 3 (2), 1 (3); mail apart
    assert episodes.near(1, 2) == ([3, 0], []) and episodes.near(2, 2) == ([], [])
    episodes.unlink(sources, occurred, created, 3)
    assert episodes.near(0, 2) == ([], [1]) and episodes.prev[3] == episodes.next[3] == -1


def test_a_load_links_in_bulk_and_its_episodes_are_made_only_when_first_changed() -> None:
    sources = ["a", "a", "b", "a"]
    occurred = np.array([1, 1, 1, 2], dtype=np.int64)
    created = np.array([2, 1, 1, 1], dtype=np.int64)
    episodes = Episodes()
    episodes.grow(4)
    episodes.load(sources, occurred, created, 4)
    assert episodes.order is not None and episodes.near(1, 1) == ([], [0]) and episodes.near(3, 1) == ([], [])
    episodes.grow(5)
    episodes.link([*sources, "a"], np.append(occurred, 1), np.append(created, 3), 4)
    assert episodes.order is None and episodes.near(1, 2) == ([], [0, 4])


def test_the_cosine_to_the_next_row_is_made_once_and_again_when_the_link_changes() -> None:
    vectors = np.eye(3, dtype=np.float32)
    vectors[2] = [1, 0, 0]
    sources, occurred, created = ["s"] * 3, np.zeros(3, np.int64), np.arange(3, dtype=np.int64)
    episodes = Episodes()
    episodes.grow(3)
    for position in range(3):
        episodes.link(sources, occurred, created, position)
    assert episodes.next_similarity(vectors, np.array([0])).tolist() == [0.0]  # 0 then 1: orthogonal
    episodes.unlink(sources, occurred, created, 1)
    assert episodes.next_similarity(vectors, np.array([0])).tolist() == [1.0]  # now 0 then 2: the same
