"""A real `memtiers serve --http` child on 127.0.0.1 and a free port, and Debian's chromium driven by Playwright.

Shared by the web page's tests and by `python -m tests.web_screenshots`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and nothing that reaches out of the machine: no updates, no sync, no background fetches.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MEMTIERS = Path(sys.executable).with_name("memtiers")
_SERVING = re.compile(r"memtiers serving MCP at (http://127\.0\.0\.1:\d+)/mcp")


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None. Under CI they must run: the caller fails instead."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing: `apt-get install -y chromium` (.ci/run does)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed: pip install -e '.[dev]'"
    return None


@contextmanager
def serving(home: Path, token: str, timeout: float = 120) -> Iterator[str]:
    """The base URL of `memtiers serve --http --port 0` on a data folder `home`; SIGTERM and waited for on exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTIERS_")}
    env |= {"MEMTIERS_HOME": str(home), "MEMTIERS_HTTP_TOKEN": token, "MEMTIERS_LOG_LEVEL": "INFO"}
    process = subprocess.Popen(
        [str(MEMTIERS), "serve", "--http", "--host", "127.0.0.1", "--port", "0"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found = threading.Event()
    lines: list[str] = []
    url: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if (match := _SERVING.search(line)) and not url:
                url.append(match.group(1))
                found.set()
        found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not found.wait(timeout) or not url:
            raise RuntimeError("memtiers serve --http did not start:\n" + "".join(lines[-30:]))
        yield url[0]
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


@contextmanager
def browser_page(width: int = 1200, height: int = 900) -> Iterator[Any]:
    """A Playwright page in Debian's chromium, with a fresh user-data-dir of its own."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="memtiers-chromium-")
    try:
        with sync_playwright() as driver:
            context = driver.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": width, "height": height},
                accept_downloads=True,
            )
            try:
                yield context.pages[0] if context.pages else context.new_page()
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def mcp(url: str, token: str, work: Any) -> Any:
    """Run `await work(client)` with a real MCP client over HTTP, in a thread of its own (Playwright's sync API
    holds this thread's event loop)."""
    from tests.server.http_running import http_client

    async def run() -> Any:
        async with http_client(f"{url}/mcp", token) as client:
            return await work(client)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, run).result()
