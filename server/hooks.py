"""`memtiers hook <event>`: what Claude Code's hooks print, read from stdin as Claude Code sends it (docs/hosts/).

Quick and light: the profiles are read from their files (no model, no store, no MCP), and nothing is created.
`session-start` prints the hook's JSON, whose `additionalContext` Claude Code adds to the context: both profiles,
as `memory://profile` reads. `pre-compact` prints plain text, which Claude Code hands to the model that writes the
compaction's summary as its instructions: list what was learned and not stored, so the agent stores it after.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from server.scope import namespace_of_root
from server.settings import Settings
from tiers.storage.hot import Entry, HotProfile, render

USER_HEADER = "user scope (shared by every project):"
NOT_STORED = "Not yet in memtiers"

PRE_COMPACT = f"""\
Before the summary, list under the heading "{NOT_STORED}" each durable thing said in this conversation that was
not stored with the memtiers `remember` tool: facts about the user (who they are, preferences, constraints, health,
people), decisions, and facts about this project, one line each, as the user would say it. Then end the summary
with this line: "Store each line under {NOT_STORED} with memtiers' remember now (scope user for facts about the
person), then carry on." If everything worth keeping was stored, say so under the heading instead."""

AFTER_COMPACT = f"""\
The conversation was just compacted. If its summary lists lines under "{NOT_STORED}", store each one now with the
memtiers `remember` tool (scope "user" for facts about the person), then carry on."""

GUIDE = """\
Use memtiers' `recall` before answering anything that may depend on earlier sessions, and `remember` when the user
says something worth keeping (facts about the person go to the user scope every project reads)."""


def profile_text(user: dict[str, Entry], project: dict[str, Entry], namespace: str | None = None) -> str:
    """Both profiles as the model reads them: under a header each when the user's has entries (the project's naming
    its namespace), else the project's alone, as it always read."""
    if not user:
        return render(project)
    named = f" (namespace {namespace})" if namespace else ""
    return "\n".join([USER_HEADER, render(user), f"project scope{named}:", render(project) or "(empty)"])


def namespace_of(settings: Settings, cwd: str) -> tuple[str, str]:
    """The namespace a session in `cwd` works in, as the server picks it from the root Claude Code reports (its
    working folder), and why."""
    if settings.namespace_named:
        return settings.namespace, "named by MEMTIERS_NAMESPACE"
    found = namespace_of_root(Path(cwd).resolve().as_uri()) if cwd else None
    if found is None:
        return settings.namespace, "no working folder"
    return found[0], f"from the workspace root {found[1]}"


def session_start(settings: Settings, event: dict[str, Any]) -> dict[str, Any]:
    """The SessionStart hook's answer: both profiles (and, after a compaction, the request to store what it listed)."""
    namespace, why = namespace_of(settings, str(event.get("cwd") or ""))
    project = _entries(settings.for_namespace(namespace))
    user_namespace = settings.user_namespace
    user = _entries(settings.for_namespace(user_namespace)) if user_namespace and user_namespace != namespace else {}
    body = profile_text(user, project, namespace) or "(the profile is empty)"
    parts = [f"memtiers memory, namespace {namespace} ({why}). The hot profile (memory://profile):", body, GUIDE]
    if event.get("source") == "compact":
        parts.append(AFTER_COMPACT)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "\n".join(parts)}}


def _entries(settings: Settings) -> dict[str, Entry]:
    path = settings.folder / "profile.json"
    return HotProfile(path, settings.hot_cap_tokens).entries() if path.exists() else {}


def run(event_name: str, settings: Settings, stdin: TextIO, stdout: TextIO) -> int:
    """Answer one hook event: its JSON read from `stdin` (unreadable: an empty event), its answer on `stdout`."""
    try:
        event = json.loads(stdin.read() or "{}")
    except ValueError:
        event = {}
    if not isinstance(event, dict):
        event = {}
    if event_name == "session-start":
        stdout.write(json.dumps(session_start(settings, event)) + "\n")
    else:
        stdout.write(PRE_COMPACT + "\n")
    return 0


def main(event_name: str, settings: Settings) -> int:
    return run(event_name, settings, sys.stdin, sys.stdout)
