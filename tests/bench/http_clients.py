"""Benchmark: one `memtiers serve --http` shared by 1, then 8 concurrent HTTP clients, on loopback.

Prints the server process's resident memory (VmRSS now, VmHWM its peak, from /proc/PID/status) and
recall latency (p50, p95 as the clients see it over HTTP) for each phase; with `--namespaces K` the
8 clients are then spread over K namespaces of the same process, which share one model. Not a test:
run it by hand, `.venv/bin/python -m tests.bench.http_clients`. Bounded: a fixed number of recalls
per phase and a time limit on the whole run.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.bench.writes import PEOPLE, TOPICS, corpus

MEMTIERS = Path(sys.executable).with_name("memtiers")


def memory_of(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of process `pid` in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return tuple(int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


def start(home: Path, token: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "MEMTIERS_HOME": str(home), "MEMTIERS_HTTP_TOKEN": token, "MEMTIERS_LOG_LEVEL": "WARNING"}
    process = subprocess.Popen(
        [str(MEMTIERS), "serve", "--http", "--port", "0"], env=env, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    for line in process.stderr:
        if "memtiers serving MCP at " in line:
            return process, line.split("memtiers serving MCP at ", 1)[1].strip()
    raise SystemExit("the server ended before serving")


async def client_run(url: str, token: str, queries: list[str], latencies: list[float]) -> None:
    timeout = httpx2.Timeout(60, read=300)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        for query in queries:
            t0 = time.perf_counter()
            result = await client.call_tool("recall", {"query": query, "max_tokens": 512})
            latencies.append((time.perf_counter() - t0) * 1000)
            assert not result.is_error


async def seed(url: str, token: str, n: int) -> None:
    items = [m.model_dump(exclude_none=True) for m in corpus(n)]
    timeout = httpx2.Timeout(60, read=1800)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        for start_at in range(0, n, 1000):
            result = await client.call_tool("remember", {"memories": items[start_at : start_at + 1000]})
            assert not result.is_error


def stdio_children() -> list[int]:
    """The `memtiers serve` (stdio) processes this process started."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"serve" in command and b"--http" not in command:
                found.append(int(pid))
    return found


async def stdio_baseline(home: Path, namespace: str, recalls: int) -> str:
    """What one stdio server (one host's own process) holds after the same recalls on the same memories."""
    env = {**os.environ, "MEMTIERS_HOME": str(home), "MEMTIERS_NAMESPACE": namespace}
    params = StdioServerParameters(command=str(MEMTIERS), args=["serve"], env=env)
    queries = [f"what did {p} say about the {t}?" for p in PEOPLE for t in TOPICS][:recalls]
    latencies: list[float] = []
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet)) as client:
            for query in queries:
                t0 = time.perf_counter()
                assert not (await client.call_tool("recall", {"query": query, "max_tokens": 512})).is_error
                latencies.append((time.perf_counter() - t0) * 1000)
            [pid] = stdio_children()
            rss, hwm = memory_of(pid)
    p50 = statistics.median(latencies[5:])  # the first ones wait for the model, which loads after a first request
    return (
        f"one stdio server, for comparison  recalls {len(latencies):4d}  p50 {p50:6.1f} ms"
        f"  VmRSS {rss:6.1f} MB  VmHWM {hwm:6.1f} MB"
    )


async def phase(pid: int, urls: list[str], token: str, clients: int, per_client: int) -> str:
    queries = [f"what did {p} say about the {t}?" for p in PEOPLE for t in TOPICS]
    latencies: list[float] = []
    t0 = time.perf_counter()
    async with anyio.create_task_group() as group:
        for i in range(clients):
            mine = [queries[(i * 7 + k) % len(queries)] for k in range(per_client)]
            group.start_soon(client_run, urls[i % len(urls)], token, mine, latencies)
    wall = time.perf_counter() - t0
    rss, hwm = memory_of(pid)
    p50 = statistics.median(latencies)
    p95 = sorted(latencies)[int(len(latencies) * 0.95) - 1]
    return (
        f"clients {clients}  namespaces {len(urls)}  recalls {len(latencies):4d}  p50 {p50:6.1f} ms  "
        f"p95 {p95:6.1f} ms  {len(latencies) / wall:5.1f} recalls/s  VmRSS {rss:6.1f} MB  VmHWM {hwm:6.1f} MB"
    )


async def run(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="memtiers-http-bench-"))
    token = secrets.token_urlsafe(32)
    process, base = start(home, token)
    try:
        with anyio.fail_after(args.time_limit):
            urls = [f"{base}/bench{k}" for k in range(args.namespaces)]
            rss, hwm = memory_of(process.pid)
            print(f"started (default namespace open, model loading)    VmRSS {rss:6.1f} MB  VmHWM {hwm:6.1f} MB")
            t0 = time.perf_counter()
            for url in urls:
                await seed(url, token, args.n)
            rss, hwm = memory_of(process.pid)
            print(
                f"seeded {args.n} memories in each of {len(urls)} namespaces in {time.perf_counter() - t0:.1f} s"
                f"  VmRSS {rss:6.1f} MB  VmHWM {hwm:6.1f} MB"
            )
            await phase(process.pid, urls[:1], token, 1, 5)  # warm-up: first queries, caches
            print(await phase(process.pid, urls[:1], token, 1, args.recalls))
            print(await phase(process.pid, urls[:1], token, 8, args.recalls // 8))
            if len(urls) > 1:
                print(await phase(process.pid, urls, token, 8, args.recalls // 8))
            if args.stdio_baseline:
                print(await stdio_baseline(home, "bench0", args.recalls))
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=1000, help="memories stored in each namespace")
    parser.add_argument("--recalls", type=int, default=80, help="recalls per phase, split over its clients")
    parser.add_argument("--namespaces", type=int, default=1, help="namespaces for a last phase of 8 clients")
    parser.add_argument("--stdio-baseline", action="store_true", help="also measure one stdio server")
    parser.add_argument("--time-limit", type=float, default=900, help="seconds before the run is abandoned")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
