"""Synthetic memories for scale benchmarks: varied notes of an agent over years, with model-made vectors.

Texts come from many templates and vocabularies under a seeded RNG, every one distinct. Vectors for a
million rows would take the model about an hour on 2 cores, so a pool of distinct texts is embedded by
the real model once (cached on disk) and each row is a pool text varied (names, numbers and dates
swapped, words added) with the pool vector plus Gaussian jitter (cosine ~0.9 to its origin).
Rows come in pyarrow tables of `chunk_rows` rows, so a million never sit in Python objects at once.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from tests.bench import vocab
from tiers.model.embedder import Embedder
from tiers.storage.tables import RECORD_COLUMNS, schema

CACHE = Path.home() / ".cache" / "memtiers-bench"
TARGET_COSINE = 0.9
GENERATOR_VERSION = 1  # bump when the templates change: cached pool vectors are keyed by the texts' digest
# A number on its own: not part of a time (9:30), an ISO date, a version or a ticket id.
_NUMBER = re.compile(r"(?<![\d:.\-])\b\d+(?![\d:\-]|\.\d+\.)")
# The record columns of the tier tables; the fill adds what is derived (hash, terms, links).
ROW_SCHEMA_FIELDS = [
    (f.name, f.type) for f in schema(1) if f.name in RECORD_COLUMNS and f.name not in ("before", "after")
]


class Memo(NamedTuple):
    """A pool text with the kind and topic it was made as."""

    text: str
    kind: str
    topic: str


def _fill_slots(template: str, rng: random.Random, when: datetime) -> str:
    """One template with every `{slot}` drawn from its vocabulary (dates relative to `when`)."""

    def draw(match: re.Match[str]) -> str:
        slot = match.group(1)
        if slot == "few":
            return str(rng.randint(2, 9))
        if slot == "num":
            return str(rng.choice([rng.randint(2, 30), rng.randint(31, 400), rng.randint(401, 9000)]))
        if slot == "amount":
            return f"{rng.choice(['€', '$', '£'])}{rng.randint(3, 2400)}" + rng.choice(["", f".{rng.randint(10, 99)}"])
        if slot == "pct":
            return f"{rng.randint(1, 99)}%"
        if slot == "time":
            return f"{rng.randint(7, 19)}:{rng.choice(['00', '15', '30', '45'])}"
        if slot == "date":
            day = when + timedelta(days=rng.randint(-40, 60))
            return day.strftime(rng.choice(["%B %d", "%d %b", "%Y-%m-%d", "%A %d %B"]))
        if slot == "version":
            return f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"
        if slot == "ticket":
            return f"{rng.choice(vocab.TICKET_PREFIXES)}-{rng.randint(10, 9999)}"
        return rng.choice(vocab.SLOTS[slot])

    return re.sub(r"\{(\w+)\}", draw, template)


def one_text(rng: random.Random, when: datetime) -> tuple[str, str, str]:
    """A memory text of 10-40 words, with its kind and its topic (used as a tag)."""
    topic, kind, template = rng.choice(vocab.TEMPLATES)
    text = _fill_slots(template, rng, when)
    words, added = len(text.split()), 0
    while words < 10 or (words < 28 and added < 2 and rng.random() < 0.35):
        text = text.rstrip(".") + ". " + _fill_slots(rng.choice(vocab.EXTRAS), rng, when)
        words, added = len(text.split()), added + 1
    if words > 40:
        text = " ".join(text.split()[:40]).rstrip(",;") + "."
    return text[0].upper() + text[1:], kind, topic


def memos(seed: int, count: int, exclude: frozenset[str] = frozenset()) -> list[Memo]:
    """`count` distinct memories from `seed`, none of whose texts is in `exclude`."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    seen: set[str] = set()
    out: list[Memo] = []
    while len(out) < count:
        text, kind, topic = one_text(rng, start + timedelta(days=rng.randint(0, 730)))
        if text not in seen and text not in exclude:
            seen.add(text)
            out.append(Memo(text, kind, topic))
    return out


def texts(seed: int, count: int, exclude: frozenset[str] = frozenset()) -> list[str]:
    """`count` distinct memory texts from `seed`, none of them in `exclude`."""
    return [m.text for m in memos(seed, count, exclude)]


def keyword_queries(seed: int, count: int) -> list[str]:
    """Short queries of the kind an agent types: two or three keywords."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        a, b = rng.sample(vocab.KEYWORDS, 2)
        extra = rng.choice(["", "", f" {rng.choice(vocab.SLOTS['person'])}", f" {rng.choice(vocab.SLOTS['city'])}"])
        query = f"{a} {b}{extra}"
        if query not in out:
            out.append(query)
    return out


def queries(seed: int, count: int, pool: list[str]) -> list[str]:
    """Realistic recall queries, none a pool text: two thirds full sentences, one third keywords."""
    sentences = texts(seed + 7919, count - count // 3, exclude=frozenset(pool))
    mixed = sentences + keyword_queries(seed + 104729, count // 3)
    random.Random(seed).shuffle(mixed)
    return mixed


# the pool


def pool_vectors(texts_: Sequence[str], embedder: Embedder, cache: Path = CACHE, batch: int = 1_000) -> np.ndarray:
    """The model's vectors of the pool, from the cache when these exact texts were embedded by this model."""
    digest = hashlib.sha256("\n".join(texts_).encode()).hexdigest()[:16]
    model = re.sub(r"[^A-Za-z0-9.-]+", "_", embedder.name)
    path = cache / f"pool-v{GENERATOR_VERSION}-{len(texts_)}-{model}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.concatenate([embedder.embed(list(texts_[i : i + batch])) for i in range(0, len(texts_), batch)])
    vectors = vectors.astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part.npy")
    np.save(partial, vectors)
    partial.replace(path)
    return vectors


