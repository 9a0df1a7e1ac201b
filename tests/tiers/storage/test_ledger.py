"""The ledger: use counters for heat and the log of every move, in SQLite, shared by processes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.helpers import T0
from tiers.storage.ledger import _SCHEMA, Ledger, Move, Usage


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    opened = Ledger(tmp_path / "ledger.sqlite")
    yield opened
    opened.close()


def test_touch_counts_uses_and_repeats_apart_and_keeps_the_latest_touch(ledger: Ledger) -> None:
    ledger.touch(["a", "b"], T0)
    ledger.touch(["a"], T0 + timedelta(days=2))
    ledger.touch(["a"], T0 + timedelta(days=1), repeat=True)

    assert ledger.usage() == {
        "a": Usage(uses=2, repeats=1, last_touch=T0 + timedelta(days=2)),
        "b": Usage(uses=1, repeats=0, last_touch=T0),
    }
    assert ledger.usage(["b", "missing"]) == {"b": Usage(1, 0, T0)}


def test_forget_drops_the_counters_of_a_record(ledger: Ledger) -> None:
    ledger.touch(["a", "b"], T0)

    ledger.forget("a")

    assert list(ledger.usage()) == ["b"]


def test_hints_come_back_by_older_memory_latest_named_first_and_go_with_a_forgotten_record(ledger: Ledger) -> None:
    ledger.hint([("berlin", "lisbon")], T0)
    ledger.hint([("berlin", "porto"), ("lisbon", "porto"), ("berlin", "lisbon")], T0 + timedelta(days=1))

    assert ledger.hinted(["berlin", "lisbon", "porto", "missing"]) == {
        "berlin": ["porto", "lisbon"],
        "lisbon": ["porto"],
    }
    ledger.forget("porto")  # as newer
    assert ledger.hinted(["berlin", "lisbon"]) == {"berlin": ["lisbon"]}
    ledger.forget("berlin")  # as older
    assert ledger.hinted(["berlin", "lisbon"]) == {}


def test_moves_come_back_newest_first_and_filtered_by_id_or_profile_key(ledger: Ledger) -> None:
    ledger.log([Move(T0, "aaaaaaaaaaaa", "new", "warm", "remember:note")])
    ledger.log([Move(T0 + timedelta(days=50), "aaaaaaaaaaaa", "warm", "cold", "heat", heat=0.08)])
    ledger.log([Move(T0 + timedelta(days=60), "hot:city", "hot", "warm", "hot_idle", key="city")])

    everything = ledger.moves()
    assert [(m.rid, m.rule) for m in everything] == [
        ("hot:city", "hot_idle"),
        ("aaaaaaaaaaaa", "heat"),
        ("aaaaaaaaaaaa", "remember:note"),
    ]
    assert everything[1].heat == 0.08
    assert everything[1].at == T0 + timedelta(days=50)
    assert [m.rule for m in ledger.moves("aaaaaaaaaaaa")] == ["heat", "remember:note"]
    assert [m.rule for m in ledger.moves("city")] == ["hot_idle"]
    assert len(ledger.moves(limit=1)) == 1


def test_counters_and_state_persist_and_are_seen_by_a_second_connection(ledger: Ledger, tmp_path: Path) -> None:
    other = Ledger(tmp_path / "ledger.sqlite")
    try:
        assert [ledger.bump("writes"), other.bump("writes"), ledger.bump("writes")] == [1, 2, 3]
        ledger.set_state("hot_candidates", "[]")
        other.set_state("hot_candidates", '[{"id": "x"}]')
        ledger.touch(["a"], T0)

        assert ledger.get_state("hot_candidates") == '[{"id": "x"}]'
        assert other.usage() == {"a": Usage(1, 0, T0)}
        ledger.reset("writes")
        assert other.bump("writes") == 1
    finally:
        other.close()


def test_reopening_a_ledger_keeps_its_data_and_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    first = Ledger(path)
    first.touch(["a"], T0)
    first.close()

    again = Ledger(path)
    try:
        assert again.usage() == {"a": Usage(1, 0, T0)}
    finally:
        again.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(_SCHEMA)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_restored_moves_are_appended_in_order_and_a_repeat_is_skipped(ledger: Ledger) -> None:
    ledger.log([Move(T0, "aaaaaaaaaaaa", "new", "warm", "remember:note")])
    moves = [
        Move(T0, "aaaaaaaaaaaa", "new", "warm", "remember:note"),
        Move(T0 + timedelta(days=1), "aaaaaaaaaaaa", "warm", "cold", "heat", 0.05),
        Move(T0 + timedelta(days=1), "hot:name", "new", "hot", "profile", None, "name", "Ana"),
    ]

    added = ledger.restore_moves(moves)
    again = ledger.restore_moves(moves)

    assert (added, again) == (2, 0)
    assert [(m.rid, m.dst, m.key, m.note) for m in ledger.all_moves()] == [
        ("aaaaaaaaaaaa", "warm", None, None),
        ("aaaaaaaaaaaa", "cold", None, None),
        ("hot:name", "hot", "name", "Ana"),
    ]


def test_restored_uses_keep_the_larger_counts_and_the_later_touch(ledger: Ledger) -> None:
    ledger.touch(["a"], T0 + timedelta(days=3))

    ledger.restore_uses({"a": Usage(5, 0, T0), "b": Usage(1, 2, T0)})
    ledger.restore_uses({"a": Usage(5, 0, T0)})

    assert ledger.usage() == {"a": Usage(5, 0, T0 + timedelta(days=3)), "b": Usage(1, 2, T0)}


def test_all_provenance_lists_every_link_by_key_then_record(ledger: Ledger) -> None:
    ledger.link("name", [("bbbbbbbbbbbb", "Ana"), ("aaaaaaaaaaaa", "Ana S")])
    ledger.link("diet", [("cccccccccccc", "vegan")])

    assert ledger.all_provenance() == [
        ("diet", "cccccccccccc", "vegan"),
        ("name", "aaaaaaaaaaaa", "Ana S"),
        ("name", "bbbbbbbbbbbb", "Ana"),
    ]
