"""Import into both scopes: a memtiers export goes whole to the scope it was exported from, another tool's memories
each to the scope `remember` would put it in."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from tiers.records import MemoryIn
from tiers.scopes.routing import Scope
from tiers.scopes.scoped import Scoped
from tiers.transfer import importers, jsonl

USER_NAMESPACE = "user"  # the user scope's namespace, which a memtiers export of it names in its header


def import_file(
    scoped: Scoped,
    path: Path,
    now: datetime,
    fmt: str | None = None,
    scope: Scope | None = None,
    progress: jsonl.Progress | None = None,
    user_namespace: str = USER_NAMESPACE,
) -> list[tuple[Scope, jsonl.Imported]]:
    """Import a file into the scope it names (`scope`), or each memory into its own; what each scope took."""
    fmt = fmt or importers.detect(path)
    if scope is None and fmt == jsonl.FORMAT:
        scope = Scope.USER if scoped.user is not None and _exported_from(path) == user_namespace else Scope.PROJECT
    if scope is not None:
        return [(scope, jsonl.import_file(scoped.memory(scope), path, now, fmt, progress))]
    if fmt not in jsonl.FORMATS:
        return [(Scope.PROJECT, jsonl.import_file(scoped.project, path, now, fmt, progress))]  # says it is unknown
    items = importers.read(path, fmt)
    groups: dict[Scope, list[MemoryIn]] = {}
    for item in items:
        groups.setdefault(scoped.scope_of(item), []).append(item)
    if not groups:
        return [(Scope.PROJECT, jsonl.remember_all(scoped.project, fmt, items, now, progress))]  # says it is empty
    return [
        (where, jsonl.remember_all(scoped.memory(where), fmt, groups[where], now, progress))
        for where in Scope
        if where in groups
    ]


def _exported_from(path: Path) -> str | None:
    """The namespace a memtiers export's header names."""
    with importers.open_text(path) as handle:
        first = next((line for line in handle if line.strip()), "")
    try:
        header = json.loads(first)
    except ValueError:
        return None
    name = header.get("namespace") if isinstance(header, dict) else None
    return name if isinstance(name, str) else None
