"""A project's memory with the user's beside it: writes go to their scope, reads take both, nothing else crosses."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import T0
from tiers.errors import NotFound, ProfileCapExceeded
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn
from tiers.scopes.recall import HEADERS
from tiers.scopes.routing import Scope
from tiers.scopes.scoped import Scoped


@pytest.fixture
def home(tmp_path: Path, embedder: FastEmbedder) -> Iterator[tuple[Memory, Memory, Memory]]:
    """Two projects and the user scope of one data folder, each a real memory on LanceDB."""
    made = [Memory(tmp_path / name, embedder, MemorySettings(cap_tokens=60)) for name in ("alpha", "beta", "user")]
    yield made[0], made[1], made[2]
    for memory in made:
        memory.close()


def test_a_fact_about_the_person_said_in_one_project_is_recalled_in_the_other_and_a_project_fact_is_not(
    home: tuple[Memory, Memory, Memory],
) -> None:
    alpha, beta, user = home
    said = Scoped(alpha, user).remember(
        [MemoryIn(content="I am allergic to shellfish"), MemoryIn(content="Alpha ships on Fridays")], T0
    )
    found = Scoped(beta, user).recall("what am I allergic to? when do we ship?", T0 + timedelta(hours=1))

    assert [p.scope for p in said] == [Scope.USER, Scope.PROJECT]
    assert [(h.scope, h.ranked.record.content) for h in found.hits] == [(Scope.USER, "I am allergic to shellfish")]
    assert found.text.startswith(HEADERS[Scope.USER])
    assert "Alpha ships" not in found.text


def test_recall_across_scopes_marks_each_and_keeps_within_the_limit_and_the_budget(
    home: tuple[Memory, Memory, Memory],
) -> None:
    alpha, _, user = home
    scoped = Scoped(alpha, user)
    scoped.remember([MemoryIn(content=f"Alpha note {i}: the cache warms in {i} minutes") for i in range(8)], T0)
    scoped.remember([MemoryIn(content="My favourite editor is Helix"), MemoryIn(content="I live in Porto")], T0)

    wide = scoped.recall("which editor do I like, and how long does the cache take?", T0, limit=5)
    tight = scoped.recall("which editor do I like, and how long does the cache take?", T0, limit=50, max_tokens=60)

    assert len(wide.hits) == 5
    assert {h.scope for h in wide.hits} == {Scope.USER, Scope.PROJECT}
    assert "My favourite editor is Helix" in [h.ranked.record.content for h in wide.hits]
    assert wide.text.index(HEADERS[Scope.PROJECT]) < wide.text.index(HEADERS[Scope.USER])
    assert tight.tokens <= 60 and tight.left_out > 0
    assert "more left out by the 60-token budget" in tight.text


def test_a_profile_key_goes_where_its_name_says_stays_where_it_is_and_moves_when_a_scope_is_named(
    home: tuple[Memory, Memory, Memory],
) -> None:
    alpha, beta, user = home
    alpha.set_profile({"editor": "vim"}, T0)  # said in the project before any routing
    scoped = Scoped(alpha, user)

    scoped.set_profile({"name": "Ada", "current_project": "alpha", "editor": "helix"}, T0)
    moved = scoped.set_profile({"editor": "helix"}, T0 + timedelta(minutes=1), scope=Scope.USER)

    assert set(user.profile()) == {"name", "editor"} and set(alpha.profile()) == {"current_project"}
    assert moved.moved == ("editor",)
    assert any("editor: helix" in r.content for r in alpha.store.get(list(moved.demoted)).values())  # history kept
    assert set(Scoped(beta, user).profiles().entries[Scope.USER]) == {"name", "editor"}
    with pytest.raises(NotFound):
        scoped.set_profile({}, T0, unset=["nickname"])


def test_a_projects_profile_is_capped_with_the_users_beside_it(home: tuple[Memory, Memory, Memory]) -> None:
    alpha, _, user = home
    scoped = Scoped(alpha, user)
    scoped.set_profile({"name": "Ada " * 40}, T0)  # most of the shared cap, in the user's profile

    with pytest.raises(ProfileCapExceeded, match="the user profile's"):
        scoped.set_profile({"current_project": "alpha " * 20}, T0)
    assert "current_project" not in alpha.profile()


def test_forget_and_promote_find_a_memory_in_whichever_scope_holds_it(home: tuple[Memory, Memory, Memory]) -> None:
    alpha, beta, user = home
    [fact] = Scoped(alpha, user).remember([MemoryIn(content="My dentist is Dr. Silva")], T0)
    in_beta = Scoped(beta, user)

    scope, promoted = in_beta.promote(fact.stored.id, T0, key="health.dentist")
    assert (scope, promoted.outcome) == (Scope.USER, "promoted") and "health.dentist" in user.profile()
    scope, forgotten = in_beta.forget(fact.stored.id, T0)

    assert scope is Scope.USER and forgotten.orphaned_profile_keys == ("health.dentist",)
    with pytest.raises(NotFound, match="this project or the user scope"):
        Scoped(alpha, user).forget(fact.stored.id, T0)


class _Counting:
    """The real model, counting the query texts it is asked to embed."""

    def __init__(self, inner: FastEmbedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.queries: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.queries += texts
        return self.inner.embed_queries(texts)


def test_a_recall_across_both_scopes_embeds_its_query_once(tmp_path: Path, embedder: FastEmbedder) -> None:
    counting = _Counting(embedder)
    project, user = (Memory(tmp_path / name, counting) for name in ("alpha", "user"))
    try:
        scoped = Scoped(project, user)
        scoped.remember([MemoryIn(content="I live in Porto"), MemoryIn(content="Alpha ships on Fridays")], T0)
        counting.queries.clear()

        found = scoped.recall("where do I live?", T0)

        assert [h.ranked.record.content for h in found.hits][:1] == ["I live in Porto"]
        assert counting.queries.count("where do I live?") == 1
    finally:
        project.close()
        user.close()


def test_an_update_of_the_persons_fact_read_as_a_note_goes_beside_it_and_a_project_change_stays(
    home: tuple[Memory, Memory, Memory],
) -> None:
    alpha, beta, user = home
    scoped = Scoped(alpha, user)
    [fact] = scoped.remember([MemoryIn(content="I work at Globex as a data engineer.")], T0)
    later = T0 + timedelta(days=90)
    [joined, build, note] = scoped.remember(
        [
            MemoryIn(content="I joined Initech this month as a staff engineer."),
            MemoryIn(content="I switched this repo's build to Bazel."),
            MemoryIn(content="I had lunch with Anna near the office."),
        ],
        later,
    )

    assert fact.scope is Scope.USER
    assert (joined.scope, build.scope, note.scope) == (Scope.USER, Scope.PROJECT, Scope.PROJECT)
    # Said in another project, it still finds the person's fact it may update.
    [moved] = Scoped(beta, user).remember(
        [MemoryIn(content="I moved to Globex's Lisbon office, now I work there.")], later
    )
    assert moved.scope is Scope.USER


def test_an_update_said_without_the_key_of_the_persons_entry_flags_that_entry(
    home: tuple[Memory, Memory, Memory],
) -> None:
    """The entry lives in the user's profile; an update that stayed in the project could never flag it."""
    alpha, _, user = home
    scoped = Scoped(alpha, user)
    [fact] = scoped.remember([MemoryIn(content="I work at Globex as a data engineer.", key="job")], T0)
    [joined] = scoped.remember(
        [MemoryIn(content="I joined Initech this month as a staff engineer.")], T0 + timedelta(days=90)
    )

    assert (fact.scope, joined.scope) == (Scope.USER, Scope.USER)
    assert user.flags()["job"]["by"] == joined.stored.id
    assert alpha.flags() == {}
