"""The web page in a real browser: Debian's chromium driven by Playwright, on a real `memtiers serve --http`.

What a person does on the page is checked where the agent sees it: over MCP, with a real HTTP client.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp_types import TextResourceContents

from tests.helpers import call
from tests.server.web_running import browser_page, chromium_missing, mcp, serving

TOKEN = "web-page-token-0123456789abcdef"
_MISSING = chromium_missing()
if _MISSING and os.environ.get("CI") == "true":
    raise RuntimeError(f"the web page's browser tests must run in CI: {_MISSING}")
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")


@dataclass(frozen=True)
class Served:
    url: str
    ids: dict[str, str]  # what each seeded memory is called here -> its id


async def _seed(client: Client) -> dict[str, str]:
    await call(client, "profile", set={"name": "Ada"})
    said = {
        "allergy": "I am allergic to peanuts",
        "standup": "The team standup moved to 9:30 on Mondays",
        "sister": "My sister Lena lives in Porto",
        "boat": "The rowing club meets at the river on Saturdays",
    }
    ids = {}
    for name, content in said.items():
        stored = await call(client, "remember", content=content)
        ids[name] = stored["stored"][0]["id"]
    return ids


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("web") / "home"
    with serving(home, TOKEN) as url:
        yield Served(url, mcp(url, TOKEN, _seed))


@pytest.fixture
def page(served: Served) -> Iterator[Any]:
    with browser_page() as page:
        yield page


def log_in(page: Any, url: str, token: str = TOKEN) -> Any:
    answer = page.goto(url + "/")
    page.fill("input[name=token]", token)
    with page.expect_navigation():
        page.click("button:has-text('Log in')")
    return answer


def recalled_ids(served: Served, query: str) -> list[str]:
    async def work(client: Client) -> list[str]:
        found = await call(client, "recall", query=query, tiers=["warm", "cold"], limit=50)
        return [m["id"] for m in found["memories"]]

    return mcp(served.url, TOKEN, work)


def profile_resource(served: Served) -> str:
    async def work(client: Client) -> str:
        contents = (await client.read_resource("memory://profile")).contents[0]
        assert isinstance(contents, TextResourceContents)
        return contents.text

    return mcp(served.url, TOKEN, work)


def test_a_person_logs_in_with_the_token_and_sees_the_profile_the_agent_carries(served: Served, page: Any) -> None:
    first = log_in(page, served.url)

    assert first.status == 401  # the login form, asked for before anything is shown
    assert page.url == served.url + "/ns/default"
    assert page.locator("h1").inner_text() == "default: the hot profile"
    assert page.locator("table.user-scope tr[data-key='name']").inner_text().split("\t")[:2] == ["name", "Ada"]
    assert "user scope (shared by every project):\nname: Ada" in page.locator("pre.agent").inner_text()
    assert page.locator("svg.chart").count() == 1
    assert "names no namespace" in page.locator(".scope").inner_text()  # no MEMTIERS_NAMESPACE: roots may rescope
    cookie = next(c for c in page.context.cookies() if c["name"] == "memtiers_session")
    assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
    assert TOKEN not in json.dumps(page.context.cookies())


def test_search_ranks_every_tier_as_recall_does_and_shows_each_hits_tier_date_kind_and_heat(
    served: Served, page: Any
) -> None:
    log_in(page, served.url)
    page.goto(served.url + "/ns/default/search")
    page.fill("input[name=q]", "what am I allergic to?")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("tr.hit")

    first = page.locator("tr.hit").first
    assert first.get_attribute("data-id") == served.ids["allergy"]
    assert "peanuts" in first.inner_text()
    cells = first.locator("td").all_inner_texts()
    assert cells[2] == "warm" and cells[3][:2] == "20" and cells[4] == "health"
    assert float(cells[5]) > 0


def test_a_memory_forgotten_on_the_page_is_gone_from_recall_over_mcp(served: Served, page: Any) -> None:
    standup = served.ids["standup"]
    assert standup in recalled_ids(served, "when is the standup?")
    log_in(page, served.url)
    page.goto(served.url + "/ns/default/search?q=standup")
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.locator(f"tr[data-id='{standup}'] button:has-text('Forget')").click()

    assert f"{standup} forgotten" in page.locator(".said").inner_text()
    assert standup not in recalled_ids(served, "when is the standup?")


def test_a_memory_promoted_on_the_page_is_in_the_profile_resource(served: Served, page: Any) -> None:
    log_in(page, served.url)
    page.goto(served.url + "/ns/default/search?q=where does my sister live")
    row = page.locator(f"tr[data-id='{served.ids['sister']}']")
    row.locator("input[name=key]").fill("family.sister")
    with page.expect_navigation():
        row.locator("button:has-text('Promote to profile')").click()

    assert "promoted to hot as 'family.sister'" in page.locator(".said").inner_text()
    assert "family.sister: My sister Lena lives in Porto" in profile_resource(served)


def test_a_profile_entry_edited_pinned_and_removed_on_the_page_changes_what_the_agent_reads(
    served: Served, page: Any
) -> None:
    log_in(page, served.url)
    page.fill("input[aria-label='new key']", "city")
    page.fill("input[aria-label='new value']", "Lisbon")
    with page.expect_navigation():
        page.click("button:has-text('Add')")
    page.fill("input[aria-label='value of city']", "Porto")
    with page.expect_navigation():
        page.locator("tr:has(input[aria-label='value of city']) button:has-text('Save')").click()
    assert "city: Porto" in profile_resource(served)
    with page.expect_navigation():
        page.locator("tr:has(input[aria-label='value of city']) button:has-text('Pin')").click()
    assert "pinned" in page.locator("tr:has(input[aria-label='value of city'])").inner_text()
    with page.expect_navigation():
        page.locator("tr:has(input[aria-label='value of city']) button:has-text('Remove')").click()

    assert "city" not in profile_resource(served)


def test_a_memory_demoted_on_the_browse_page_goes_cold_and_undo_from_the_move_log_brings_it_back(
    served: Served, page: Any
) -> None:
    boat = served.ids["boat"]
    log_in(page, served.url)
    page.goto(served.url + "/ns/default/browse?tier=warm")
    with page.expect_navigation():
        page.locator(f"tr[data-id='{boat}'] button:has-text('Demote to cold')").click()
    page.goto(served.url + "/ns/default/browse?tier=cold")
    assert page.locator(f"tr[data-id='{boat}']").count() == 1
    page.goto(served.url + f"/ns/default/log?id={boat}")
    assert "demoted by hand" in page.locator("table").inner_text()
    with page.expect_navigation():
        page.click("button:has-text('Undo')")

    assert "undid its demote move" in page.locator(".said").inner_text()
    page.goto(served.url + "/ns/default/browse?tier=warm")
    assert page.locator(f"tr[data-id='{boat}']").count() == 1


def test_an_export_downloads_and_uploads_back_without_duplicates(served: Served, page: Any, tmp_path: Path) -> None:
    log_in(page, served.url)
    page.goto(served.url + "/ns/default/transfer")
    with page.expect_download() as download:
        page.click("a:has-text('Download the export')")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert lines[0]["format"] == "memtiers" and lines[-1]["type"] == "end"
    page.set_input_files("input[name=file]", str(saved))
    with page.expect_navigation():
        page.click("button:has-text('Import')")

    said = page.locator(".said").inner_text()
    assert f"imported {lines[-1]['records']} memories" in said and "0 new" in said


def test_the_user_scope_has_its_own_page_where_an_entry_edited_is_what_every_project_reads(
    served: Served, page: Any
) -> None:
    log_in(page, served.url)
    page.goto(served.url + "/ns/default")
    page.click("a:has-text('user'):near(h2:has-text('The user scope'))")
    assert page.url == served.url + "/ns/user"
    assert "every namespace" in page.locator(".scope").inner_text()
    page.fill("input[aria-label='value of name']", "Ada Lovelace")
    with page.expect_navigation():
        page.locator("tr:has(input[aria-label='value of name']) button:has-text('Save')").click()

    agent_reads = profile_resource(served)
    assert agent_reads.startswith("user scope (shared by every project):\n")
    assert "\nname: Ada Lovelace\nproject scope (namespace default):" in agent_reads
    page.goto(served.url + "/ns/default")
    assert "Ada Lovelace" in page.locator("table.user-scope").inner_text()


def test_a_fact_about_the_person_found_on_a_project_page_is_marked_user_and_forgotten_there(
    served: Served, page: Any
) -> None:
    async def remember(client: Client) -> str:
        stored = await call(client, "remember", content="My dentist is Dr. Silva in Alfama")
        return str(stored["stored"][0]["id"])

    dentist = mcp(served.url, TOKEN, remember)
    assert dentist in recalled_ids(served, "who is my dentist?")
    log_in(page, served.url)
    page.goto(served.url + "/ns/default/search?q=who is my dentist")
    row = page.locator(f"tr[data-id='{dentist}']")
    assert row.get_attribute("data-scope") == "user"
    assert row.locator("form").first.get_attribute("action") == "/ns/user/record"
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        row.locator("button:has-text('Forget')").click()

    assert page.url.startswith(served.url + "/ns/default/search")  # back where the person was
    assert f"{dentist} forgotten" in page.locator(".said").inner_text()
    assert dentist not in recalled_ids(served, "who is my dentist?")


# refusals


def test_a_wrong_token_is_refused_and_shows_the_login_again(served: Served, page: Any) -> None:
    page.goto(served.url + "/")
    page.fill("input[name=token]", "not-the-token-0123456789")
    with page.expect_response(lambda r: r.url.endswith("/login")) as answer:
        page.click("button:has-text('Log in')")

    assert answer.value.status == 401
    assert "does not open this server" in page.content()
    assert page.context.cookies() == []


@pytest.mark.parametrize("path", ["/", "/ns/default", "/ns/default/search?q=peanuts", "/ns/default/export"])
@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token-0123456789", f"Basic {TOKEN}"])
def test_a_page_without_a_session_or_with_a_wrong_token_is_refused(
    served: Served, path: str, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    answer = httpx2.get(served.url + path, headers=headers, follow_redirects=False)

    assert answer.status_code == 401
    assert "peanuts" not in answer.text


@pytest.mark.parametrize(
    ("headers", "status"), [({"Host": "evil.example"}, 421), ({"Origin": "http://evil.example"}, 403)]
)
def test_a_foreign_host_or_origin_is_refused_even_with_a_session(
    served: Served, headers: dict[str, str], status: int
) -> None:
    with httpx2.Client(base_url=served.url) as http:
        session = _session(http, served.url)
        refused_login = http.post("/login", data={"token": TOKEN}, headers=headers)
        refused_change = http.post(
            "/ns/default/record",
            data={"action": "forget", "id": served.ids["allergy"], "csrf": session},
            headers=headers,
        )
        refused_read = http.get("/ns/default", headers=headers)

    assert (refused_login.status_code, refused_change.status_code, refused_read.status_code) == (status,) * 3
    assert served.ids["allergy"] in recalled_ids(served, "what am I allergic to?")


@pytest.mark.parametrize("csrf", [None, "", "forged-0123456789"])
def test_a_change_without_the_sessions_csrf_token_is_refused(served: Served, csrf: str | None) -> None:
    with httpx2.Client(base_url=served.url) as http:
        _session(http, served.url)
        data = {"action": "forget", "id": served.ids["allergy"]} | ({"csrf": csrf} if csrf is not None else {})
        refused = http.post("/ns/default/record", data=data, headers={"Origin": served.url})
        no_origin = http.post("/ns/default/record", data=data)

    assert (refused.status_code, no_origin.status_code) == (403, 403)
    assert served.ids["allergy"] in recalled_ids(served, "what am I allergic to?")


def _session(http: httpx2.Client, url: str) -> str:
    """Log `http` in as a browser does; the CSRF token of its session."""
    http.post("/login", data={"token": TOKEN}, headers={"Origin": url})
    page = http.get("/ns/default")
    assert page.status_code == 200
    return page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
