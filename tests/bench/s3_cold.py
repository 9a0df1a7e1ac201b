"""Benchmark: recall with the cold tier on object storage (moto's S3 server on 127.0.0.1) against local disk.

Two stores are filled the same way, through `Memory.remember` of N generated texts (batches of 1,000) and a
sweep far in the future that sends them all cold, then a few hundred recent memories stay warm. One has
its cold tier in the data folder, the other in `s3://<bucket>/...` on a moto server this script starts.
Recall (default tiers, `max_tokens` 1024, query embedding included) is timed on both in alternation, so
load on this shared machine falls on both alike. Each text is embedded once for both stores (see
`Remembering`); every recall embeds its query with the model.

Not a test: run it by hand, `.venv/bin/python -m tests.bench.s3_cold --n 20000`.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lancedb
import numpy as np

from tests.s3 import moto_server
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.records import Kind, MemoryIn

PEOPLE = ["Ana", "Bo", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ines", "Jonas", "Kemal", "Lea"]
PLACES = ["Lisbon", "the Berlin office", "Kyoto", "the lake house", "Nairobi", "the co-working space", "Oslo"]
TOPICS = [
    "the quarterly budget", "the database migration", "the hiring plan", "the kitchen renovation",
    "the marathon training", "the release train", "the tax return", "the garden irrigation",
    "the onboarding guide", "the flaky login test", "the conference talk", "the insurance claim",
    "the piano lessons", "the vendor contract", "the dog's vet visit", "the on-call rota",
]  # fmt: skip
VERBS = ["moved", "was postponed", "got approved", "needs another review", "was cancelled", "is on track"]
REASONS = [
    "because the numbers did not add up", "after a long call on Tuesday", "since the supplier is late",
    "while half the team is travelling", "because of the holiday week", "after the last outage",
    "until the lawyer replies", "because the weather turned",
]  # fmt: skip
TEMPLATES = [
    "{p} said {t} {v} {r}.",
    "Met {p} in {l}: {t} {v} {r}.",
    "Note to self: ask {p} whether {t} {v}, {r}.",
    "{p} thinks {t} {v} {r}; follow up in week {w}.",
    "In {l}, {p} mentioned that {t} {v} {r}.",
    "Reminder from {p}: {t} {v}, and the next check is in week {w}.",
]
QUESTIONS = [
    "what did {p} say about {t}?",
    "is {t} still on track?",
    "why was {t} postponed?",
    "what happened in {l}?",
    "what should I ask {p} next?",
]


def texts(n: int, seed: int = 7) -> list[str]:
    """N distinct, varied note texts (no two the same, so none is merged as a repeat)."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        text = rng.choice(TEMPLATES).format(
            p=rng.choice(PEOPLE),
            t=rng.choice(TOPICS),
            v=rng.choice(VERBS),
            r=rng.choice(REASONS),
            l=rng.choice(PLACES),
            w=rng.randint(1, 52),
        )
        if text in out:
            text = f"{text[:-1]} (round {rng.randint(2, 999)})."
        out.setdefault(text, None)
    return list(out)


def questions(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), t=rng.choice(TOPICS), l=rng.choice(PLACES))
        for _ in range(count)
    ]


class Remembering:
    """The real model, embedding each text once, for both stores; past `pool` texts, a store is filled below it.

    While filling, the first `pool` distinct texts are embedded by the model and each later one gets the
    vector of a pool text picked by its hash, jittered (cosine about 0.9 to it): a full 20,000 through the
    model takes minutes on this shared machine and the subject here is where cold lives, not meaning.
    Recall queries are always embedded by the model, every time.
    """

    def __init__(self, model: FastEmbedder, pool: int) -> None:
        self.model = model
        self.name = model.name
        self.dim = model.dim
        self.pool = pool
        self.filling = True
        self._made: list[np.ndarray] = []
        self._seen: dict[str, np.ndarray] = {}

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.embed_queries(list(texts))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        if not self.filling:
            return self.model.embed(list(texts))
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        room = max(0, self.pool - len(self._made)) if self.pool else len(missing)
        if missing[:room]:
            for text, vector in zip(missing[:room], self.model.embed(missing[:room]), strict=True):
                self._seen[text] = vector
                self._made.append(vector)
        for text in missing[room:]:
            digest = int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)
            rng = np.random.default_rng(digest)
            vector = self._made[digest % len(self._made)] + rng.normal(0, 0.025, self.dim).astype(np.float32)
            self._seen[text] = vector / np.linalg.norm(vector)
        return np.stack([self._seen[t] for t in texts]).astype(np.float32)


