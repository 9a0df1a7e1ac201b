"""The MCP surface of memtiers: tools, the profile resource, the sweep timer and the command line."""

import os

# numpy's OpenBLAS threads spin for a while after each product, on the cores the embedding model's
# threads then need: one BLAS thread keeps a query's embedding at its own cost (7 ms, not 12-18 ms
# after a search). Set before anything imports numpy; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
