"""The hot profile: a small JSON file of key/value entries, written atomically, under a token cap."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from tiers.errors import CorruptProfile, InvalidInput, ProfileCapExceeded
from tiers.records import KEY_PATTERN, tokens_of
from tiers.storage.locking import DEFAULT_TIMEOUT, file_lock
from tiers.text.timeparse import iso, parse_time

MAX_VALUE_CHARS = 1_000
_KEY = re.compile(KEY_PATTERN)


@dataclass(frozen=True)
class Entry:
    """One profile entry: its value, when it was set, whether it is pinned, and where it came from."""

    value: str
    updated_at: datetime
    pinned: bool = False
    sources: tuple[str, ...] = ()


class _EntryFile(BaseModel):
    model_config = ConfigDict(extra="ignore")
    value: str
    updated_at: str
    pinned: bool = False
    sources: list[str] = []


class _ProfileFile(BaseModel):
    model_config = ConfigDict(extra="ignore")
    version: int
    entries: dict[str, _EntryFile]


def render(entries: dict[str, Entry]) -> str:
    """The profile as the model reads it every turn: one `key: value` line per entry."""
    return "\n".join(f"{key}: {entry.value}" for key, entry in sorted(entries.items()))


def check_key(key: str) -> str:
    if not _KEY.match(key):
        raise InvalidInput(
            f"profile key {key!r} is not valid: 1-64 characters, letters, digits and _ . : / - "
            "(e.g. 'name', 'diet.allergy')"
        )
    return key


class HotProfile:
    """The profile file of one namespace. Reads are cached on the file's mtime; writes are atomic."""

    def __init__(self, path: Path, cap_tokens: int = 1_000, lock_timeout: float = DEFAULT_TIMEOUT) -> None:
        self.path = path
        self.cap_tokens = cap_tokens
        self.lock_timeout = lock_timeout
        # Another profile the model reads beside this one (a project's reads the user's), under the same cap.
        self.beside: HotProfile | None = None
        self._cache: tuple[tuple[int, int], dict[str, Entry]] | None = None

    def entries(self) -> dict[str, Entry]:
        """All entries; a missing file is an empty profile, a corrupt one an error naming it."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return {}
        stamp = (stat.st_mtime_ns, stat.st_size)
        if self._cache and self._cache[0] == stamp:
            return dict(self._cache[1])
        entries = self._read()
        self._cache = (stamp, entries)
        return dict(entries)

    def tokens(self, entries: dict[str, Entry] | None = None) -> int:
        return tokens_of(render(self.entries() if entries is None else entries))

    @contextmanager
    def editing(self) -> Iterator[dict[str, Entry]]:
        """Hold the profile's lock, yield a copy of its entries, and write them back if the block succeeds.

        The cap is checked before anything is written: a change past it raises and leaves the file as it was.
        """
        with file_lock(self.path.with_name(self.path.name + ".lock"), self.lock_timeout):
            self._cache = None
            before = self.entries()
            after = dict(before)
            yield after
            if after == before:
                return
            self.check_cap(before, after)
            self._write(after)

    def check_cap(self, before: dict[str, Entry], after: dict[str, Entry]) -> None:
        """Raise if `after` passes the cap and grows the profile (a profile already over a lowered cap may shrink)."""
        beside = self.beside.tokens() if self.beside is not None else 0
        used = self.tokens(after) + beside
        if used > self.cap_tokens and used > self.tokens(before) + beside:
            shared = f" ({beside} of them the user profile's, read beside it)" if beside else ""
            candidates = demotion_candidates(before)
            if self.beside is not None:
                candidates += [key for key in demotion_candidates(self.beside.entries()) if key not in candidates]
            raise ProfileCapExceeded(
                f"the hot profile would use {used} tokens{shared}, over its cap of {self.cap_tokens}; "
                "unset or demote entries first (candidates: "
                + (", ".join(candidates) or "none: every entry is pinned")
                + ")",
                candidates,
            )

    def _read(self) -> dict[str, Entry]:
        try:
            raw = self.path.read_text(encoding="utf-8")
            parsed = _ProfileFile.model_validate_json(raw)
            entries = {
                check_key(key): Entry(
                    value=e.value,
                    updated_at=parse_time(e.updated_at, "updated_at"),
                    pinned=e.pinned,
                    sources=tuple(e.sources),
                )
                for key, e in parsed.entries.items()
            }
        except (ValidationError, ValueError, InvalidInput, UnicodeDecodeError) as exc:
            raise CorruptProfile(
                f"the hot profile {self.path} is corrupt and was left untouched ({_first_line(exc)}); "
                "fix or move that file, then retry"
            ) from exc
        return entries

    def _write(self, entries: dict[str, Entry]) -> None:
        body = {
            "version": 1,
            "entries": {
                key: {
                    "value": e.value,
                    "updated_at": iso(e.updated_at),
                    "pinned": e.pinned,
                    "sources": list(e.sources),
                }
                for key, e in sorted(entries.items())
            },
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(body, handle, ensure_ascii=False, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, self.path)
        self._cache = None


def demotion_candidates(entries: dict[str, Entry]) -> list[str]:
    """Unpinned keys, the longest-unchanged first: what could go down to warm to make room."""
    unpinned = [(e.updated_at, key) for key, e in entries.items() if not e.pinned]
    return [key for _, key in sorted(unpinned)]


def with_value(entry: Entry | None, value: str, now: datetime, sources: tuple[str, ...] = ()) -> Entry:
    """The entry after `value` is set: a new value restarts its provenance, the same value adds to it."""
    if len(value) > MAX_VALUE_CHARS:
        raise InvalidInput(f"profile values are at most {MAX_VALUE_CHARS} characters; store long text with remember")
    if not value.strip():
        raise InvalidInput("a profile value cannot be blank; use unset to remove an entry")
    if entry is None:
        return Entry(value=value, updated_at=now, sources=sources)
    if entry.value == value:
        merged = tuple(dict.fromkeys(entry.sources + sources))
        return replace(entry, sources=merged)
    return Entry(value=value, updated_at=now, pinned=entry.pinned, sources=sources)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
