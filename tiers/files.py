"""Small files memtiers owns: written atomically (a reader sees the old file or the new one, never a part),
read back with an error that names the file and what to do when it is not what memtiers wrote."""

from __future__ import annotations

import json
import os
import re
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
