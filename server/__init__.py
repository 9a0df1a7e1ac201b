"""The MCP surface of memtiers: tools, the profile resource, the sweep timer and the command line."""

import contextlib
import os

# numpy's OpenBLAS threads spin for a while after each product, on the cores the embedding model's
# threads then need: one BLAS thread keeps a query's embedding at its own cost, where more made it up to
# twice as slow right after a search. Set before anything imports numpy; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

_glibc = None
if os.name == "posix":
    import ctypes

    # glibc gives each thread that allocates its own 64 MB arena; LanceDB's, onnxruntime's and the
    # server's worker threads would hold one each. Two are enough here (M_ARENA_MAX is -8).
    with contextlib.suppress(OSError, AttributeError):  # not glibc: its allocator decides
        _glibc = ctypes.CDLL("libc.so.6")
        _glibc.mallopt(-8, 2)


def release_free_memory() -> None:
    """Hand the memory freed after the first reads back to the system (glibc keeps it otherwise)."""
    if _glibc is not None:
        with contextlib.suppress(AttributeError):
            _glibc.malloc_trim(0)
