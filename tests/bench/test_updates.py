"""The knowledge-update benchmark's scoring is what it says: first means first, a mark counts only when it names
the later memory, a hint counts only when it names the earlier one. No model and no timing here."""

from __future__ import annotations

from dataclasses import dataclass

from tests.bench import updates


@dataclass(frozen=True)
class _Record:
    id: str


@dataclass(frozen=True)
class _Later:
    id: str


@dataclass(frozen=True)
class _Hit:
    record: _Record
    later: _Later | None = None


@dataclass(frozen=True)
class _Bare:  # a hit from a product without marks: no `later` at all
    record: _Record


def test_ranked_first_and_within_count_positions_only() -> None:
    assert updates.ranked_first(["new", "old"], "new")
    assert not updates.ranked_first(["old", "new"], "new")
    assert not updates.ranked_first([], "new")
    assert updates.within(["a", "b", "c", "d", "old"], "old") and not updates.within(
        ["a", "b", "c", "d", "e", "old"], "old"
    )


def test_a_mark_counts_only_when_it_names_the_later_memory() -> None:
    hits = [_Hit(_Record("new")), _Hit(_Record("old"), _Later("new"))]
    assert updates.marked_by(hits, "old", "new") is True
    assert updates.marked_by([_Hit(_Record("old"), _Later("other"))], "old", "new") is False
    assert updates.marked_by([_Hit(_Record("old"))], "old", "new") is False
    assert updates.marked_by([_Bare(_Record("old"))], "old", "new") is False
    assert updates.marked_by(hits[:1], "old", "new") is None  # not shown: not counted


def test_names_reads_may_update_and_is_empty_without_it() -> None:
    @dataclass(frozen=True)
    class Stored:
        id: str
        may_update: tuple[_Later, ...] = ()

    assert updates.names(Stored("n", (_Later("a"), _Later("b")))) == ("a", "b")
    assert updates.names(Stored("n")) == ()
    assert updates.names(_Record("n")) == ()


def test_rows_turn_counts_into_shares_and_merge_adds_halves() -> None:
    a = updates.Score(n_items=4, n_ordinary=10, history=3, shown_old=2, marked=1, hint_right=2, false_alarms=1)
    a.first["question"] = 4
    b = updates.Score(n_items=4, n_ordinary=10, history=1)
    both = updates.Score()
    both.merge(a)
    both.merge(b)
    table = {metric: value for metric, value, _, _ in updates.rows(both)}
    assert table["current ranked first, question (limit 10)"] == "50.0%"
    assert table["history: older one in top 5"] == "50.0%"
    assert table["older one marked where shown"] == "50.0%"
    assert table["false alarms on ordinary notes"] == "5.0%"


def test_halves_split_by_parity_and_cover_everything() -> None:
    values = list(range(11))
    a, b = updates.half(values, "A"), updates.half(values, "B")
    assert a == [0, 2, 4, 6, 8, 10] and b == [1, 3, 5, 7, 9]


def test_above_is_the_order_of_the_pair_alone() -> None:
    assert updates.above(["other", "new", "old"], "new", "old")
    assert updates.above(["other", "new"], "new", "old")
    assert not updates.above(["old", "new"], "new", "old")
    assert not updates.above(["old"], "new", "old")


def test_a_mark_naming_another_memory_is_counted_wrong() -> None:
    assert updates.wrongly_marked([_Hit(_Record("old"), _Later("other"))], "old", "new")
    assert not updates.wrongly_marked([_Hit(_Record("old"), _Later("new"))], "old", "new")
    assert not updates.wrongly_marked([_Hit(_Record("old"))], "old", "new")
    assert not updates.wrongly_marked([_Hit(_Record("new"))], "old", "new")
