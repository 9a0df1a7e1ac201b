"""The server hands memory freed after its first reads back to the system (glibc keeps it otherwise)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import gc
from pathlib import Path
from server import release_free_memory

def rss_mb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

held = [bytes(1_000) + bytes([i % 251]) for i in range(200_000)]  # blocks past pymalloc, from malloc
kept = held[::1000]  # a few survive, scattered: the heap cannot just shrink from its top
del held
gc.collect()
before = rss_mb()
release_free_memory()
print(before, rss_mb())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc are Linux's")
def test_memory_freed_after_the_first_reads_goes_back_to_the_system() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=os.environ)
    before, after = map(float, done.stdout.split())
    assert before - after > 100, (before, after)  # of ~200 MB freed, most is returned


@pytest.mark.anyio
async def test_long_blocking_work_is_followed_by_giving_memory_back_and_a_short_call_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pure logic (which calls trim): the trim itself is the test above."""
    from mcp.server.subscriptions import InMemorySubscriptionBus

    from server import runtime as runtime_module
    from server.settings import Settings

    trims: list[int] = []
    monkeypatch.setattr(runtime_module, "release_free_memory", lambda: trims.append(1))
    runtime = runtime_module.Runtime(
        Settings.from_env({"MEMTIERS_HOME": str(tmp_path / "home")}), InMemorySubscriptionBus()
    )

    monkeypatch.setattr(runtime_module, "LONG_WORK_S", 3600.0)
    assert await runtime.run(lambda: 41 + 1) == 42
    assert trims == []
    monkeypatch.setattr(runtime_module, "LONG_WORK_S", 0.0)  # every call counts as long
    assert await runtime.run(lambda: "done") == "done"
    assert trims == [1]
