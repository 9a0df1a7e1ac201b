"""numpy's BLAS on one thread once a Memory is made (tiers/model/blas.py), in a fresh process as a server starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import json, sys
from pathlib import Path
from tiers.model import blas
from tiers.model.embedder import FastEmbedder
from tiers.memory import Memory
before = blas.threads()
memory = Memory(Path(sys.argv[1]), FastEmbedder())
print(json.dumps([before, blas.threads()]))
memory.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the library is found through /proc/self/maps")
def test_a_memory_sets_the_loaded_openblas_to_one_thread(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "ns")], env=env, capture_output=True, text=True, check=True
    )
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert before is not None and before >= min(2, os.cpu_count() or 1)  # numpy's default: a thread a core
    assert after == 1
