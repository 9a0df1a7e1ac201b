"""The hot profile file: atomic writes, a hard token cap that names what could go, corrupt files left alone."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import T0
from tiers.errors import CorruptProfile, InvalidInput, ProfileCapExceeded
from tiers.storage import hot
from tiers.storage.hot import Entry, HotProfile, demotion_candidates, render, with_value


@pytest.fixture
def profile(tmp_path: Path) -> HotProfile:
    return HotProfile(tmp_path / "profile.json", cap_tokens=20)


def put(profile: HotProfile, **values: str) -> None:
    with profile.editing() as entries:
        for key, value in values.items():
            entries[key] = with_value(entries.get(key), value, T0)


def test_a_missing_file_is_an_empty_profile(profile: HotProfile) -> None:
    assert profile.entries() == {}
    assert profile.tokens() == 0
    assert not profile.path.exists()


def test_an_edit_is_written_as_versioned_json_with_no_temporary_file_left(profile: HotProfile) -> None:
    put(profile, name="Ana")

    body = json.loads(profile.path.read_text())
    assert body == {
        "version": 1,
        "entries": {"name": {"value": "Ana", "updated_at": "2026-01-05T09:00:00Z", "pinned": False, "sources": []}},
    }
    assert sorted(p.name for p in profile.path.parent.iterdir()) == ["profile.json", "profile.json.lock"]
    assert HotProfile(profile.path).entries() == {"name": Entry("Ana", T0)}


def test_a_write_that_fails_half_way_leaves_the_old_file_intact(
    profile: HotProfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(profile, name="Ana")
    before = profile.path.read_bytes()

    def crash(body: Any, handle: Any, **_: Any) -> None:
        handle.write('{"version": 1, "entr')
        raise OSError("disk full")

    monkeypatch.setattr(hot.json, "dump", crash)
    with pytest.raises(OSError, match="disk full"):
        put(profile, name="Bea")

    assert profile.path.read_bytes() == before
    assert profile.entries()["name"].value == "Ana"


def test_an_edit_whose_block_raises_writes_nothing(profile: HotProfile) -> None:
    put(profile, name="Ana")
    before = profile.path.read_bytes()

    with pytest.raises(RuntimeError), profile.editing() as entries:
        entries["city"] = Entry("Lisbon", T0)
        raise RuntimeError("changed my mind")

    assert profile.path.read_bytes() == before


def test_an_edit_that_changes_nothing_does_not_rewrite_the_file(profile: HotProfile) -> None:
    put(profile, name="Ana")
    stamp = profile.path.stat().st_mtime_ns

    with profile.editing():
        pass

    assert profile.path.stat().st_mtime_ns == stamp


def test_a_change_past_the_cap_is_refused_naming_unpinned_entries_oldest_first(profile: HotProfile) -> None:
    with profile.editing() as entries:
        entries["name"] = Entry("Ana", T0, pinned=True)
        entries["city"] = Entry("Lisbon", T0 + timedelta(days=2))
        entries["team"] = Entry("core", T0 + timedelta(days=1))
    before = profile.path.read_bytes()

    with pytest.raises(ProfileCapExceeded) as refused:
        put(profile, project="a long description of the project that will not fit")

    assert refused.value.candidates == ["team", "city"]
    assert "over its cap of 20" in str(refused.value)
    assert "(candidates: team, city)" in str(refused.value)
    assert profile.path.read_bytes() == before


def test_a_refusal_when_every_entry_is_pinned_says_so(tmp_path: Path) -> None:
    profile = HotProfile(tmp_path / "profile.json", cap_tokens=5)
    with profile.editing() as entries:
        entries["name"] = Entry("Ana", T0, pinned=True)

    with pytest.raises(ProfileCapExceeded, match="none: every entry is pinned"):
        put(profile, city="Lisbon, Portugal")


def test_a_profile_already_over_a_lowered_cap_may_still_shrink(tmp_path: Path) -> None:
    path = tmp_path / "profile.json"
    put(HotProfile(path, cap_tokens=1_000), name="Ana", bio="writes Python and Rust for a living")
    smaller = HotProfile(path, cap_tokens=5)

    with smaller.editing() as entries:
        del entries["bio"]

    assert list(smaller.entries()) == ["name"]


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"version": 1, "entries": {"name": {"value": "Ana"',
        b'{"entries": {}}',
        b'{"version": 1, "entries": {"name": {"value": "Ana", "updated_at": "someday"}}}',
        b'{"version": 1, "entries": {"bad key!": {"value": "Ana", "updated_at": "2026-01-01"}}}',
        b"\xff\xfe\x00garbage",
    ],
)
def test_a_corrupt_file_is_an_error_naming_its_path_and_is_never_overwritten(profile: HotProfile, body: bytes) -> None:
    profile.path.write_bytes(body)

    with pytest.raises(CorruptProfile) as reading:
        profile.entries()
    with pytest.raises(CorruptProfile), profile.editing() as entries:
        entries["name"] = Entry("Bea", T0)

    assert str(profile.path) in str(reading.value)
    assert "left untouched" in str(reading.value)
    assert profile.path.read_bytes() == body


def test_a_change_made_by_another_process_is_read_back(profile: HotProfile) -> None:
    put(profile, name="Ana")
    assert profile.entries()["name"].value == "Ana"

    put(HotProfile(profile.path), name="Beatriz")

    assert profile.entries()["name"].value == "Beatriz"


def test_setting_the_same_value_merges_sources_and_a_new_value_restarts_them() -> None:
    first = with_value(None, "vegetarian", T0, ("aaaaaaaaaaaa",))
    same = with_value(first, "vegetarian", T0 + timedelta(days=1), ("bbbbbbbbbbbb",))
    pinned = Entry(same.value, same.updated_at, pinned=True, sources=same.sources)
    changed = with_value(pinned, "vegan", T0 + timedelta(days=2), ("cccccccccccc",))

    assert same == Entry("vegetarian", T0, sources=("aaaaaaaaaaaa", "bbbbbbbbbbbb"))
    assert changed == Entry("vegan", T0 + timedelta(days=2), pinned=True, sources=("cccccccccccc",))


@pytest.mark.parametrize(("value", "problem"), [("x" * 1_001, "at most 1000 characters"), ("  ", "cannot be blank")])
def test_a_value_too_long_or_blank_is_refused(value: str, problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem):
        with_value(None, value, T0)


def test_render_is_one_sorted_key_value_line_per_entry() -> None:
    entries = {"project": Entry("memtiers", T0), "name": Entry("Ana", T0)}

    assert render(entries) == "name: Ana\nproject: memtiers"
    assert render({}) == ""


def test_demotion_candidates_skip_pinned_entries() -> None:
    entries = {"a": Entry("1", T0, pinned=True), "b": Entry("2", T0 + timedelta(days=1)), "c": Entry("3", T0)}

    assert demotion_candidates(entries) == ["c", "b"]
