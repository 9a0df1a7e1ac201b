"""Benchmark: several client processes on one data folder, each with its own in-process Memory, making mixed calls.

Each process makes `--calls` calls drawn at random (remember 35 %, recall 35 %, profile 15 % (a read, or
setting its own key), promote 7.5 %, forget 7.5 %); a tenth of the remembers repeat a text another
process may store too. At the end the folder is read again: every acknowledged remember must be
there with its text unless some process forgot that record, no text twice, each process's last
profile value in place. Prints errors, lost, and p50/p99 per call kind. Not a test (the suite runs a
small one, tests/tiers/test_clients.py): run it by hand,
`.venv/bin/python -m tests.bench.clients --processes 4 --calls 1000`. Bounded: a fixed number of calls
and a time limit on the whole run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tiers.errors import MemtiersError
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
KINDS = ("remember", "recall", "profile", "promote", "forget")
WEIGHTS = (35, 35, 15, 7.5, 7.5)
PLACES = ["harbour", "station", "library", "market", "bakery", "clinic", "garage", "studio", "school", "museum"]
THINGS = ["bike", "umbrella", "ladder", "laptop", "kettle", "drill", "tent", "camera", "scarf", "stroller"]
SHARED = [f"The {PLACES[i]} opens at {i + 7} on weekdays and closes early on Fridays" for i in range(10)]


def text(process: int, i: int, chance: random.Random) -> str:
    return (
        f"Process {process} note {i}: the {chance.choice(THINGS)} was left at the {chance.choice(PLACES)} "
        f"near door {chance.randint(1, 99)}"
    )


def client(process: int, folder: str, cache: str, calls: int, seed: int, start: Any, out: str) -> None:
    """One process: its own Memory; `calls` mixed calls, timed; what it was told, written to `out` as JSON."""
    embedder = FastEmbedder(cache_dir=Path(cache))
    embedder.load()
    memory = Memory(Path(folder), embedder)
    chance = random.Random(seed * 1000 + process)
    acked: list[tuple[str, str]] = []  # (id, text) of each remember that returned
    own: list[str] = []  # ids only this process stored (never a shared text): safe to promote and forget
    forgotten: list[str] = []
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    errors: list[str] = []
    preference: str | None = None
    start.wait(timeout=300)
    try:
        for i in range(calls):
            now = T0 + timedelta(seconds=i)
            kind = chance.choices(KINDS, WEIGHTS)[0]
            if kind in ("promote", "forget") and not own:
                kind = "remember"
            began = time.perf_counter()
            try:
                if kind == "remember":
                    shared = chance.random() < 0.1
                    content = chance.choice(SHARED) if shared else text(process, i, chance)
                    [stored] = memory.remember([MemoryIn(content=content)], now)
                    acked.append((stored.id, content))
                    if not shared and stored.id not in own:
                        own.append(stored.id)
                elif kind == "recall":
                    memory.recall(f"where was the {chance.choice(THINGS)} left", now, limit=5)
                elif kind == "profile":
                    if chance.random() < 0.3:
                        preference = f"{chance.choice(PLACES)} on day {i}"
                        memory.set_profile({f"process{process}.meeting_place": preference}, now)
                    else:
                        memory.profile()
                elif kind == "promote":
                    rid = chance.choice(own)
                    memory.promote(rid, now, Tier.HOT, key=f"process{process}.fact{chance.randint(0, 2)}")
                else:
                    rid = own.pop(chance.randrange(len(own)))
                    memory.forget(rid, now)
                    forgotten.append(rid)
            except MemtiersError as exc:
                errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            times[kind].append((time.perf_counter() - began) * 1000)
    finally:
        memory.close()
        report = {"acked": acked, "forgotten": forgotten, "times": times, "errors": errors, "preference": preference}
        Path(out).write_text(json.dumps(report))


@dataclass
class Report:
    processes: int
    calls: int
    seconds: float
    errors: list[str]
    lost: list[str]
    doubled: list[str]
    profile_wrong: list[str]
    times: dict[str, list[float]] = field(default_factory=dict)
    stored: int = 0

    def lines(self) -> list[str]:
        out = [
            f"{self.processes} processes x {self.calls} calls in {self.seconds:.1f} s; "
            f"errors {len(self.errors)}, lost {len(self.lost)}, texts stored twice {len(self.doubled)}, "
            f"profile values wrong {len(self.profile_wrong)}; {self.stored} records at the end",
            f"{'call':<9} {'count':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}",
        ]
        every = [t for kind in KINDS for t in self.times.get(kind, [])]
        for kind, values in [*((k, self.times.get(k, [])) for k in KINDS), ("all", every)]:
            if values:
                p50, p99 = percentile(values, 50), percentile(values, 99)
                out.append(f"{kind:<9} {len(values):>6} {p50:>8.1f} {p99:>8.1f} {max(values):>8.1f}")
        out += [f"  error: {e}" for e in self.errors[:10]]
        return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def run(folder: Path, cache: Path, processes: int, calls: int, seed: int = 1, limit: float = 1800) -> Report:
    """Run the clients at once on `folder` and check what is stored against what each was told."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(processes)
    outs = [folder.parent / f"client-{p}.json" for p in range(processes)]
    workers = [
        context.Process(target=client, args=(p, str(folder), str(cache), calls, seed, start, str(outs[p])))
        for p in range(processes)
    ]
    began = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=max(1.0, limit - (time.perf_counter() - began)))
        if worker.is_alive():
            worker.kill()
            raise SystemExit(f"a client took longer than {limit} s")
    seconds = time.perf_counter() - began
    reports = [json.loads(out.read_text()) for out in outs]
    return check(folder, cache, reports, processes, calls, seconds)


def check(
    folder: Path, cache: Path, reports: list[dict[str, Any]], processes: int, calls: int, seconds: float
) -> Report:
    forgotten = {rid for r in reports for rid in r["forgotten"]}
    acked = {rid: content for r in reports for rid, content in r["acked"] if rid not in forgotten}
    embedder = FastEmbedder(cache_dir=cache)
    memory = Memory(folder, embedder)
    try:
        found = memory.store.get(sorted(acked))
        lost = [
            f"{rid}: {content}" for rid, content in acked.items() if getattr(found.get(rid), "content", None) != content
        ]
        texts: Counter[str] = Counter()
        for tier in (Tier.WARM, Tier.COLD):
            for batch in memory.store.table(tier).scan(["content"]):
                texts.update(batch.column("content").to_pylist())
        doubled = [t for t, n in texts.items() if n > 1]
        profile = memory.profile()
        wrong = [
            f"process{p}: {r['preference']!r} != {getattr(profile.get(f'process{p}.meeting_place'), 'value', None)!r}"
            for p, r in enumerate(reports)
            if r["preference"] is not None
            and getattr(profile.get(f"process{p}.meeting_place"), "value", None) != r["preference"]
        ]
        stored = sum(texts.values())
    finally:
        memory.close()
    times = {kind: [t for r in reports for t in r["times"][kind]] for kind in KINDS}
    errors = [e for r in reports for e in r["errors"]]
    return Report(processes, calls, seconds, errors, lost, doubled, wrong, times, stored)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memtiers-clients-"))
    cache = root / "models"
    FastEmbedder(cache_dir=cache).load()  # the packaged model unpacked once, before the clients race to it
    report = run(root / "ns", cache, args.processes, args.calls, args.seed)
    print("\n".join(report.lines()))
    if report.errors or report.lost or report.doubled or report.profile_wrong:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
