"""The prompt a host can insert so that the agent uses its memory well: `memory-protocol`."""

from __future__ import annotations

from mcp.server import MCPServer

MEMORY_PROTOCOL = """\
You have a long-term memory (memtiers). Use it this way:
1. At the start, read the resource memory://profile (or call `profile`): who the user is, the current
   project, preferences, hard constraints. Follow it.
2. Before answering anything that may depend on the past (earlier conversations, decisions, facts about
   the user), call `recall` with a short query, and use what it returns.
3. When the user states something durable (a fact about themselves, a preference, a constraint, a
   decision), call `remember` with its `kind` (identity, preference, constraint, relationship, health,
   decision, task, event, note). Facts about the person go to the user scope every project reads; pass
   `scope` when it is not plain ("project" for a preference of this project only). Do not store small talk
   or what is already in the profile.
4. When a recalled memory proves durable and needed every turn, `promote` it to "hot" with a short `key`.
5. When the user asks you to forget something, `recall` it to find its id, then `forget` it, and tell
   the user what was removed."""


def register(server: MCPServer) -> None:
    """Add the `memory-protocol` prompt to `server`."""

    @server.prompt(
        name="memory-protocol",
        title="Use memtiers memory",
        description="How to use this memory: read the profile first, recall before answering from the past, "
        "remember durable facts with their kind, promote what proves durable, forget on request.",
    )
    def memory_protocol() -> str:
        return MEMORY_PROTOCOL