def fill(memory: Memory, cold_texts: list[str], warm_texts: list[str], start: datetime) -> tuple[float, float]:
    """Remember the texts, sweep them all cold ten years on, then remember the warm ones; (write s, sweep s)."""
    t0 = time.perf_counter()
    for at in range(0, len(cold_texts), 1000):
        batch = [MemoryIn(content=t, kind=Kind.NOTE) for t in cold_texts[at : at + 1000]]
        memory.remember(batch, start + timedelta(minutes=at))
    written = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = memory.sweep(start + timedelta(days=3650))
    swept = time.perf_counter() - t0
    assert len(report.moves) == len(cold_texts), len(report.moves)
    memory.remember([MemoryIn(content=t, kind=Kind.NOTE) for t in warm_texts], start + timedelta(days=3650))
    return written, swept


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _lines(log: Path, about: str = "") -> int:
    """Requests moto's server has logged so far (one line each), or those whose line names `about`."""
    return sum("HTTP/1.1" in line and about in line for line in log.read_text(errors="replace").splitlines())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20_000, help="cold records in each store")
    parser.add_argument("--warm", type=int, default=300, help="recent records that stay warm")
    parser.add_argument("--queries", type=int, default=30, help="timed recalls on each store")
    parser.add_argument("--pool", type=int, default=2_000, help="texts the model embeds while filling (0: all)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memtiers-s3-bench-"))
    model = FastEmbedder(cache_dir=root / "models")
    model.load()
    embedder = Remembering(model, args.pool)
    every = texts(args.n + args.warm)
    cold_texts, warm_texts = every[: args.n], every[args.n :]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    now = start + timedelta(days=3650)
    print(
        f"n={args.n} cold + {args.warm} warm ({args.pool or 'all'} texts embedded by the model, the rest jittered), "
        f"{args.queries} recalls each, default tiers, max_tokens 1024"
    )
    requests = root / "moto-requests.log"
    with moto_server(bucket="bench", log=requests) as s3:
        settings = {
            "local disk": MemorySettings(),
            "S3 (moto)": MemorySettings(cold_uri=s3.uri("cold/ns"), storage_options=s3.storage_options),
        }
        stores: dict[str, Memory] = {}
        for name, chosen in settings.items():
            memory = Memory(root / name.split()[0], embedder, chosen)
            written, swept = fill(memory, cold_texts, warm_texts, start)
            stores[name] = memory
            stats = memory.stats()
            print(
                f"{name:10} fill: remember {written:6.1f} s, sweep {swept:5.1f} s;  warm {stats['warm']}, "
                f"cold {stats['cold']}, cold files {memory.store.cold_table.files()[0]}",
                flush=True,
            )
        on_s3 = lancedb.connect(s3.uri("cold/ns"), storage_options=s3.storage_options).open_table("cold")
        assert on_s3.count_rows() == args.n  # read straight from the bucket
        embedder.filling = False
        timed = questions(args.queries)
        first: dict[str, float] = {}
        for name, memory in stores.items():
            t0 = time.perf_counter()
            memory.recall("what did Ana say about the budget?", now, limit=50, max_tokens=1024)
            first[name] = (time.perf_counter() - t0) * 1000
        answered, checks = _lines(requests), _lines(requests, "/_versions/")
        times: dict[str, list[float]] = {name: [] for name in stores}
        found: dict[str, int] = dict.fromkeys(stores, 0)
        for query in timed:
            for name, memory in stores.items():
                t0 = time.perf_counter()
                packed = memory.recall(query, now, limit=50, max_tokens=1024)
                times[name].append((time.perf_counter() - t0) * 1000)
                found[name] += sum(h.record.tier.value == "cold" for h in packed.hits)
        asked = (_lines(requests) - answered) / len(timed)
        versions = (_lines(requests, "/_versions/") - checks) / len(timed)
        per_recall = {"local disk": "–", "S3 (moto)": f"{asked:.0f} ({versions:.0f} version listings)"}
        print()
        print(
            "| cold tier on | first recall | recall p50 | recall p99 | cold hits per recall | S3 requests per recall |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
        for name, ts in times.items():
            print(
                f"| {name} | {first[name]:.0f} ms | {statistics.median(ts):.1f} ms | {percentile(ts, 0.99):.1f} ms "
                f"| {found[name] / len(ts):.1f} | {per_recall[name]} |"
            )
        for memory in stores.values():
            memory.close()
    print(f"\n(data in {root}; the moto server kept the S3 side in memory and is stopped)", file=sys.stderr)


if __name__ == "__main__":
    main()
