"""The memory domain of memtiers: hot profile, warm and cold LanceDB tiers, heat and the moves between them.

Nothing here imports the MCP server, reads the environment or prints.
"""
