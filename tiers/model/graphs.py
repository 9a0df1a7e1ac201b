"""The packaged model's ONNX graph, rewritten once per model cache: one graph for memories, one for queries.

The packaged all-MiniLM-L6-v2 stores its weights as int8 with a Cast and a Mul each; onnxruntime folds
those into float32 constants at load, four times the size they are stored in. Two rewrites:

- `DOCUMENTS`: the embedding tables are gathered as int8 and only the rows a text uses are scaled to
  float32 (the same Cast and Mul, on those rows): vectors bit for bit the same as the packaged graph's,
  in less memory than the full float32 tables; what it saves pays for the second graph. No library
  rewrite does this.
- `QUERIES`: that, and every weight MatMul as onnxruntime's `DynamicQuantizeMatMul` (the int8 weights
  as they are stored, each query's activations quantized to 8 bits as it runs): faster, its vectors
  close to the memory path's but not equal. Stored vectors never come from it: every store made so far
  stays valid, and `memtiers reembed` has nothing to do. Its attention and Q/K/V projections are then
  fused by hand (`_fuse`), and the rest by onnxruntime's own BERT optimizer (`_library_fusions`).
  onnxruntime's `quantize_dynamic` cannot stand in for the MatMul rewrite: it quantizes only MatMuls
  whose weight is a float constant, so it would need the weights folded to float32 first and would
  quantize them anew instead of using the stored int8 values. The measurements behind each choice
  are in docs/scale.md and the commits that made them.

Written beside the model in the cache with a stamp naming the source file and the recipe, rebuilt when
either changes; built in a process of its own, into a temporary file renamed into place, so servers
starting together never read half a graph and none holds what the parse left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from tiers.files import write_atomic

DOCUMENTS = "documents"
QUERIES = "queries"
# Each recipe's version, in its stamp; the queries' is also in its cache folder's name (tiers/model/embedder.py),
# so two memtiers versions sharing a cache never rebuild each other's graph.
VERSIONS = {DOCUMENTS: 3, QUERIES: 4}


def ensure(source: Path, target: Path, recipe: str) -> Path:
    """`target`, a rewrite of the graph in `source` by `recipe`, built now unless its stamp says it is current."""
    args = ["tiers.model.graphs", str(source)]
    return built_apart(target, _stamp(source, recipe), args, [recipe], 300, f"rewriting {source}")


def built_apart(
    target: Path, wanted: dict[str, Any], module: Sequence[str], after: Sequence[str], timeout: float, what: str
) -> Path:
    """`target`, unless its stamp beside it says `wanted`, built by `python -m <module...> <partial> <after...>` in
    a process of its own, into a temporary file renamed into place, then stamped.

    Built in the server itself, what glibc kept of the freed parse stayed in the server's resident memory; the
    temporary file and the rename keep servers starting together from reading half a graph.
    """
    stamp = _stamp_path(target)
    try:
        if target.is_file() and not target.is_symlink() and json.loads(stamp.read_text()) == wanted:
            return target
    except (OSError, ValueError):
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        done = subprocess.run(
            [sys.executable, "-m", *module, str(partial), *after],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            raise RuntimeError(f"{what} failed: {lines[-1] if lines else f'exit {done.returncode}'}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    write_atomic(stamp, json.dumps(wanted))
    return target


def rewrite(source: Path, target: Path, recipe: str) -> None:
    """Write the graph of `source` rewritten by `recipe` to `target` (raises on a graph it does not know)."""
    if recipe not in (DOCUMENTS, QUERIES):
        raise ValueError(f"unknown graph recipe {recipe!r}")
    import onnx  # only here: a cache that holds both graphs never imports it

    model = onnx.load(str(source))
    graph = model.graph
    if any(
        attribute.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
        for node in graph.node
        for attribute in node.attribute
    ):
        raise ValueError(f"{source} has subgraphs, which this rewrite does not follow")
    constants = {init.name: init for init in graph.initializer}
    made_by = {output: node for node in graph.node for output in node.output}

    def dequantized(name: str) -> tuple[str, str] | None:
        """(int8 weight, scale) when `name` is Mul(Cast(int8 constant), constant scale), else None."""
        mul = made_by.get(name)
        if mul is None or mul.op_type != "Mul" or mul.input[1] not in constants:
            return None
        cast = made_by.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in constants:
            return None
        return cast.input[0], mul.input[1]

    nodes, gathered, quantized = [], 0, 0
    for node in graph.node:
        plain_gather = node.op_type == "Gather" and all(a.name != "axis" or a.i == 0 for a in node.attribute)
        table = dequantized(node.input[0]) if plain_gather else None
        if table is not None:
            weight, scale = table
            rows, name = node.input[1], node.name
            per_row = constants[scale].dims[0] == constants[weight].dims[0] > 1
            nodes += [
                onnx.helper.make_node("Gather", [weight, rows], [f"{name}_q"], name=f"{name}_q", axis=0),
                onnx.helper.make_node("Gather", [scale, rows], [f"{name}_s"], name=f"{name}_s", axis=0)
                if per_row
                else onnx.helper.make_node("Identity", [scale], [f"{name}_s"], name=f"{name}_s"),
                onnx.helper.make_node(
                    "Cast", [f"{name}_q"], [f"{name}_f"], name=f"{name}_f", to=onnx.TensorProto.FLOAT
                ),
                onnx.helper.make_node("Mul", [f"{name}_f", f"{name}_s"], list(node.output), name=f"{name}_rows"),
            ]
            gathered += 1
            continue
        matrix = dequantized(node.input[1]) if recipe == QUERIES and node.op_type == "MatMul" else None
        if matrix is not None:
            weight, scale = matrix
            scales = onnx.numpy_helper.to_array(constants[scale])
            if scales.size == scales.shape[-1]:  # one scale per output column: what the operator takes
                name = node.name
                graph.initializer.extend(
                    [
                        onnx.numpy_helper.from_array(scales.reshape(-1), f"{name}_scale"),
                        onnx.numpy_helper.from_array(np.zeros(scales.size, dtype=np.int8), f"{name}_zero"),
                    ]
                )
                inputs = [node.input[0], weight, f"{name}_scale", f"{name}_zero"]
                nodes.append(
                    onnx.helper.make_node(
                        "DynamicQuantizeMatMul", inputs, list(node.output), name=f"{name}_q8", domain="com.microsoft"
                    )
                )
                quantized += 1
                continue
        nodes.append(node)
    if not gathered or (recipe == QUERIES and not quantized):
        raise ValueError(f"{source} is not the graph this rewrite knows (int8 weights with a Cast and a Mul)")
    del graph.node[:]
    graph.node.extend(_read(nodes, {output.name for output in graph.output}))
    if recipe == QUERIES:
        _fuse(graph)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if recipe == QUERIES and not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    if recipe == QUERIES:
        model = _library_fusions(model)
    onnx.save(model, str(target))


def _library_fusions(model: Any) -> Any:
    """onnxruntime's own BERT fusions (GELU, layer norms) over what `_fuse` left.

    Its optimizer finds no attention in this export (the mask's Where, Q and K each scaled, the NaN
    guard) and its deeper levels need torch; `_fuse` does that part. Memories' graph never goes through
    it: its fusions round differently from the shipped graph, and stored vectors must be bit for bit.
    """
    from onnxruntime.transformers.optimizer import optimize_model

    return optimize_model(model, model_type="bert", num_heads=0, hidden_size=0, opt_level=0).model


class _Graph:
    """Who makes and who reads each value of a graph, and its constants, to match patterns of nodes in it."""

    def __init__(self, graph: Any) -> None:
        import onnx

        self.constants = {init.name: init for init in graph.initializer}
        self.made_by = {output: node for node in graph.node for output in node.output}
        self.readers: dict[str, list[Any]] = {}
        for node in graph.node:
            for name in node.input:
                self.readers.setdefault(name, []).append(node)
        self._array = onnx.numpy_helper.to_array

    def const(self, name: str) -> np.ndarray | None:
        init = self.constants.get(name)
        return None if init is None else self._array(init)

    def scalar(self, node: Any, other: str) -> float | None:
        """The constant one-value input of a two-input node beside `other`, or None."""
        names = [name for name in node.input if name != other]
        value = self.const(names[0]) if len(names) == 1 and len(node.input) == 2 else None
        return float(value.reshape(-1)[0]) if value is not None and value.size == 1 else None

    def made(self, name: str, op: str) -> Any:
        """The node of type `op` that makes `name`, or None."""
        node = self.made_by.get(name)
        return node if node is not None and node.op_type == op else None

    def read(self, name: str, op: str) -> list[Any]:
        """The nodes of type `op` that read `name`."""
        return [node for node in self.readers.get(name, []) if node.op_type == op]


class _Attention(NamedTuple):
    """One layer's attention: its Q, K and V projections with their constants, its output and its heads."""

    projections: list[Any]  # the three DynamicQuantizeMatMul nodes, Q, K, V
    weights: list[np.ndarray]
    scales: list[np.ndarray]
    zeros: list[np.ndarray]
    biases: list[np.ndarray]
    output: str  # the value the heads' outputs, merged, are
    heads: int


