"""numpy's BLAS on one thread: the products a recall makes are small, and a second BLAS thread only fights
the embedding model's threads for the two cores.

A recall multiplies a few thousand rows by one or two query vectors, a few milliseconds of work that
a second thread cannot halve; onnxruntime keeps its own threads spinning a while after each query's
embedding, so OpenBLAS's second thread waits for a core. Measured on a 10,000-row store (200 recalls
of the scale benchmark's queries, AMD EPYC, 2 cores): p50 43.5 / 46.7 ms with OpenBLAS's default two
threads, 26.2 / 27.5 ms with one (two code versions). numpy reads OPENBLAS_NUM_THREADS only when it
is first imported, so this sets the count on the library numpy has loaded, by its own C call.
Linux only (it finds the library in /proc/self/maps); elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads")
_lock = threading.Lock()
_done = False


def one_thread() -> bool:
    """Set the loaded OpenBLAS to one thread (once per process); whether one was found and set."""
    global _done
    with _lock:
        if not _done:
            _done = _call(_SETTERS, 1) is not None
        return _done


def threads() -> int | None:
    """The loaded OpenBLAS's thread count, or None where none is found."""
    return _call(_GETTERS)


def _call(names: tuple[str, ...], *args: int) -> int | None:
    for path in _loaded():
        try:
            library = ctypes.CDLL(path)  # already loaded by numpy: the same library, not a second copy
        except OSError:
            continue
        for name in names:
            function = getattr(library, name, None)
            if function is not None:
                result = function(*args)  # a setter returns nothing: 0 then says it was found
                return 0 if args else int(result)
    return None


def _loaded() -> list[str]:
    import numpy  # noqa: F401  (the library is loaded with numpy)

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    paths = {line.split()[-1] for line in maps.splitlines() if line.count("/") and "openblas" in line.lower()}
    return sorted(p for p in paths if p.startswith("/") and "openblas" in Path(p).name.lower())
