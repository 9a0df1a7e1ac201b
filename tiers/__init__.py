"""The memory domain of memtiers: hot profile, warm and cold LanceDB tiers, heat and the moves between them.

`tiers.memory.Memory` is the facade the server uses. Below it, in parts, each importing only the parts
listed before it (tests/test_layers.py holds the rule):

- the vocabulary: `records` (tiers, kinds, a memory as given and as stored), `errors`, `files`;
- `text`: the words a memory is found by, in any script, and times;
- `model`: the embedding model and the optional cross-encoder;
- `storage`: the LanceDB tables, the ledger, the profile file, the locks;
- `privacy`: credentials screened before a write, a private data folder;
- `index`: each tier's index in memory, and the store that keeps tables and indexes in step;
- `recall`: ranking, packing into a token budget, the later word before the older;
- `lifecycle`: heat, the rules that move records, classification, projects, profile candidates and flags;
- `namespace`: one namespace's parts and the operations the facade calls;
- then `memory` (the facade), `browse` (the facade read as a person browses it) and `transfer`;
- `scopes`: a project's memory with the user scope's beside it (the facts about the person, shared by every project).

Nothing here imports the MCP server, reads the environment or prints.
"""
