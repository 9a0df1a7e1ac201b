"""Domain errors mapped, in one place, to tool errors the model can read and act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError

from tiers.errors import (
    CorruptFile,
    CorruptProfile,
    InvalidInput,
    LockTimeout,
    MemtiersError,
    ModelMismatch,
    NotFound,
    ProfileCapExceeded,
    SecretFound,
    StorageError,
)

PREFIX: dict[type[MemtiersError], str] = {
    ProfileCapExceeded: "profile full",
    SecretFound: "secret found",
    InvalidInput: "invalid input",
    NotFound: "not found",
    CorruptProfile: "corrupt profile",
    ModelMismatch: "embedding model mismatch",
    CorruptFile: "corrupt file",
    LockTimeout: "data folder busy",
    StorageError: "storage error",
    MemtiersError: "memory error",
}


def message(exc: MemtiersError) -> str:
    for kind in type(exc).__mro__:
        if kind in PREFIX:
            return f"{PREFIX[kind]}: {exc}"
    return str(exc)


@contextmanager
def as_tool_errors() -> Iterator[None]:
    """Turn a domain error into a ToolError whose text tells the model what to do."""
    try:
        yield
    except MemtiersError as exc:
        raise ToolError(message(exc)) from exc
