"""Benchmark: N single `remember` calls against one batched import of the same N memories.

Prints, for both stores: write time, LanceDB files, bytes and versions on disk, and recall latency
(p50/p99 with the model loaded), with the ratio single/batched. Not a test: run it by hand,
`.venv/bin/python -m tests.bench.writes --n 10000`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn

TOPICS = ["deploy", "budget", "lunch", "design review", "flight", "doctor", "garden", "release", "invoice", "hiring"]
PEOPLE = ["Ana", "Bo", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana"]


def corpus(n: int) -> list[MemoryIn]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        MemoryIn(
            content=f"{PEOPLE[i % 8]} said the {TOPICS[i % 10]} item #{i} moves to week {i % 52} "
            f"because of {TOPICS[(i * 7) % 10]}",
            occurred_at=(start + timedelta(minutes=i)).isoformat(),
        )
        for i in range(n)
    ]


def recall_latency(stores: dict[str, Memory], now: datetime, rounds: int = 80) -> dict[str, tuple[float, float]]:
    queries = [f"what did {p} say about the {t}?" for p in PEOPLE for t in TOPICS][:rounds]
    times: dict[str, list[float]] = {mode: [] for mode in stores}
    for memory in stores.values():
        memory.recall(queries[0], now)
    for q in queries:
        for mode, memory in stores.items():
            t0 = time.perf_counter()
            memory.recall(q, now, max_tokens=512)
            times[mode].append((time.perf_counter() - t0) * 1000)
    return {mode: (statistics.median(ts), sorted(ts)[int(len(ts) * 0.99) - 1]) for mode, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memtiers-bench-"))
    embedder = FastEmbedder(cache_dir=root / "models")
    embedder.load()
    items = corpus(args.n)
    now = datetime(2026, 6, 1, tzinfo=UTC)
    stores: dict[str, Memory] = {}
    written: dict[str, float] = {}
    for mode in ("batched", "single"):
        memory = Memory(root / mode, embedder)
        t0 = time.perf_counter()
        if mode == "batched":
            for start in range(0, len(items), 1000):
                memory.remember(items[start : start + 1000], now)
        else:
            for item in items:
                memory.remember([item], now)
        written[mode] = time.perf_counter() - t0
        stores[mode] = memory
    # Recall latency is measured on both stores in alternation, so load on this shared machine
    # falls on both alike.
    latency = recall_latency(stores, now)
    results = {}
    for mode, memory in stores.items():
        stats = memory.stats()
        p50, p99 = latency[mode]
        results[mode] = (written[mode], stats["lance_files"], stats["lance_bytes"], stats["lance_versions"], p50, p99)
        print(
            f"{mode:8} n={args.n} write {written[mode]:7.1f} s  files {stats['lance_files']:6}  "
            f"bytes {stats['lance_bytes'] / 1e6:8.2f} MB  versions {stats['lance_versions']:6}  "
            f"recall p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  rows {stats['warm']}",
            flush=True,
        )
        memory.close()
    b, s = results["batched"], results["single"]
    names = ["write s", "files", "bytes", "versions", "recall p50", "recall p99"]
    print("ratio single/batched: " + ", ".join(f"{n} {sv / bv:.2f}" for n, sv, bv in zip(names, s, b, strict=True)))


if __name__ == "__main__":
    main()
