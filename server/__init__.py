"""The MCP surface of memtiers: tools, the profile resource, the sweep timer and the command line."""
