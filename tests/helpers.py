"""Small helpers shared by the tests: a settable clock, row counts read straight from LanceDB, result text."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
from mcp import Client
from mcp_types import CallToolResult, TextContent

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass
class Clock:
    """A clock the test moves by hand; the server and the memory read it through `__call__`."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


def count_rows(folder: Path, tier: str | None = None) -> int:
    """Rows of a namespace's LanceDB table, read independently of the code under test."""
    db = lancedb.connect(folder / "lance")
    if "memories" not in db.list_tables().tables:
        return 0
    table = db.open_table("memories")
    return table.count_rows(None if tier is None else f"tier = '{tier}'")


def text(result: CallToolResult) -> str:
    """All the text content of a tool result: what the model reads."""
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content
