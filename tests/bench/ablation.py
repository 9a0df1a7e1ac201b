"""What each recall technique adds: the LoCoMo questions at 1,024 tokens and at k=10, one technique switched at a time.

    .venv/bin/python -m tests.bench.ablation ../shared/datasets/locomo-dev/locomo-dev.json --stores /tmp/locomo-stores

Stores are filled once through `Memory.remember` (as in `tests.bench.locomo`) and kept in `--stores`,
so the variants differ only in how recall ranks and packs.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.bench.locomo import CATEGORIES, Question, Tally, found_ids, load_questions, load_turns, store_turns
from tiers.embedder import FastEmbedder
from tiers.memory import Memory, MemorySettings
from tiers.recall import RecallSettings

SETTINGS = (("1024 tok", 50, 1024), ("k=10", 10, None))


def variants() -> dict[str, RecallSettings]:
    full = RecallSettings()
    out = {"all techniques (default)": full}
    for name in ("dated", "when", "grouped", "neighbours", "score_mix", "rrf_k", "cold_penalty"):
        out[f"without {name}"] = full.without(name)
    out["without BM25 (text_weight 0)"] = full.without("text_weight")
    out["neighbours reach 1 (adjacent rows only)"] = replace(full, reach=1)
    out["none: RRF k=60 of full rankings, prefixed lines"] = full.without(
        "dated", "when", "grouped", "neighbours", "score_mix", "rrf_k", "cold_penalty"
    )
    return out


def open_store(
    sample: dict[str, Any], root: Path, embedder: FastEmbedder
) -> tuple[Memory, list[Question], dict[str, set[str]], datetime]:
    sessions = load_turns(sample["conversation"])
    turns = [t for s in sessions for t in s]
    questions, _ = load_questions(sample["qa"], {t.dia_id for t in turns})
    folder = root / sample["sample_id"]
    covers_file = folder / "covers.json"
    now = max(t.occurred_at for t in turns) + timedelta(days=1)
    memory = Memory(folder, embedder, MemorySettings())
    if not covers_file.exists():
        covers = store_turns(memory, sessions, now)
        covers_file.write_text(json.dumps({k: sorted(v) for k, v in covers.items()}))
    loaded = {k: set(v) for k, v in json.loads(covers_file.read_text()).items()}
    return memory, questions, loaded, now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="recall ablation on a LoCoMo-format file")
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--stores", type=Path, required=True, help="folder to keep the filled stores in")
    args = parser.parse_args(argv)
    embedder = FastEmbedder()
    embedder.load()
    data = json.loads(args.dataset.read_text())
    opened = [open_store(sample, args.stores, embedder) for sample in data]
    head = " | ".join(f"{label} {c}" for label, _, _ in SETTINGS for c in ["all", *CATEGORIES])
    print(f"| variant | {head} | p50 ms |")
    print("| --- |" + " --- |" * (len(SETTINGS) * 5 + 1))
    for name, settings in variants().items():
        tally, latencies = Tally(), []
        for memory, questions, covers, now in opened:
            memory.settings = replace(memory.settings, recall=settings)
            for question in questions:
                tally.count[question.category] += 1
                for label, limit, budget in SETTINGS:
                    start = time.perf_counter()
                    packed = memory.recall(question.text, now, limit, budget)
                    latencies.append(time.perf_counter() - start)
                    tally.add("m", label, question, found_ids(packed, covers))
        cells = [f"{tally.score('all', 'm', label, c):.3f}" for label, _, _ in SETTINGS for c in [None, *CATEGORIES]]
        latencies.sort()
        print(f"| {name} | " + " | ".join(cells) + f" | {latencies[len(latencies) // 2] * 1000:.1f} |", flush=True)
    for memory, _, _, _ in opened:
        memory.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
