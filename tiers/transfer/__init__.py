"""Moving data: export and import in the memtiers JSONL format, other memory servers' files as memories,
and re-embedding a store with another model.

Works through `tiers.memory.Memory` and, for rows with their vectors, the storage below it; nothing
imports it but the server.
"""
