"""Other memories' files as memories to `remember`: the MCP reference memory server, mem0, Markdown notes.

Pure parsing: each reader turns a file into `MemoryIn` items with a `source` pointing back into it
(`memory.jsonl#Alice`, `mem0:<id>`, `MEMORY.md#Preferences`); `remember` then classifies, dedupes and
protects them like any new memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from tiers.errors import InvalidInput
from tiers.records import MAX_CONTENT_CHARS, MAX_METADATA_KEYS, MAX_TAGS, MemoryIn, MetaValue
from tiers.text.timeparse import iso, parse_time

FORMATS = ("memory-server", "mem0", "markdown")
_MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx"}


@contextmanager
def open_text(path: Path) -> Iterator[TextIO]:
    """A UTF-8 file to read, or an error that names it."""
    try:
        with open(path, encoding="utf-8") as handle:
            yield handle
    except FileNotFoundError:
        raise InvalidInput(f"no file {path}") from None
    except IsADirectoryError:
        raise InvalidInput(
            f"{path} is a folder; only Markdown notes are imported from a folder (--from markdown)"
        ) from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text") from None


def detect(path: Path) -> str:
    """The format of a file, from its name or its first line; an error saying to pass --from when unclear."""
    if path.is_dir() or path.suffix.lower() in _MARKDOWN_SUFFIXES:
        return "markdown"
    with open_text(path) as handle:
        first = next((line for line in handle if line.strip()), "")
        first_value = _json_or_none(first)
        if isinstance(first_value, dict):
            if first_value.get("format") == "memtiers":
                return "memtiers"
            if first_value.get("type") in {"entity", "relation"}:
                return "memory-server"
        handle.seek(0)
        whole = _json_or_none(handle.read())
    if isinstance(whole, list) or (isinstance(whole, dict) and ("results" in whole or "memories" in whole)):
        return "mem0"
    raise InvalidInput(f"cannot tell the format of {path}; give --from memtiers, memory-server, mem0 or markdown")


def read(path: Path, fmt: str) -> list[MemoryIn]:
    """The memories in a file of another tool (or a folder of Markdown notes)."""
    if fmt == "markdown":
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _MARKDOWN_SUFFIXES)
            return [item for p in files for item in markdown(_read(p), f"{path.name}/{p.relative_to(path).as_posix()}")]
        return markdown(_read(path), path.name)
    if fmt == "memory-server":
        return memory_server(_read(path), path.name)
    if fmt == "mem0":
        return mem0(_read(path))
    raise InvalidInput(f"unknown format {fmt!r}; use one of: memtiers, {', '.join(FORMATS)}")


def _read(path: Path) -> str:
    with open_text(path) as handle:
        return handle.read()


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


# the MCP reference memory server (@modelcontextprotocol/server-memory): memory.jsonl


def memory_server(text: str, name: str = "memory.jsonl") -> list[MemoryIn]:
    """Each observation of an entity, and each relation, as one memory tagged with its entities."""
    items: list[MemoryIn] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value = _json_or_none(line)
        if not isinstance(value, dict) or value.get("type") not in {"entity", "relation"}:
            raise InvalidInput(f"{name} line {number} is not an entity or relation of the memory server: {line[:80]!r}")
        if value["type"] == "entity":
            items += _entity(value, name, number)
        else:
            items += _relation(value, name, number)
    return items


def _entity(value: dict[str, Any], name: str, number: int) -> list[MemoryIn]:
    entity, kind = str(value.get("name") or ""), str(value.get("entityType") or "")
    observations = value.get("observations") or []
    if not entity or not isinstance(observations, list):
        raise InvalidInput(f"{name} line {number}: an entity needs a name and a list of observations")
    metadata: dict[str, MetaValue] = {
        "imported_from": "memory-server",
        "entity": entity[:1000],
        "entity_type": kind[:1000],
    }
    said = [str(o).strip() for o in observations if str(o).strip()]
    if not said and kind:
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        said_as = [f"{_display(entity)} is {article} {kind.replace('_', ' ')}"]
    else:
        said_as = [_about(entity, o) for o in said]
    return [
        MemoryIn(content=piece, tags=_tags([entity]), metadata=metadata, source=f"{name}#{entity}"[:2_000])
        for text in said_as
        for piece in _pieces(text)
    ]


def _relation(value: dict[str, Any], name: str, number: int) -> list[MemoryIn]:
    source, target, kind = (str(value.get(k) or "") for k in ("from", "to", "relationType"))
    if not (source and target and kind):
        raise InvalidInput(f"{name} line {number}: a relation needs from, to and relationType")
    # Relations are in the active voice ("works_at"): subject, verb, object.
    said = f"{kind.replace('_', ' ')} {_display(target)}"
    text = about_the_user(said) if _is_user(source) else f"{_display(source)} {said}"
    metadata: dict[str, MetaValue] = {
        "imported_from": "memory-server",
        "from": source[:1000],
        "to": target[:1000],
        "relation": kind[:1000],
    }
    return [
        MemoryIn(content=p, tags=_tags([source, target]), metadata=metadata, source=f"{name}#{source}"[:2_000])
        for p in _pieces(text)
    ]


_USER_ENTITIES = {"user", "default_user", "the_user", "me", "myself", "current_user"}
# A statement without its subject ("Is allergic to peanuts", "Prefers tea") is about the entity; said of the
# user it is phrased as `remember`'s rules read statements about the user.
_VERB = re.compile(
    r"^(?:is|was|has|had|prefers|likes|loves|hates|dislikes|enjoys|works|lives|moved|can't|cannot|can|must|"
    r"never|always|would|wants|needs|uses|speaks|owns|plays)\b",
    re.I,
)
_TRAIT = re.compile(r"^(?:name|favou?rite|birthday|wife|husband|partner|pronouns|job|role|email)\b", re.I)


def _display(entity: str) -> str:
    return entity.replace("_", " ").strip()


def _is_user(entity: str) -> bool:
    return entity.strip().lower().replace(" ", "_") in _USER_ENTITIES


def _about(entity: str, statement: str) -> str:
    """A statement about an entity as a sentence that names it ("Alice speaks Spanish")."""
    if _is_user(entity):
        return about_the_user(statement)
    shown = _display(entity)
    if shown.lower() in statement.lower():
        return statement
    if _VERB.match(statement):
        return f"{shown} {statement[0].lower()}{statement[1:]}"
    return f"{shown}: {statement}"


def about_the_user(statement: str) -> str:
    """A fact about the user written without its subject ("Is vegetarian", "Name is Ana") with the subject put back."""
    if _VERB.match(statement):
        return f"The user {statement[0].lower()}{statement[1:]}"
    if _TRAIT.match(statement):
        return f"The user's {statement[0].lower()}{statement[1:]}"
    return statement


# mem0: the memories of `Memory.get_all()` / `MemoryClient.get_all()` or a platform export


def mem0(text: str) -> list[MemoryIn]:
    """Each mem0 memory as one memory: its time, metadata, ids and categories kept."""
    value = _json_or_none(text)
    if isinstance(value, dict):
        value = value.get("results", value.get("memories"))
    if not isinstance(value, list):
        raise InvalidInput('a mem0 export is a JSON list of memories or {"results": [...]}')
    items: list[MemoryIn] = []
    for index, memory in enumerate(value):
        if not isinstance(memory, dict) or not str(memory.get("memory") or "").strip():
            raise InvalidInput(f"mem0 memory #{index + 1} has no 'memory' text")
        metadata: dict[str, MetaValue] = {"imported_from": "mem0"}
        for key in ("id", "user_id", "agent_id", "run_id", "actor_id", "role", "updated_at"):
            if memory.get(key):
                metadata["mem0_id" if key == "id" else key] = str(memory[key])[:1000]
        for key, extra in (memory.get("metadata") or {}).items():
            if len(metadata) < MAX_METADATA_KEYS and 0 < len(str(key)) <= 64:
                metadata.setdefault(str(key), _scalar(extra))
        categories = memory.get("categories") or []
        occurred = _time_or_none(memory.get("created_at"))
        source = f"mem0:{memory['id']}"[:2_000] if memory.get("id") else "mem0"
        text_of = about_the_user(str(memory["memory"]).strip())
        items += [
            MemoryIn(content=p, tags=_tags(categories), metadata=metadata, source=source, occurred_at=occurred)
            for p in _pieces(text_of)
        ]
    return items


def _scalar(value: Any) -> str | int | float | bool:
    if isinstance(value, str | int | float | bool):
        return value[:1000] if isinstance(value, str) else value
    return json.dumps(value, ensure_ascii=False)[:1000]


def _time_or_none(value: Any) -> str | None:
    try:
        return iso(parse_time(str(value))) if value else None
    except InvalidInput:
        return None


# Markdown notes: Claude Code's MEMORY.md / CLAUDE.md, a Cline memory bank, any notes


_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_SETEXT = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


def markdown(text: str, name: str) -> list[MemoryIn]:
    """One memory per bullet, paragraph or code block, its source the file and the heading above it."""
    items: list[MemoryIn] = []
    heading: str | None = None
    block: list[str] = []
    fence: str | None = None

    def flush(joiner: str = " ") -> None:
        content = joiner.join(part.strip() if joiner == " " else part for part in block).strip()
        block.clear()
        if content:
            source = f"{name}#{heading}" if heading else name
            meta: dict[str, MetaValue] = {"imported_from": "markdown"}
            items.extend(MemoryIn(content=p, metadata=meta, source=source[:2_000]) for p in _pieces(content))

    for line in _without_front_matter(text.splitlines()):
        if fence is not None:
            block.append(line)
            if line.strip().startswith(fence):
                fence = None
                flush("\n")
            continue
        if opening := _FENCE.match(line):
            flush()
            fence = opening.group(1)
            block.append(line)
        elif heading_match := _HEADING.match(line):
            flush()
            heading = heading_match.group(2) or heading
        elif _SETEXT.match(line) and len(block) == 1 and not _BULLET.match(block[0]):
            heading = block.pop().strip()
        elif _RULE.match(line) or _COMMENT.match(line) or not line.strip():
            flush()
        elif bullet := _BULLET.match(line):
            flush()
            block.append(bullet.group(1))
        else:
            block.append(line)  # a paragraph's next line, or a bullet's continuation
    flush("\n" if fence is not None else " ")
    return items


def _without_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for end, line in enumerate(lines[1:], start=1):
            if line.strip() == "---":
                return lines[end + 1 :]
    return lines


def _pieces(text: str) -> list[str]:
    """Text longer than a memory may be, cut at spaces into pieces that fit."""
    pieces: list[str] = []
    while len(text) > MAX_CONTENT_CHARS:
        cut = text.rfind(" ", 0, MAX_CONTENT_CHARS)
        cut = cut if cut > MAX_CONTENT_CHARS // 2 else MAX_CONTENT_CHARS
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    return [p for p in [*pieces, text] if p.strip()]


def _tags(values: list[Any]) -> list[str]:
    return list(dict.fromkeys(str(v).strip()[:64] for v in values if str(v).strip()))[:MAX_TAGS]