def _perm(node: Any) -> list[int]:
    return next((list(a.ints) for a in node.attribute if a.name == "perm"), [])


_HEADS_FIRST = [0, 2, 1, 3]


def _fuse(graph: Any) -> int:
    """Fuse the queries graph's attention and Q/K/V projections into onnxruntime's own operators.

    The packaged graph spells attention out as the exporter wrote it: per layer some 30 nodes (reshapes,
    transposes, the shape arithmetic they need, two scalings, the mask's Where, Softmax, an IsNaN guard),
    each a kernel call, which for a query of a few words costs more than the arithmetic. Here each layer's
    attention becomes one `MultiHeadAttention` (the same scaled dot product, Q/K/V biases inside, the
    attention mask as its key padding mask), its three projections one `DynamicQuantizeMatMul` over their
    weights side by side (what its input is quantized to is the same for all three, so their outputs are
    unchanged) and a Split. onnxruntime's optimizer has no pattern for this export's attention, so this
    stays by hand (GELU and the rest it fuses itself: `_library_fusions`). Returns the layers fused; a
    graph whose attention does not match the pattern in every layer is left as it is (0).
    """
    import onnx

    helper, g = onnx.helper, _Graph(graph)
    attention = [_attention(g, softmax) for softmax in graph.node if softmax.op_type == "Softmax"]
    masked = "attention_mask" in {value.name for value in graph.input}
    if not masked or not attention or any(found is None for found in attention):
        return 0
    replaced: dict[str, list[Any]] = {}  # a node's first output -> what takes its place
    after: dict[str, list[Any]] = {}  # a node's first output -> nodes placed just after it
    mask = "fused_key_padding_mask"
    first = helper.make_node("Cast", ["attention_mask"], [mask], name="fused_mask", to=onnx.TensorProto.INT32)
    for layer, found in enumerate(attention):
        assert found is not None
        projections, output, heads = found.projections, found.output, found.heads
        name = f"fused_layer_{layer}"
        arrays = {
            "w": np.concatenate(found.weights, axis=1),
            "s": np.concatenate(found.scales),
            "z": np.concatenate(found.zeros),
            "split": np.array([w.shape[1] for w in found.weights], dtype=np.int64),
            "bias": np.concatenate(found.biases).astype(np.float32),
        }
        graph.initializer.extend(onnx.numpy_helper.from_array(a, f"{name}_{k}") for k, a in arrays.items())
        qkv = [f"{name}_{part}" for part in "qkv"]
        earliest = min(projections, key=lambda p: list(graph.node).index(p))
        after[earliest.output[0]] = [
            helper.make_node(
                "DynamicQuantizeMatMul",
                [projections[0].input[0], f"{name}_w", f"{name}_s", f"{name}_z"],
                [f"{name}_qkv"],
                name=f"{name}_qkv",
                domain="com.microsoft",
            ),
            helper.make_node("Split", [f"{name}_qkv", f"{name}_split"], qkv, name=f"{name}_split", axis=-1),
        ]
        replaced[output] = [
            helper.make_node(
                "MultiHeadAttention",
                [*qkv, f"{name}_bias", mask],
                [output],
                name=f"{name}_attention",
                domain="com.microsoft",
                num_heads=heads,
            )
        ]
    nodes = [first]
    for node in graph.node:
        key = node.output[0] if node.output else ""
        nodes += replaced.get(key, [node])
        nodes += after.get(key, [])
    del graph.node[:]
    graph.node.extend(_read(nodes, {output.name for output in graph.output}))
    return len(attention)


