"""The packaged model run on onnxruntime and tokenizers directly: what fastembed does for it, without fastembed.

fastembed's import brings huggingface_hub, requests and its image models along, none of which a model
read from a folder on disk needs, and a restarted server would wait for that import before its first
recall. This runs a model folder the way fastembed's mean-pooled, normalised text models do (tokenizer
settings from the folder's side files, batch-longest padding, mean of the real tokens' outputs in float64,
then normalised), so the vectors are fastembed's bit for bit (tests/tiers/model/test_packaged.py). Named
models of the hub still go through fastembed (tiers/model/embedder.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

# Word pieces a batch holds at most (a longer text runs alone): shorter batches waste less on padding
# and stay in cache.
TOKENS_PER_BATCH = 512


class PackagedModel:
    """One ONNX text model in a folder (model.onnx, tokenizer.json and its side files), embedding in batches."""

    def __init__(self, folder: Path, threads: int | None = None, by_length: bool = False) -> None:
        """`by_length`: run texts in batches of similar length (see `embed`), for a graph whose vectors do
        not depend on what else is in the batch; a dynamically quantized graph's do, and keep their order."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = threads
        # onnxruntime's memory arena keeps the peak of every batch for the life of the process.
        options.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), providers=["CPUExecutionProvider"], sess_options=options
        )
        self.inputs = {node.name for node in self.session.get_inputs()}
        self.tokenizer = _tokenizer(folder)
        self.by_length = by_length

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> Iterator[np.ndarray]:
        """One unit float32 vector per text, in order.

        By length, texts run shortest first, each batch at most `batch_size` texts and about
        TOKENS_PER_BATCH word pieces: a batch is padded to its longest text, and attention's work grows
        with the square of that length, so a mixed batch spends most of its time on padding.
        """
        if not self.by_length or len(texts) <= 1:
            for start in range(0, len(texts), batch_size):
                yield from self._batch(list(texts[start : start + batch_size]))
            return
        lengths = [sum(e.attention_mask) for e in self.tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        out: np.ndarray | None = None
        start = 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < batch_size
                and (end - start + 1) * lengths[order[end]] <= TOKENS_PER_BATCH
            ):
                end += 1
            rows = order[start:end]
            vectors = self._batch([texts[i] for i in rows])
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=vectors.dtype)
            out[rows] = vectors
            start = end
        assert out is not None
        yield from out

    def _batch(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed: dict[str, np.ndarray] = {"input_ids": ids}
        if "attention_mask" in self.inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        tokens = self.session.run(None, feed)[0]
        # The mean of the real tokens' outputs, summed in float64; normalised, then cast back.
        summed = np.sum(tokens, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
        pooled = summed / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, ord=2, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(tokens.dtype, copy=False)


def _tokenizer(folder: Path) -> Any:
    """tokenizer.json with the truncation, special tokens and padding its side files set."""
    from tokenizers import Tokenizer

    settings = json.loads((folder / "tokenizer_config.json").read_text())
    specials = json.loads((folder / "special_tokens_map.json").read_text())
    config = json.loads((folder / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    limits = [v for v in (settings.get("model_max_length"), settings.get("max_length")) if isinstance(v, int) and v > 0]
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=min(limits), direction=settings.get("truncation_side") or truncation.get("direction", "right")
    )
    tokenizer.add_special_tokens([token for token in specials.values() if isinstance(token, str)])
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or settings["pad_token"]
    pad_id = padding.get("pad_id", config.get("pad_token_id"))
    tokenizer.enable_padding(
        direction=settings.get("padding_side") or padding.get("direction", "right"),
        pad_id=tokenizer.token_to_id(pad_token) if pad_id is None else pad_id,
        pad_type_id=padding.get("pad_type_id", 0),
        pad_token=pad_token,
        pad_to_multiple_of=padding.get("pad_to_multiple_of"),
        length=None,
    )
    return tokenizer
