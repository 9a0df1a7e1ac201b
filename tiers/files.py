"""Small files memtiers owns: written atomically (a reader sees the old file or the new one, never a part),
read back with an error that names the file and what to do when it is not what memtiers wrote."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import threading
from pathlib import Path
from typing import Any

from tiers.errors import CorruptFile, StorageError

_RUST_SOURCE = re.compile(r",\s*/\S+\.rs:\d+(?::\d+)?")


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, fsync it, then rename it over `path`."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc


def read_json_object(path: Path, fix: str) -> dict[str, Any]:
    """The JSON object in `path`; a file that is not one raises CorruptFile naming it, and `fix` says what to do."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise CorruptFile(f"{path} is corrupt (not UTF-8 text) and was left untouched; {fix}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        problem = "it is empty" if not raw.strip() else f"not JSON: {exc.msg} at line {exc.lineno}"
        raise CorruptFile(f"{path} is corrupt ({problem}) and was left untouched; {fix}") from exc
    if not isinstance(data, dict):
        raise CorruptFile(f"{path} is corrupt (not a JSON object) and was left untouched; {fix}")
    return data


def backend_message(exc: BaseException) -> str:
    """The first line of a backend's error, without the Rust source locations LanceDB appends."""
    lines = str(exc).strip().splitlines()
    return _RUST_SOURCE.sub("", lines[0]) if lines else type(exc).__name__


# Copies of an in-memory index saved for the next process: a directory per copy, named by a random token,
# and a `current` file naming the one to read, replaced atomically.


def new_copy(folder: Path) -> Path:
    """A fresh, empty directory under `folder` for a copy to be written into."""
    target = folder / secrets.token_hex(6)
    target.mkdir(parents=True)
    return target


def publish_copy(folder: Path, target: Path) -> None:
    """Make `target` (written whole) the copy readers open, and remove the older ones."""
    write_atomic(folder / "current", target.name)
    for other in folder.iterdir():
        if other.is_dir() and other.name != target.name:
            shutil.rmtree(other, ignore_errors=True)


def current_copy(folder: Path, stamp: dict[str, object]) -> tuple[Path, dict[str, Any]] | None:
    """The copy readers open and its `meta.json`, if that matches `stamp` (None: made for another store).

    OSError when there is none, ValueError when its meta.json is damaged.
    """
    target = folder / (folder / "current").read_text().strip()
    meta = json.loads((target / "meta.json").read_text())
    if not isinstance(meta, dict) or any(meta.get(key) != value for key, value in stamp.items()):
        return None
    return target, meta
