"""How far recall's candidates could go on LoCoMo: where recall ranks each question's evidence.

For each question, recall's own ranking (`Memory.rank`, the order `recall` packs from, counting no use) to a
depth of 400, and the rank of its last evidence turn. The share of questions whose every evidence turn is
within the best N is what a reader of N candidates could reach at most, if it put the evidence first: the
best 25 are about what 1,024 tokens hold (recall_all at 1,024 tokens is 0.775 against 0.773 here). So it
says whether a question is lost to the first ranking (its evidence is not among the candidates at all) or
to the reading of them (it is, but below the budget's cut); the cross-encoder (`--set rerank=100` in
`tests.bench.locomo`) is one such reader.

    .venv/bin/python -m tests.bench.ceiling ../shared/datasets/locomo-dev/locomo-dev.json

The dataset (Maharana et al., ACL 2024, CC BY-NC 4.0) is read from the path given, never copied.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path

from tests.bench.locomo import CATEGORIES, FORMS, HALVES, load_questions, load_turns, store_turns, with_values
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.recall import rank as ranking

DEPTHS = (10, 25, 50, 100, 200, 400)
MISSING = sys.maxsize  # the rank of evidence recall did not return within the depth


def last_evidence_rank(ranked: Sequence[str], covers: Mapping[str, Iterable[str]], evidence: Iterable[str]) -> int:
    """The 1-based rank, in `ranked` record ids, at which the last of the `evidence` turns appears (each record
    covers the turn ids `covers` gives); MISSING when one is not there."""
    first: dict[str, int] = {}
    for rank, rid in enumerate(ranked, start=1):
        for turn in covers.get(rid, ()):
            first.setdefault(turn, rank)
    return max(first.get(turn, MISSING) for turn in evidence)


def within(ranks: Sequence[int], depth: int) -> float:
    """The share of questions whose last evidence rank is within `depth`."""
    return sum(rank <= depth for rank in ranks) / len(ranks) if ranks else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("dataset", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--form", choices=list(FORMS), default="question", help="how each question is asked")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="recall settings to change")
    args = parser.parse_args(argv)
    data = json.loads(args.dataset.read_text())
    settings = MemorySettings(recall=with_values(ranking.RecallSettings(), args.set))
    embedder = FastEmbedder()
    embedder.load()
    ranks: dict[tuple[str, int], list[int]] = defaultdict(list)  # (half, category) -> last evidence ranks
    started = time.perf_counter()
    for number, sample in enumerate(data):
        half = next(h for h, members in HALVES.items() if number in members)
        sessions = load_turns(sample["conversation"])
        turns = [t for s in sessions for t in s]
        questions, _ = load_questions(sample["qa"], {t.dia_id for t in turns})
        now = max(t.occurred_at for t in turns) + timedelta(days=1)
        with tempfile.TemporaryDirectory(prefix="memtiers-ceiling-") as tmp:
            memory = Memory(Path(tmp) / "ns", embedder, settings)
            try:
                covers = store_turns(memory, sessions, now)
                for q in questions:
                    ranked = [h.record.id for h in memory.rank(FORMS[args.form](q.text), max(DEPTHS))]
                    ranks[(half, q.category)].append(last_evidence_rank(ranked, covers, q.evidence))
            finally:
                memory.close()
        print(f"# conversation {number}: {len(questions)} questions", file=sys.stderr, flush=True)

    def share(depth: int, halves: Iterable[str], categories: Iterable[int]) -> str:
        chosen = [r for h in halves for c in categories for r in ranks[(h, c)]]
        return f"{within(chosen, depth):.3f}"

    print(f"every evidence turn within recall's best N ({sum(map(len, ranks.values()))} questions, asked as:")
    print(f"{args.form}; settings: {settings.recall.describe()}; {time.perf_counter() - started:.0f} s)\n")
    heads = ["N", "all", *(f"conversations {h}" for h in HALVES), *CATEGORIES.values()]
    print("| " + " | ".join(heads) + " |\n|" + " --- |" * len(heads))
    for depth in DEPTHS:
        cells = [share(depth, HALVES, CATEGORIES), *(share(depth, [h], CATEGORIES) for h in HALVES)]
        cells += [share(depth, HALVES, [c]) for c in CATEGORIES]
        print(f"| {depth} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
