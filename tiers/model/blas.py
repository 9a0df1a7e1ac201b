"""numpy's BLAS on one thread: the products a recall makes are small, and a second BLAS thread only fights
the embedding model's threads for the two cores.

A recall multiplies a few thousand rows by one or two query vectors, a few milliseconds of work that
a second thread cannot halve; onnxruntime keeps its own threads spinning a while after each query's
embedding, so OpenBLAS's second thread waits for a core and a recall takes longer with two threads than
with one (docs/scale.md has the run). numpy reads OPENBLAS_NUM_THREADS only when it
is first imported, so this sets the count on the library numpy has loaded, by its own C call.
Linux only (it finds the library in /proc/self/maps); elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Any

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads")
_lock = threading.Lock()
_set: bool | None = None  # None: not tried yet in this process


def one_thread() -> bool:
    """Set the loaded OpenBLAS to one thread (tried once per process); whether one was found and set."""
    global _set
    with _lock:
        if _set is None:
            setter = _function(_SETTERS)
            if setter is not None:
                setter(1)
            _set = setter is not None
        return _set


def threads() -> int | None:
    """The loaded OpenBLAS's thread count, or None where none is found."""
    getter = _function(_GETTERS)
    return None if getter is None else int(getter())


def _function(names: tuple[str, ...]) -> Any:
    """The first of these C functions in an OpenBLAS this process has loaded, or None."""
    for path in _loaded():
        try:
            library = ctypes.CDLL(path)  # already loaded by numpy: the same library, not a second copy
        except OSError:
            continue
        for name in names:
            function = getattr(library, name, None)
            if function is not None:
                return function
    return None


def _loaded() -> list[str]:
    import numpy  # noqa: F401  (the library is loaded with numpy)

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    paths = {line.split()[-1] for line in maps.splitlines() if "openblas" in line.lower()}
    return sorted(p for p in paths if p.startswith("/") and "openblas" in Path(p).name.lower())