def _attention(g: _Graph, softmax: Any) -> _Attention | None:
    """One layer's attention around its Softmax, as exported, or None where any part is not as expected."""
    scores = g.made(softmax.input[0], "Add")
    product = g.made(scores.input[0], "MatMul") if scores is not None else None
    masking = g.made(scores.input[1], "Where") if scores is not None else None
    if product is None or masking is None or len(masking.input) != 3:
        return None
    # The mask as exported: 0 where a key is kept, "minus infinity" where it is padding.
    kept, dropped = (g.const(name) for name in masking.input[1:])
    if kept is None or dropped is None or kept.size != 1 or dropped.size != 1:
        return None
    if kept.item() != 0 or dropped.item() > -1e4:
        return None
    q_scaled, k_scaled = g.made(product.input[0], "Mul"), g.made(product.input[1], "Mul")
    if q_scaled is None or k_scaled is None:
        return None
    q_scale, k_scale = g.scalar(q_scaled, q_scaled.input[0]), g.scalar(k_scaled, k_scaled.input[0])
    if q_scale is None or q_scale <= 0 or q_scale != k_scale:
        return None
    # Q and K each scaled by head_size ** -0.25: the 1 / sqrt(head_size) of the dot product, split in two
    head_size = round(q_scale**-4)
    if head_size < 1 or abs(q_scale - head_size**-0.25) > 1e-6:
        return None
    q = _heads_of(g, q_scaled.input[0])
    k = _key_heads_of(g, k_scaled.input[0])
    probabilities = softmax.output[0]
    guards = g.read(probabilities, "Where")  # NaN (a row with every key masked) read as 0
    if len(guards) == 1 and guards[0].input[2] == probabilities:
        probabilities = guards[0].output[0]
    weighted = [node for node in g.read(probabilities, "MatMul") if node.input[0] == probabilities]
    if len(weighted) != 1:
        return None
    v = _heads_of(g, weighted[0].input[1])
    merged = [t for t in g.read(weighted[0].output[0], "Transpose") if _perm(t) == _HEADS_FIRST]
    output = g.read(merged[0].output[0], "Reshape") if len(merged) == 1 else []
    if q is None or k is None or v is None or len(output) != 1:
        return None
    found = _Attention([], [], [], [], [], output[0].output[0], 0)
    for name in (q, k, v):
        add = g.made(name, "Add")
        projection = g.made(add.input[0], "DynamicQuantizeMatMul") if add is not None else None
        if projection is None:
            return None
        zero = projection.input[3] if len(projection.input) > 3 else ""
        arrays = [g.const(add.input[1]), g.const(projection.input[1]), g.const(projection.input[2])]
        arrays.append(g.const(zero) if zero else np.zeros(0, dtype=np.int8))
        bias, weight, scale, zeros = arrays
        if bias is None or weight is None or scale is None or zeros is None or bias.ndim != 1 or weight.ndim != 2:
            return None
        found.projections.append(projection)
        found.biases.append(bias)
        found.weights.append(weight)
        found.scales.append(scale)
        found.zeros.append(zeros if zero else np.zeros(scale.size, dtype=np.int8))
    hidden = found.biases[0].size
    same_input = all(p.input[0] == found.projections[0].input[0] for p in found.projections)
    if not same_input or hidden % head_size or any(b.size != hidden for b in found.biases):
        return None
    return found._replace(heads=hidden // head_size)


def _heads_of(g: _Graph, name: str) -> str | None:
    """X where `name` is Transpose(0, 2, 1, 3) of Reshape(X): a projection split into heads."""
    split = g.made(name, "Transpose")
    if split is None or _perm(split) != _HEADS_FIRST:
        return None
    shaped = g.made(split.input[0], "Reshape")
    return shaped.input[0] if shaped is not None else None


def _key_heads_of(g: _Graph, name: str) -> str | None:
    """The key projection behind its heads' transpose for the dot product (reshapes and transposes)."""
    for _ in range(8):
        found = _heads_of(g, name)
        if found is not None:
            return found
        node = g.made_by.get(name)
        if node is None or node.op_type not in ("Reshape", "Transpose"):
            return None
        name = node.input[0]
    return None


def _read(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """The nodes whose results something reads, in order: the Casts and Muls a rewrite left unread go.

    onnxruntime would fold them into float32 weights at load before dropping them, at a cost in peak
    memory and load time."""
    wanted, kept = set(outputs), []
    for node in reversed(nodes):
        if any(name in wanted for name in node.output):
            kept.append(node)
            wanted.update(node.input)
    return kept[::-1]


def _stamp(source: Path, recipe: str) -> dict[str, object]:
    info = source.stat()
    return {
        "source": str(source.resolve()),
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
        "recipe": recipe,
        "version": VERSIONS[recipe],
    }


def _stamp_path(target: Path) -> Path:
    return target.with_name(f"{target.name}.stamp.json")


if __name__ == "__main__":  # python -m tiers.model.graphs SOURCE TARGET RECIPE: what `ensure` runs apart
    rewrite(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
