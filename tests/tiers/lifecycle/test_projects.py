"""Another project's profile entries leave the profile while it is not current, and come back when it is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tiers.errors import ProfileCapExceeded
from tiers.lifecycle import projects
from tiers.memory import Memory
from tiers.records import Kind, MemoryIn, Tier
from tiers.storage.hot import Entry

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def entry(value: str, at: float = 0, pinned: bool = False) -> Entry:
    return Entry(value=value, updated_at=day(at), pinned=pinned)


def test_a_key_names_its_project_and_a_value_is_read_as_keys_spell_it() -> None:
    assert projects.project_of("project.billing.database") == "billing"
    assert projects.project_of("project.Mobile_App.framework") == "mobile_app"
    assert [projects.project_of(k) for k in ("project.billing", "project", "projects.x.y", "diet")] == [None] * 4
    assert projects.name("  Mobile App ") == projects.name("mobile-app") == "mobile_app"


def test_only_another_projects_entries_are_away_and_only_once_the_time_has_passed() -> None:
    profile = {
        "current_project": entry("Search", at=10),
        "project.billing.database": entry("Postgres", at=5),
        "project.billing.queue": entry("RabbitMQ", at=25),  # changed after the switch: its own time counts
        "project.billing.auth": entry("OAuth2", at=1, pinned=True),
        "project.search.index": entry("Tantivy", at=12),
        "diet": entry("vegan", at=0),
    }
    assert projects.away(profile, day(39), 30) == []
    assert projects.away(profile, day(40), 30) == ["project.billing.database"]
    assert projects.away(profile, day(55), 30) == ["project.billing.database", "project.billing.queue"]
    assert projects.away(profile, day(55), 0) == []  # 0 days: the rule is off


def test_nothing_is_away_when_the_current_project_names_no_key() -> None:
    # "the mobile app" matches no `project.<name>.` key: which entries belong to another project is unknown.
    profile = {"current_project": entry("the mobile app"), "project.mobile.framework": entry("Flutter")}
    assert projects.away(profile, day(400), 30) == []
    assert projects.away({"project.billing.db": entry("Postgres")}, day(400), 30) == []  # no current project


def _two_projects(memory: Memory) -> tuple[str, str]:
    memory.set_profile({"current_project": "billing"}, day(0))
    [db] = memory.remember([MemoryIn(content="We use Postgres for billing", key="project.billing.database")], day(1))
    memory.set_profile({"current_project": "search"}, day(10))
    [index] = memory.remember([MemoryIn(content="We use Tantivy for search", key="project.search.index")], day(11))
    return db.id, index.id


def test_a_project_not_current_for_30_days_leaves_the_profile_for_warm_logged_and_protected(memory: Memory) -> None:
    db, _ = _two_projects(memory)
    assert not [m for m in memory.sweep(day(39)).moves if m.src is Tier.HOT]
    report = memory.sweep(day(40))
    assert [(m.key, m.rule) for m in report.moves if m.src is Tier.HOT] == [
        ("project.billing.database", "project_away")
    ]
    assert set(memory.profile()) == {"current_project", "project.search.index"}
    move = next(m for m in memory.moves("project.billing.database") if m.rule == "project_away")
    assert (move.src, move.dst) == ("hot", "warm")
    parked = memory.get(move.rid)
    assert parked.kind is Kind.HISTORY and parked.protected and parked.tier is Tier.WARM
    assert parked.content == "project.billing.database: We use Postgres for billing"
    memory.sweep(day(400))  # protected: it never goes cold while it is the project's current value
    assert memory.get(parked.id).tier is Tier.WARM
    assert "Postgres" in memory.recall("which database does billing use?", day(401)).text
    assert memory.get(db).tier is Tier.WARM


def test_the_project_current_again_brings_its_entries_back(memory: Memory) -> None:
    db, _ = _two_projects(memory)
    memory.sweep(day(40))
    change = memory.set_profile({"current_project": "Billing"}, day(50))
    assert change.entries["project.billing.database"].value == "We use Postgres for billing"
    parked = next(m.rid for m in memory.moves("project.billing.database") if m.rule == "project_away")
    assert set(change.entries["project.billing.database"].sources) == {parked, db}
    back = [m for m in memory.moves("project.billing.database") if m.rule == "project_current"]
    assert [(m.src, m.dst) for m in back] == [("warm", "hot")]
    # search has been current for less than 30 days of its own since: it stays, until the time passes
    assert "project.search.index" in memory.profile()
    memory.sweep(day(79))
    assert "project.search.index" in memory.profile()
    memory.sweep(day(80))
    assert set(memory.profile()) == {"current_project", "project.billing.database"}


def test_a_parked_value_replaced_or_forgotten_since_does_not_come_back(memory: Memory) -> None:
    _two_projects(memory)
    memory.remember([MemoryIn(content="We use Redis for the billing cache", key="project.billing.cache")], day(12))
    memory.sweep(day(45))
    assert not any(k.startswith("project.billing.") for k in memory.profile())
    cache = next(m.rid for m in memory.moves("project.billing.cache") if m.rule == "project_away")
    memory.forget(cache, day(46))
    # a new value set while the project was away is the one the profile keeps
    memory.set_profile({"project.billing.database": "CockroachDB"}, day(47))
    memory.set_profile({"current_project": "search"}, day(48))
    memory.set_profile({"current_project": "billing"}, day(49))
    profile = memory.profile()
    assert profile["project.billing.database"].value == "CockroachDB"
    assert "project.billing.cache" not in profile


def test_an_entry_that_no_longer_fits_the_cap_stays_in_warm(memory: Memory) -> None:
    _two_projects(memory)
    memory.sweep(day(40))
    filler = {f"note{i}": "a long standing preference worth carrying " * 4 for i in range(40)}
    while True:  # fill the profile to its cap
        try:
            memory.set_profile(dict([filler.popitem()]), day(41))
        except ProfileCapExceeded:
            break
    memory.set_profile({"current_project": "billing"}, day(42))
    assert "project.billing.database" not in memory.profile()
    assert memory.profile()["current_project"].value == "billing"
    with pytest.raises(StopIteration):
        next(m for m in memory.moves("project.billing.database") if m.rule == "project_current")
