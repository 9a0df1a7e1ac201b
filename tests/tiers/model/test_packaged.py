"""The packaged model run without fastembed: fastembed's vectors bit for bit, and fastembed never imported."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fastembed import TextEmbedding
from fastembed.common.model_description import ModelSource, PoolingType

from tiers.model import graphs
from tiers.model.embedder import DEFAULT_MODEL, packaged_model_folder
from tiers.model.packaged import PackagedModel

_WORDS = [
    *("the", "kitchen", "renovation", "trip", "to", "Japan", "allergic", "penicillin", "Dagster", "pipeline"),
    *("café", "naïve", "東京", "🙂", ",", ".", "!", "?"),
]


def _texts() -> list[str]:
    rng = random.Random(7)
    short = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 40))) for _ in range(66)]
    long = [" ".join(rng.choice(_WORDS) for _ in range(300)) for _ in range(3)]  # past the 256 word pieces read
    return ["", " ", "hello", *short[:30], *long, *short[30:]]  # 72: batches of short and long texts mixed


def _fastembed(folder: Path) -> TextEmbedding:
    """The same folder opened by fastembed as the packaged model was before (mean pooling, normalised)."""
    if DEFAULT_MODEL not in {m["model"] for m in TextEmbedding.list_supported_models()}:
        TextEmbedding.add_custom_model(
            model=DEFAULT_MODEL,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
            dim=384,
            model_file="model.onnx",
        )
    return TextEmbedding(DEFAULT_MODEL, specific_model_path=str(folder), enable_cpu_mem_arena=False)


@pytest.mark.parametrize("recipe", [graphs.DOCUMENTS, graphs.QUERIES])
@pytest.mark.parametrize("batch_size", [32, 5])
def test_the_packaged_model_gives_fastembeds_vectors_bit_for_bit(
    model_cache: Path, recipe: str, batch_size: int
) -> None:
    folder = packaged_model_folder(model_cache, recipe)
    texts = _texts()

    mine = np.asarray(list(PackagedModel(folder).embed(texts, batch_size)), dtype=np.float32)
    theirs = np.asarray(list(_fastembed(folder).embed(texts, batch_size=batch_size)), dtype=np.float32)

    assert mine.shape == (len(texts), 384)
    assert np.array_equal(mine, theirs)  # every stored vector, and so every store, unchanged


_LOAD = """
import sys
from pathlib import Path
from tiers.model.embedder import FastEmbedder
embedder = FastEmbedder(cache_dir=Path(sys.argv[1]))
embedder.load()
assert embedder.embed(["a memory"]).shape == (1, 384) and embedder.embed_queries(["a query"]).shape == (1, 384)
print(sorted(name for name in sys.modules if name.split(".")[0] in ("fastembed", "huggingface_hub", "requests")))
"""


def test_a_process_embedding_with_the_packaged_model_never_imports_fastembed(model_cache: Path) -> None:
    run = subprocess.run([sys.executable, "-c", _LOAD, str(model_cache)], capture_output=True, text=True, timeout=120)

    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


@pytest.mark.parametrize("batch_size", [64, 3])
def test_memories_run_by_length_get_the_vectors_they_get_alone_in_the_order_given(
    model_cache: Path, batch_size: int
) -> None:
    folder = packaged_model_folder(model_cache, graphs.DOCUMENTS)
    texts = _texts()
    by_length = PackagedModel(folder, by_length=True)

    batched = np.asarray(list(by_length.embed(texts, batch_size)), dtype=np.float32)
    alone = np.asarray([next(iter(by_length.embed([text]))) for text in texts], dtype=np.float32)
    in_order = np.asarray(list(PackagedModel(folder).embed(texts, batch_size)), dtype=np.float32)

    assert batched.shape == (len(texts), 384)
    assert np.array_equal(batched, alone)  # a stored vector does not depend on what it was imported with
    assert np.array_equal(batched, in_order)
