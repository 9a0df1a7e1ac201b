"""What each recall technique adds: the LoCoMo questions at 1,024 tokens and at k=10, one technique switched at a time.

    .venv/bin/python -m tests.bench.ablation ../shared/datasets/locomo-dev/locomo-dev.json --stores /tmp/locomo-stores

    .venv/bin/python -m tests.bench.ablation ... --stores /tmp/locomo-stores --only default "without neighbours"

Stores are filled once through `Memory.remember` (as in `tests.bench.locomo`) and kept in `--stores`,
so the variants differ only in how recall ranks and packs. `--only` runs the variants whose name holds
one of the words given. After the table comes recall_all at 1,024 tokens on each half, per category:
conversations 0-3, where a technique is tuned, and 4-6, where it must help again to stay.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.bench.locomo import CATEGORIES, HALVES, Question, Tally, found_ids, load_questions, load_turns, store_turns
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.recall.rank import RecallSettings

SETTINGS = (("1024 tok", 50, 1024), ("k=10", 10, None))


def variants() -> dict[str, RecallSettings]:
    full = RecallSettings()
    out = {"all techniques (default)": full}
    for name in ("dated", "when", "grouped", "neighbours", "score_mix", "rrf_k"):
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
    parser.add_argument("--only", nargs="*", help="run only the variants whose name contains one of these")
    args = parser.parse_args(argv)
    embedder = FastEmbedder()
    embedder.load()
    data = json.loads(args.dataset.read_text())
    opened = [open_store(sample, args.stores, embedder) for sample in data]
    head = " | ".join(f"{label} {c}" for label, _, _ in SETTINGS for c in ["all", *CATEGORIES])
    print(f"| variant | {head} | p50 ms |")
    print("| --- |" + " --- |" * (len(SETTINGS) * 5 + 1))
    by_half: dict[str, dict[str, Tally]] = {}
    chosen = {
        name: settings
        for name, settings in variants().items()
        if not args.only or any(part in name for part in args.only)
    }
    for name, settings in chosen.items():
        tally, latencies = Tally(), []
        halves = {half: Tally() for half in HALVES}
        for number, (memory, questions, covers, now) in enumerate(opened):
            half = halves[next(h for h, members in HALVES.items() if number in members)]
            memory.settings = replace(memory.settings, recall=settings)
            for question in questions:
                tally.count[question.category] += 1
                half.count[question.category] += 1
                for label, limit, budget in SETTINGS:
                    start = time.perf_counter()
                    packed = memory.recall(question.text, now, limit, budget)
                    latencies.append(time.perf_counter() - start)
                    found = found_ids(packed, covers)
                    tally.add("m", label, question, found)
                    half.add("m", label, question, found)
        by_half[name] = halves
        cells = [f"{tally.score('all', 'm', label, c):.3f}" for label, _, _ in SETTINGS for c in [None, *CATEGORIES]]
        latencies.sort()
        print(f"| {name} | " + " | ".join(cells) + f" | {latencies[len(latencies) // 2] * 1000:.1f} |", flush=True)
    print()
    first = SETTINGS[0][0]
    print(f"recall_all at {first} on each half (tune on 0-3, confirm on 4-6)")
    cats = [None, *CATEGORIES]
    head = " | ".join(f"{half} {c or 'all'}" for half in HALVES for c in cats)
    print(f"| variant | {head} |")
    print("| --- |" + " --- |" * (len(HALVES) * len(cats)))
    for name, halves in by_half.items():
        cells = [f"{halves[half].score('all', 'm', first, c):.3f}" for half in HALVES for c in cats]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for memory, _, _, _ in opened:
        memory.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
