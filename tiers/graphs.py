"""The packaged model's ONNX graph, rewritten once per model cache: one graph for memories, one for queries.

The packaged all-MiniLM-L6-v2 stores its weights as int8 with a Cast and a Mul each; onnxruntime folds
those into float32 constants at load, four times the size they are stored in. Two rewrites:

- `DOCUMENTS`: the embedding tables are gathered as int8 and only the rows a text uses are scaled to
  float32 (the same Cast and Mul, on those rows): vectors bit for bit the same as the packaged graph's,
  in 40 MB less (a process with only this graph loaded: 211 against 251 MB). What it saves pays for
  the second graph: with both loaded a process holds 239 MB (peak 239) against 248 (peak 300) with the
  packaged graph alone.
- `QUERIES`: that, and every weight MatMul as onnxruntime's `DynamicQuantizeMatMul` (the int8 weights
  as they are stored, each query's activations quantized to 8 bits as it runs). A query of ~20 words
  embeds in 5.3-5.9 against 7.0-9.0 ms on two cores; its vector agrees with the memory path's to a
  cosine of 0.992 on average (0.974 at least, over 2,000 texts). Stored vectors never come from it:
  every store made so far stays valid, and `memtiers reembed` has nothing to do.

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
from pathlib import Path
from typing import Any

import numpy as np

from tiers.files import write_atomic

DOCUMENTS = "documents"
QUERIES = "queries"
RECIPE_VERSION = 2


def ensure(source: Path, target: Path, recipe: str) -> Path:
    """`target`, a rewrite of the graph in `source` by `recipe`, built now unless its stamp says it is current."""
    stamp = _stamp_path(target)
    wanted = _stamp(source, recipe)
    try:
        if target.is_file() and not target.is_symlink() and json.loads(stamp.read_text()) == wanted:
            return target
    except (OSError, ValueError):
        pass
    partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        _rewrite_apart(source, partial, recipe)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    write_atomic(stamp, json.dumps(wanted))
    return target


def _rewrite_apart(source: Path, target: Path, recipe: str) -> None:
    """`rewrite` in a process of its own: the parsed graph (~100 MB at its peak) never joins a server's heap.

    Built in the server itself, the server's resident memory after a first start was 445 against 419 MB
    at 10,000 memories (peak 534 against 432): what glibc kept of the freed parse.
    """
    done = subprocess.run(
        [sys.executable, "-m", "tiers.graphs", str(source), str(target), recipe],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"rewriting {source} failed: {lines[-1] if lines else f'exit {done.returncode}'}")


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
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if recipe == QUERIES and not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(target))


def _read(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """The nodes whose results something reads, in order: the Casts and Muls a rewrite left unread go.

    onnxruntime folds them into float32 weights at load before it drops them: both graphs loaded peaked at
    414-421 MB (0.85-0.90 s) with them, 249-253 MB (0.55-0.63 s) without."""
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
        "version": RECIPE_VERSION,
    }


def _stamp_path(target: Path) -> Path:
    return target.with_name(f"{target.name}.stamp.json")


if __name__ == "__main__":  # python -m tiers.graphs SOURCE TARGET RECIPE: what `ensure` runs apart
    rewrite(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