def jitter_sigma(dim: int, cosine: float = TARGET_COSINE) -> float:
    """Per-dimension sigma so that a unit vector plus N(0, sigma^2 I) noise keeps `cosine` to its origin."""
    return float(np.sqrt((1 / cosine**2 - 1) / dim))


def vary(text: str, rng: random.Random, when: datetime) -> str:
    """A pool text told again: names, places, numbers and dates swapped, words added or dropped."""
    words = text.split()
    out = []
    for word in words:
        bare = word.strip(".,;:!?()'\"")
        tail = word[len(bare) :] if word.startswith(bare) else ""
        if bare in vocab.PEOPLE_SET and rng.random() < 0.6:
            out.append(rng.choice(vocab.SLOTS["person"]) + tail)
        elif bare in vocab.CITY_SET and rng.random() < 0.5:
            out.append(rng.choice(vocab.SLOTS["city"]) + tail)
        elif bare in vocab.MONTH_SET and rng.random() < 0.5:
            out.append(rng.choice(vocab.MONTHS) + tail)
        else:
            out.append(word)
    varied = _NUMBER.sub(lambda m: _other_number(m, rng), " ".join(out))
    if rng.random() < 0.5:
        varied = rng.choice(vocab.OPENERS) + varied[0].lower() + varied[1:]
    if rng.random() < 0.6:
        varied = varied.rstrip(".") + ". " + _fill_slots(rng.choice(vocab.EXTRAS), rng, when)
    return varied


def rows(
    n: int,
    pool: Sequence[Memo],
    vectors: np.ndarray,
    now: datetime,
    cold_share: float = 0.9,
    seed: int = 1,
    chunk_rows: int = 10_000,
    years: float = 2.0,
) -> Iterator[pa.Table]:
    """`n` distinct rows in tables of `chunk_rows`: the columns `Store.add` takes, and the vector.

    A cold row happened 60 days to `years` ago and a warm one in the last 30 days, so a sweep as of
    `now` leaves each where it is (warm rows that are durable are protected, as `remember` would mark them).
    """
    rng = random.Random(seed)
    gen = np.random.default_rng(seed)
    sigma = jitter_sigma(vectors.shape[1])
    seen: set[int] = set()
    span = int(years * 365 * 86_400) - 60 * 86_400
    for start in range(0, n, chunk_rows):
        size = min(chunk_rows, n - start)
        origin = gen.integers(0, len(pool), size)
        noisy = vectors[origin] + gen.normal(0.0, sigma, (size, vectors.shape[1])).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        columns: dict[str, list[object]] = {name: [] for name, _ in ROW_SCHEMA_FIELDS}
        for offset, j in enumerate(origin):
            cold = rng.random() < cold_share
            age = 60 * 86_400 + rng.randint(0, span) if cold else rng.randint(0, 30 * 86_400)
            when = now - timedelta(seconds=age)
            memo = pool[j]
            text = vary(memo.text, rng, when)
            while (key := _key(text)) in seen:
                text = text.rstrip(".") + ". " + _fill_slots(rng.choice(vocab.EXTRAS), rng, when)
            seen.add(key)
            kind, topic = memo.kind, memo.topic
            durable = kind in vocab.DURABLE and not cold
            if cold and kind in vocab.DURABLE:
                kind = "note"  # durable facts stay warm under the rules; the cold tier holds the rest
            columns["id"].append(f"be{seed % 256:02x}{start + offset:08x}")
            columns["content"].append(text)
            columns["tier"].append("cold" if cold else "warm")
            columns["kind"].append(kind)
            columns["protected"].append(durable)
            columns["tags"].append([topic] if rng.random() < 0.6 else [])
            meta = {"origin": "bench"} | ({"n": rng.randint(1, 99)} if rng.random() < 0.2 else {})
            columns["metadata"].append(json.dumps(meta))
            columns["source"].append(rng.choice(vocab.SOURCES) if rng.random() < 0.4 else None)
            columns["occurred_at"].append(when)
            columns["created_at"].append(when + timedelta(seconds=rng.randint(0, 3_600)))
            columns["forget_after"].append(None)
            columns["superseded_by"].append(None)
            columns["superseded_at"].append(None)
        arrays = [pa.array(columns[name], type=kind) for name, kind in ROW_SCHEMA_FIELDS]
        flat = pa.array(noisy.reshape(-1), type=pa.float32())
        arrays.append(pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]))
        names = [name for name, _ in ROW_SCHEMA_FIELDS] + ["vector"]
        yield pa.Table.from_arrays(arrays, names=names)


def _other_number(match: re.Match[str], rng: random.Random) -> str:
    """Another number of the same size; a day of the month (after a month or weekday) stays a day."""
    digits = match.group(0)
    if rng.random() < 0.3:
        return digits
    before = match.string[: match.start()].rstrip().rsplit(" ", 1)[-1]
    if before in vocab.MONTH_SET or before in vocab.WEEKDAY_SET:
        return f"{rng.randint(1, 28):0{len(digits)}d}"
    return str(rng.randint(10 ** (len(digits) - 1) if len(digits) > 1 else 1, 10 ** len(digits) - 1))


def vectors_of(table: pa.Table) -> np.ndarray:
    """The vector column of a chunk as an (n, dim) float32 array."""
    column = table.column("vector").combine_chunks()
    return column.flatten().to_numpy(zero_copy_only=False).reshape(len(table), -1)


def _key(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
