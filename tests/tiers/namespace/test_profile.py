"""Profile editing (tiers/namespace/profile.py): what an edit does to the profile, the warm tier and the move log."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.helpers import T0
from tiers.errors import NotFound, ProfileCapExceeded
from tiers.memory import Memory
from tiers.namespace.profile import Edit
from tiers.records import Kind, MemoryIn, Tier


def test_an_edit_with_sources_records_them_and_logs_the_move_from_their_tier(memory: Memory) -> None:
    [fact] = memory.remember([MemoryIn(content="We use Postgres 16 for the billing service")], T0)

    change = memory.edit_profile(Edit({"db": "Postgres 16"}, sources={"db": (fact.id,)}, rule="promote"), T0)

    assert change.entries["db"].sources == (fact.id,)
    [logged] = [m for m in memory.moves(fact.id) if m.dst == "hot"]
    assert (logged.src, logged.rule, logged.key) == ("warm", "promote", "db")


def test_replacing_a_value_writes_the_old_one_to_warm_and_supersedes_its_source(memory: Memory) -> None:
    [first] = memory.remember([MemoryIn(content="I live in Lisbon", key="city")], T0)
    later = T0 + timedelta(days=3)

    change = memory.set_profile({"city": "Porto"}, later)

    [history_id] = change.demoted
    history = memory.get(history_id)
    assert (history.content, history.kind, history.tier) == ("city: I live in Lisbon", Kind.HISTORY, Tier.WARM)
    assert history.metadata["sources"] == first.id
    assert memory.get(first.id).superseded_by == "profile:city"
    assert memory.profile()["city"].value == "Porto"


def test_setting_the_same_value_again_demotes_nothing(memory: Memory) -> None:
    memory.set_profile({"editor": "vim"}, T0)

    change = memory.set_profile({"editor": "vim"}, T0 + timedelta(days=1))

    assert change.demoted == ()
    assert memory.store.count(Tier.WARM) == 0


def test_unset_pin_and_unpin_of_a_missing_key_name_the_keys_there_are(memory: Memory) -> None:
    memory.set_profile({"editor": "vim"}, T0)

    with pytest.raises(NotFound, match="entries are: editor"):
        memory.set_profile({}, T0, unset=["theme"])


def test_an_edit_past_the_cap_changes_nothing_and_names_what_could_go(memory: Memory) -> None:
    memory.set_profile({key: key * 900 for key in "abcd"}, T0)
    before = memory.profile()

    with pytest.raises(ProfileCapExceeded, match="candidates: a, b, c, d"):
        memory.set_profile({"e": "e" * 900}, T0)

    assert memory.profile() == before
    assert memory.store.count(Tier.WARM) == 0
