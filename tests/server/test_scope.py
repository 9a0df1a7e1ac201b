"""Project scope from the client's roots: two workspaces, two namespaces, with no config edit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ListRootsResult, Root, TextResourceContents

from server.scope import from_roots, namespace_of_root
from server.settings import Settings
from tests.helpers import call, count_rows, text
from tests.server.http_running import bearer, running_http
from tiers.model.embedder import FastEmbedder

pytestmark = pytest.mark.anyio
TOKEN = "scope-token-0123456789abcdef"


def test_a_file_root_names_its_folder_made_safe_with_a_short_hash_of_its_path() -> None:
    name, path = namespace_of_root("file:///home/ada/My%20Project/") or ("", "")
    twin, _ = namespace_of_root("file:///srv/My%20Project") or ("", "")

    assert path == "/home/ada/My Project"
    assert name.startswith("My-Project-") and len(name) == len("My-Project-") + 8
    assert twin.startswith("My-Project-") and twin != name  # two checkouts named alike stay apart
    assert (namespace_of_root("file:///C:/work/app") or ("",))[0].startswith("app-")
    assert namespace_of_root("https://example.com/repo") is None
    assert namespace_of_root("file:///") is None


def test_no_file_root_keeps_the_default_namespace_and_says_why() -> None:
    chosen = from_roots(["https://example.com/x"], "default")

    assert (chosen.namespace, chosen.root) == ("default", None)
    assert "names none" in chosen.note and "no workspace root" in chosen.note


@pytest.fixture
def unnamed(tmp_path: Path, embedder: FastEmbedder) -> Iterator[tuple[str, Path]]:
    home = tmp_path / "home"
    with running_http(Settings.from_env({"MEMTIERS_HOME": str(home), "MEMTIERS_HTTP_TOKEN": TOKEN}), embedder) as url:
        yield url, home


@asynccontextmanager
async def client_with_roots(url: str, roots: list[str] | None, mode: str = "legacy") -> AsyncIterator[Client]:
    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=uri) for uri in roots or []])  # type: ignore[arg-type]

    async with (
        httpx2.AsyncClient(headers=bearer(TOKEN), timeout=httpx2.Timeout(60, read=300)) as http,
        Client(
            streamable_http_client(url, http_client=http),  # type: ignore[arg-type]
            mode=mode,  # type: ignore[arg-type]
            list_roots_callback=list_roots if roots is not None else None,
        ) as client,
    ):
        yield client


async def profile_text(client: Client) -> str:
    contents = (await client.read_resource("memory://profile")).contents[0]
    assert isinstance(contents, TextResourceContents)
    return contents.text


async def test_two_clients_with_different_roots_work_in_different_namespaces(unnamed: tuple[str, Path]) -> None:
    url, home = unnamed
    alpha, beta = "file:///work/alpha", "file:///work/beta"
    async with client_with_roots(f"{url}/mcp", [alpha]) as a, client_with_roots(f"{url}/mcp", [beta]) as b:
        await call(a, "remember", content="Alpha deploys with Helm charts")
        await call(b, "remember", content="Beta deploys with a shell script")
        in_a = await call(a, "recall", query="how does it deploy?")
        in_b = await call(b, "recall", query="how does it deploy?")
        a_profile, b_profile = await profile_text(a), await profile_text(b)

    a_name, b_name = namespace_of_root(alpha)[0], namespace_of_root(beta)[0]  # type: ignore[index]
    assert [m["content"] for m in in_a["memories"]] == ["Alpha deploys with Helm charts"]
    assert [m["content"] for m in in_b["memories"]] == ["Beta deploys with a shell script"]
    assert a_profile.startswith(f"(namespace {a_name}, from the workspace root /work/alpha)")
    assert b_profile.startswith(f"(namespace {b_name}, from the workspace root /work/beta)")
    assert {p.name for p in (home / "namespaces").iterdir()} >= {a_name, b_name, "default", "user"}


async def test_a_client_without_roots_keeps_default_and_the_log_says_so_once(
    unnamed: tuple[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    url, home = unnamed
    async with client_with_roots(f"{url}/mcp", None) as client, client_with_roots(f"{url}/mcp", []) as other:
        await call(client, "remember", content="Nothing names this project")
        text = await profile_text(client)
        found = await call(other, "recall", query="which project?")

    said = [r.getMessage() for r in caplog.records if "names none" in r.getMessage()]
    assert said == [
        "namespace default: the host's config names none and the client does not offer its roots "
        "(set MEMTIERS_NAMESPACE, or a URL /mcp/<namespace>, to name one)"
    ]
    assert text == "(the profile is empty)"  # the agent's profile is unchanged
    assert [m["content"] for m in found["memories"]] == ["Nothing names this project"]
    assert sorted(p.name for p in (home / "namespaces").iterdir()) == ["default", "user"]  # user: every one reads it


async def test_a_namespace_named_by_the_url_is_kept_whatever_the_roots(unnamed: tuple[str, Path]) -> None:
    url, home = unnamed
    async with client_with_roots(f"{url}/mcp/named", ["file:///work/alpha"]) as client:
        await call(client, "remember", content="The URL names this namespace")
        text = await profile_text(client)

    assert not text.startswith("(namespace")
    assert (home / "namespaces" / "named").is_dir()
    assert not (home / "namespaces" / namespace_of_root("file:///work/alpha")[0]).exists()  # type: ignore[index]


async def test_a_modern_era_client_keeps_default_as_the_protocol_has_no_roots_request(
    unnamed: tuple[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    url, home = unnamed
    async with client_with_roots(f"{url}/mcp", ["file:///work/alpha"], mode="2026-07-28") as client:
        await call(client, "remember", content="A modern client's memory")

    assert any("protocol 2026-07-28 has no roots/list" in r.getMessage() for r in caplog.records)
    assert sorted(p.name for p in (home / "namespaces").iterdir()) == ["default", "user"]


async def test_over_stdio_the_one_clients_roots_pick_the_namespace(tmp_path: Path, embedder: FastEmbedder) -> None:
    from server.app import build_server

    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home")})

    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///work/gamma")])  # type: ignore[arg-type]

    async with Client(build_server(settings, embedder=embedder), mode="legacy", list_roots_callback=list_roots) as c:
        await call(c, "remember", content="Gamma uses tabs, not spaces")
        text = await profile_text(c)

    gamma = namespace_of_root("file:///work/gamma")[0]  # type: ignore[index]
    assert text.startswith(f"(namespace {gamma}, from the workspace root /work/gamma)")
    assert (tmp_path / "home" / "namespaces" / gamma / "lance").is_dir()


# the user scope: facts about the person, shared by every project's namespace


async def test_two_workspaces_share_one_user_scope_and_keep_their_project_facts_apart(
    unnamed: tuple[str, Path],
) -> None:
    url, home = unnamed
    alpha, beta = "file:///work/alpha", "file:///work/beta"
    async with client_with_roots(f"{url}/mcp", [alpha]) as a, client_with_roots(f"{url}/mcp", [beta]) as b:
        said = [{"content": "I am allergic to shellfish"}, {"content": "Alpha's staging database listens on port 5433"}]
        told = await call(a, "remember", memories=said)
        await call(a, "profile", set={"name": "Ada", "current_project": "alpha"})
        in_b = await b.call_tool("recall", {"query": "what am I allergic to, and which port does staging use?"})
        b_profile, b_reads = await call(b, "profile"), await profile_text(b)
        in_a = await call(a, "recall", query="which port does staging use?")

    a_name, b_name = namespace_of_root(alpha)[0], namespace_of_root(beta)[0]  # type: ignore[index]
    assert [s["scope"] for s in told["stored"]] == ["user", "project"]
    found = in_b.structured_content["memories"]  # type: ignore[index]
    assert [(m["scope"], m["content"]) for m in found] == [("user", "I am allergic to shellfish")]
    assert "user scope (shared by every project):" in text(in_b) and "5433" not in text(in_b)
    assert {k: e["scope"] for k, e in b_profile["entries"].items()} == {"name": "user"}  # not alpha's project
    assert b_reads == (
        f"(namespace {b_name}, from the workspace root /work/beta)\n"
        f"user scope (shared by every project):\nname: Ada\nproject scope (namespace {b_name}):\n(empty)"
    )
    assert any(m["content"].startswith("Alpha's staging") and m["scope"] == "project" for m in in_a["memories"])
    assert count_rows(home / "namespaces" / "user") == 1 and count_rows(home / "namespaces" / a_name) == 1
    assert count_rows(home / "namespaces" / b_name) == 0


async def test_a_fact_about_the_person_forgotten_in_one_workspace_is_gone_from_every_one(
    unnamed: tuple[str, Path],
) -> None:
    url, _ = unnamed
    alpha, beta = "file:///work/alpha", "file:///work/beta"
    async with client_with_roots(f"{url}/mcp", [alpha]) as a, client_with_roots(f"{url}/mcp", [beta]) as b:
        [stored] = (await call(a, "remember", content="My daughter Mia was born in 2019"))["stored"]
        forgotten = await b.call_tool("forget", {"id": stored["id"]})
        after = await call(a, "recall", query="when was my daughter born?", tiers=["warm", "cold"])

    assert "forgotten" in text(forgotten) and "(user scope)" in text(forgotten)
    assert forgotten.structured_content["scope"] == "user"  # type: ignore[index]
    assert stored["id"] not in [m["id"] for m in after["memories"]]


async def test_with_the_user_scope_off_every_fact_stays_in_its_workspace(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    env = {"MEMTIERS_HOME": str(tmp_path / "home"), "MEMTIERS_HTTP_TOKEN": TOKEN, "MEMTIERS_USER_SCOPE": "off"}
    with running_http(Settings.from_env(env), embedder) as url:
        async with client_with_roots(f"{url}/mcp", ["file:///work/alpha"]) as a:
            stored = await call(a, "remember", content="I am allergic to shellfish")
        async with client_with_roots(f"{url}/mcp", ["file:///work/beta"]) as b:
            found = await call(b, "recall", query="what am I allergic to?")

    assert stored["stored"][0]["scope"] == "project"
    assert found["memories"] == []
    assert not (tmp_path / "home" / "namespaces" / "user").exists()
