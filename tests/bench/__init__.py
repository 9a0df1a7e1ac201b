"""Benchmarks: run by hand, never by the test suite."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the server sets it (server/__init__.py)


def packages() -> str:
    """The versions of the packages a run's figures depend on, for its header: a new install has moved figures
    (LoCoMo dev 0.774 -> 0.772 for the same code, 2026-12-07) and a run should say what it ran on."""
    from importlib.metadata import PackageNotFoundError, version

    names = ("onnxruntime", "tokenizers", "numpy", "lancedb", "pylance", "pyarrow", "onnx")
    found = []
    for name in names:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} -")
    return ", ".join(found)
