"""`serve --http` on the wire: a real uvicorn server on 127.0.0.1, the real model, SDK and Inspector clients."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp_types import TextResourceContents

from server.http import is_loopback, transport_security
from server.settings import Settings
from tests.helpers import call, count_rows, text
from tests.server.http_running import bearer, http_client, running_http
from tests.server.test_inspector import INSPECTOR, inspector_env
from tiers.model.embedder import FastEmbedder

pytestmark = pytest.mark.anyio

FULL = "full-access-token-0123456789"  # opens every namespace
SCOPED = "work-only-token-0123456789"  # opens `work` only
MEMTIERS = Path(sys.executable).with_name("memtiers")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@dataclass(frozen=True)
class Running:
    url: str
    home: Path

    def folder(self, namespace: str) -> Path:
        return self.home / "namespaces" / namespace


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedder) -> Iterator[Running]:
    home = tmp_path_factory.mktemp("http") / "home"
    env = {"MEMTIERS_HOME": str(home), "MEMTIERS_HTTP_TOKEN": FULL, "MEMTIERS_HTTP_TOKENS": f"{SCOPED}=work"}
    with running_http(Settings.from_env(env), embedder) as url:
        yield Running(url, home)


# what is loopback, which Host and Origin values pass


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.1", True), ("localhost", True), ("::1", True), ("[::1]", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("example.com", False)],
)  # fmt: skip
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_an_exposed_server_accepts_its_own_address_and_the_allowed_names_besides_loopback() -> None:
    security = transport_security("192.168.1.5", ["memory.example"])

    assert {"127.0.0.1:*", "localhost:*", "[::1]:*", "192.168.1.5:*", "memory.example", "memory.example:*"} <= set(
        security.allowed_hosts
    )
    assert "https://memory.example" in security.allowed_origins
    assert not any("0.0.0.0" in name for name in transport_security("0.0.0.0").allowed_hosts)


# the SDK client, both protocol eras


async def test_remember_recall_profile_promote_forget_over_http_with_the_token(served: Running) -> None:
    async with http_client(f"{served.url}/mcp/flows", FULL) as client:
        stored = await call(client, "remember", content="The staging database runs on port 5433", tags=["infra"])
        [item] = stored["stored"]
        found = await call(client, "recall", query="which port does staging use?")
        diet = await call(client, "remember", content="Vegetarian since 2019", key="diet", kind="health")
        resource = await client.read_resource("memory://profile")
        promoted = await call(client, "promote", id=item["id"], key="staging_port")
        profile = await call(client, "profile")
        forgotten = await call(client, "forget", id=item["id"])
        after = await call(client, "recall", query="which port does staging use?", tiers=["warm", "cold"])

    assert item["tier"] == "warm"
    assert [m["id"] for m in found["memories"]] == [item["id"]]
    assert (diet["stored"][0]["tier"], diet["stored"][0]["scope"]) == ("hot", "user")  # about the person
    [contents] = resource.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.text == (
        "user scope (shared by every project):\ndiet: Vegetarian since 2019\nproject scope (namespace flows):\n(empty)"
    )
    assert (promoted["outcome"], promoted["key"]) == ("promoted", "staging_port")
    assert profile["entries"]["staging_port"]["sources"] == [item["id"]]
    assert forgotten["orphaned_profile_keys"] == ["staging_port"]
    assert item["id"] not in [m["id"] for m in after["memories"]]
    assert count_rows(served.folder("flows")) == 0  # the forgotten one is gone
    assert count_rows(served.folder("user")) >= 1  # the diet memory, in the user scope every namespace reads


async def test_a_legacy_client_lists_the_tools_and_the_prompt_over_http(served: Running) -> None:
    async with http_client(f"{served.url}/mcp/legacy", FULL, mode="legacy") as client:
        tools = await client.list_tools()
        prompts = await client.list_prompts()
        rendered = await client.get_prompt("memory-protocol")
        empty = await client.call_tool("profile", {})

    assert sorted(t.name for t in tools.tools) == ["forget", "profile", "promote", "recall", "remember"]
    assert [p.name for p in prompts.prompts] == ["memory-protocol"]
    assert "recall" in rendered.messages[0].content.text  # type: ignore[union-attr]
    assert "project scope (namespace legacy):\n(empty)" in text(empty) or "(the profile is empty)" in text(empty)


async def test_namespaces_in_the_path_keep_their_memories_apart(served: Running) -> None:
    async with http_client(f"{served.url}/mcp/apart-a", FULL) as a, http_client(f"{served.url}/mcp/apart-b", FULL) as b:
        await call(a, "remember", content="Project Falcon ships in March")
        in_a = await call(a, "recall", query="when does Falcon ship?")
        in_b = await call(b, "recall", query="when does Falcon ship?")

    assert [m["content"] for m in in_a["memories"] if m["scope"] == "project"] == ["Project Falcon ships in March"]
    assert [m for m in in_b["memories"] if m["scope"] == "project"] == []
    assert (count_rows(served.folder("apart-a")), count_rows(served.folder("apart-b"))) == (1, 0)


async def test_a_scoped_token_opens_its_namespace_and_no_other(served: Running) -> None:
    async with http_client(f"{served.url}/mcp/work", SCOPED) as client:
        await call(client, "remember", content="The work laptop is a ThinkPad")
    async with httpx2.AsyncClient() as raw:
        elsewhere = await raw.post(f"{served.url}/mcp/flows", json=INITIALIZE, headers=MCP_HEADERS | bearer(SCOPED))

    assert count_rows(served.folder("work")) == 1
    assert elsewhere.status_code == 401


async def test_a_namespace_that_cannot_open_answers_503_and_the_others_keep_working(served: Running) -> None:
    served.folder("broken").parent.mkdir(parents=True, exist_ok=True)
    served.folder("broken").write_text("a file where the namespace folder should be")
    async with httpx2.AsyncClient() as raw:
        broken = await raw.post(f"{served.url}/mcp/broken", json=INITIALIZE, headers=MCP_HEADERS | bearer(FULL))
    async with http_client(f"{served.url}/mcp/after-broken", FULL) as client:
        fine = await call(client, "profile")

    assert broken.status_code == 503
    assert "namespace 'broken' is unavailable" in broken.text
    assert [key for key, e in fine["entries"].items() if e["scope"] == "project"] == []


# refusals


REFUSED = {
    "missing": None,
    "wrong": "Bearer wrong-token-0123456789",
    "longer": f"Bearer {FULL}x",
    "no-scheme": FULL,
    "basic": f"Basic {FULL}",
}
ENDPOINTS = ["/mcp", "/mcp/", "/mcp/untouched", "/mcp/work", "/elsewhere"]
CASES = [(path, name, auth) for path in ENDPOINTS for name, auth in REFUSED.items()] + [
    (path, "other-namespace", f"Bearer {SCOPED}") for path in ("/mcp", "/mcp/", "/mcp/untouched")
]


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
@pytest.mark.parametrize(
    ("path", "authorization"), [(p, a) for p, _, a in CASES], ids=[f"{p}-{n}" for p, n, _ in CASES]
)
async def test_every_endpoint_answers_401_without_the_right_token(
    served: Running, method: str, path: str, authorization: str | None
) -> None:
    headers = MCP_HEADERS | ({"Authorization": authorization} if authorization else {})
    body = json.dumps(INITIALIZE).encode() if method == "POST" else None
    async with httpx2.AsyncClient() as raw:
        answer = await raw.request(method, served.url + path, content=body, headers=headers)

    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == 'Bearer realm="memtiers"'
    assert FULL not in answer.text and SCOPED not in answer.text
    assert not served.folder("untouched").exists()


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Host": "127.0.0.1.evil.example:80"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://127.0.0.1.evil.example:8080"}, 403),
    ],
)
async def test_a_wrong_host_or_origin_is_refused_even_with_the_token(
    served: Running, headers: dict[str, str], status: int
) -> None:
    async with httpx2.AsyncClient() as raw:
        refused = await raw.post(
            f"{served.url}/mcp/hosts", json=INITIALIZE, headers=MCP_HEADERS | bearer(FULL) | headers
        )
        local_origin = {"Origin": served.url.replace("127.0.0.1", "localhost")}
        accepted = await raw.post(
            f"{served.url}/mcp/hosts", json=INITIALIZE, headers=MCP_HEADERS | bearer(FULL) | local_origin
        )

    assert refused.status_code == status
    assert accepted.status_code == 200


async def test_a_bounded_fuzz_of_bad_requests_serves_no_unauthenticated_call(served: Running) -> None:
    chance = random.Random(7)
    marker = "FUZZ-MARKER must never be stored"
    bodies: list[bytes] = [
        json.dumps(INITIALIZE).encode(),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "remember", "arguments": {"content": marker}},
            }
        ).encode(),
        b"{not json",
        b"",
        b"[" * 5000,
        bytes(chance.randrange(256) for _ in range(2048)),
        json.dumps([INITIALIZE] * 50).encode(),
        b"x" * 200_000,
    ]
    paths = ["/mcp", "/mcp/", "/mcp/victim", "/mcp/victim/", "/mcp/../victim", "/mcp/%2e%2e", "/mcp/a b",
             "/mcp/" + "v" * 300, "/", "/mcp/victim/deeper", "/favicon.ico", "/MCP"]  # fmt: skip
    authorizations = [None, "", "Bearer", "Bearer ", f"Bearer {FULL[:-1]}", f"Bearer {FULL.upper()}",
                      f"Bearer {FULL}\t", f"Token {FULL}", f"Bearer {SCOPED}", "Bearer " + "A" * 5000,
                      f"Bearer {FULL[:8]}"]  # fmt: skip
    content_types: list[str | bytes | None] = [
        None,
        "application/json",
        "text/plain",
        "multipart/form-data; b=x",
        "application/json; charset=utf-16",
        "\u00e9/\u00e9".encode("latin-1"),
    ]
    methods = ["POST", "GET", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD", "TRACE", "FROB"]
    statuses: list[int] = []
    broken = 0
    with anyio.fail_after(120):
        async with httpx2.AsyncClient(timeout=10) as raw:
            for _ in range(300):
                headers: dict[str, str | bytes] = {
                    "Accept": chance.choice(["application/json, text/event-stream", "*/*", "text/html"])
                }
                if (auth := chance.choice(authorizations)) is not None:
                    headers["Authorization"] = auth
                if (kind := chance.choice(content_types)) is not None:
                    headers["Content-Type"] = kind
                if chance.random() < 0.2:
                    headers["Mcp-Session-Id"] = chance.choice(["", "0" * 32, "../../etc/passwd"])
                if chance.random() < 0.2:
                    headers["Mcp-Protocol-Version"] = chance.choice(["2026-07-28", "2025-11-25", "1999-01-01", "x"])
                if chance.random() < 0.1:
                    headers["X-Padding"] = "p" * chance.choice([1_000, 12_000, 70_000])
                path = chance.choice(paths)
                try:
                    answer = await raw.request(
                        chance.choice(methods), served.url + path, content=chance.choice(bodies), headers=headers
                    )
                except httpx2.HTTPError:  # the server may close the connection on what it cannot parse
                    broken += 1
                    continue
                statuses.append(answer.status_code)
        raw_answers = [await _raw_exchange(served.url, request) for request in RAW_REQUESTS]

    served_ok = [s for s in statuses if s < 400]
    assert served_ok == [], f"{len(served_ok)} requests were served without the right token"
    assert len(statuses) + broken == 300 and statuses.count(401) > 200
    assert all(answer.startswith(b"HTTP/1.1 4") for answer in raw_answers), raw_answers
    assert not served.folder("victim").exists()
    assert count_rows(served.folder("default")) == 0
    async with http_client(f"{served.url}/mcp", FULL) as client:  # and the server still answers
        entries = (await call(client, "profile"))["entries"]
    assert [key for key, e in entries.items() if e["scope"] == "project"] == []


RAW_REQUESTS = [
    b"GARBAGE\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999\r\n\r\n{",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"GET /mcp HTTP/1.1\r\n" + b"X: " + b"y" * 100_000 + b"\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xff\xfe\r\nContent-Length: 2\r\n\r\n{}",
    b"GET /mcp HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",  # a TLS hello on the plain port
]


async def _raw_exchange(url: str, request: bytes) -> bytes:
    """Send raw bytes; what comes back up to the end of the answer's head, the server closing, or 5 s."""
    host, port = url.removeprefix("http://").split(":")
    received = b""
    with anyio.move_on_after(5):
        async with await anyio.connect_tcp(host, int(port)) as stream:
            await stream.send(request)
            try:
                while b"\r\n\r\n" not in received and len(received) < 65_536:
                    received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
                pass
    return received


