"""Benchmarks: run by hand, never by the test suite."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the server sets it (server/__init__.py)