# the Inspector


def _inspect(tmp_path: Path, url: str, *args: str, token: str | None = FULL) -> subprocess.CompletedProcess[str]:
    auth = ["--header", f"Authorization: Bearer {token}"] if token else []
    command = [str(INSPECTOR), "--cli", "--format", "json", url, "--transport", "http", *auth, *args]
    return subprocess.run(
        command, env=inspector_env(tmp_path), capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.skipif(not INSPECTOR.exists(), reason=f"the MCP Inspector is not installed at {INSPECTOR}")
def test_the_inspector_cli_calls_tools_and_renders_the_prompt_over_http(served: Running, tmp_path: Path) -> None:
    url = f"{served.url}/mcp/inspector"
    remembered = _inspect(tmp_path, url, "--method", "tools/call", "--tool-name", "remember",
                          "--tool-args-json", json.dumps({"content": "vegetarian", "key": "diet"}))  # fmt: skip
    profile = _inspect(tmp_path, url, "--method", "resources/read", "--uri", "memory://profile")
    prompts = _inspect(tmp_path, url, "--method", "prompts/list")
    prompt = _inspect(tmp_path, url, "--method", "prompts/get", "--prompt-name", "memory-protocol")
    refused = _inspect(tmp_path, url, "--method", "tools/list", token=None)

    for done in (remembered, profile, prompts, prompt):
        assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    assert json.loads(remembered.stdout)["result"]["structuredContent"]["stored"][0]["tier"] == "hot"
    assert (
        "\ndiet: vegetarian\nproject scope (namespace inspector):"
        in json.loads(profile.stdout)["result"]["contents"][0]["text"]
    )
    assert [p["name"] for p in json.loads(prompts.stdout)["result"]["prompts"]] == ["memory-protocol"]
    assert "recall" in json.loads(prompt.stdout)["result"]["messages"][0]["content"]["text"]
    assert refused.returncode != 0
    assert not (tmp_path / "inspector" / "home" / ".mcp-inspector").exists()


# the process: token file, signals, loopback


def _start(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "MEMTIERS_HOME": str(home / "data"),
        "MEMTIERS_LOG_LEVEL": "INFO",
    }
    return subprocess.Popen(
        [str(MEMTIERS), "serve", "--http", "--port", "0", *args], env=env, stderr=subprocess.PIPE, text=True
    )


def _wait_for_url(process: subprocess.Popen[str], lines: list[str]) -> str:
    assert process.stderr is not None
    for line in process.stderr:  # blocks on the pipe: the line is the event
        lines.append(line)
        if "memtiers serving MCP at " in line:
            return line.split("memtiers serving MCP at ", 1)[1].strip()
    raise AssertionError("the server ended before serving:\n" + "".join(lines))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_serve_http_uses_the_generated_token_and_a_signal_stops_it_cleanly(tmp_path: Path, stop: int) -> None:
    process = _start(tmp_path)
    lines: list[str] = []
    try:
        url = await anyio.to_thread.run_sync(_wait_for_url, process, lines)
        token_file = tmp_path / "data" / "http-token"
        shown = subprocess.run(
            [str(MEMTIERS), "token"], env={"MEMTIERS_HOME": str(tmp_path / "data")}, capture_output=True, text=True
        )
        async with http_client(url, shown.stdout.strip()) as client:
            stored = await call(client, "remember", content="The release train leaves every other Monday")
    finally:
        process.send_signal(stop)
        code = await anyio.to_thread.run_sync(lambda: process.wait(timeout=60))
        assert process.stderr is not None
        lines.append(process.stderr.read())
        process.stderr.close()

    logs = "".join(lines)
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert shown.stdout.strip() == token_file.read_text().strip()
    assert stored["stored"][0]["tier"] == "warm"
    assert code == 0
    assert "memtiers closed namespace 'default'" in logs
    assert f"stopped by signal {int(stop)}" in logs
    assert token_file.read_text().strip() not in logs


def test_serve_http_refuses_a_non_loopback_address_without_expose(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(MEMTIERS), "serve", "--http", "--host", "0.0.0.0"],
        env={"MEMTIERS_HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert done.returncode == 2
    assert "add --expose" in done.stderr
    assert not (tmp_path / "http-token").exists()
