"""Small helpers shared by the tests: a settable clock, row counts read straight from LanceDB, result text."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
from mcp import Client
from mcp_types import CallToolResult, TextContent

from tiers.lifecycle.heat import HeatRules

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
    """Rows of a namespace's warm and cold LanceDB tables, read independently of the code under test."""
    db = lancedb.connect(folder / "lance")
    meta = folder / "store.json"
    names = json.loads(meta.read_text()).get("tables", {}) if meta.exists() else {}
    total = 0
    for each in ("warm", "cold"):
        name = names.get(each, each)
        if (tier is None or tier == each) and name in db.list_tables().tables:
            total += db.open_table(name).count_rows()
    return total


def text(result: CallToolResult) -> str:
    """All the text content of a tool result: what the model reads."""
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def files_containing(folder: Path, word: str) -> list[str]:
    """Every file under `folder` whose bytes hold `word` (case folded), as paths relative to it."""
    needle = word.lower().encode()
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and needle in path.read_bytes().lower()
    )


def days_to_demotion(uses: int, repeats: int, rules: HeatRules) -> float:
    """Days without a touch after which a record with these counts falls under the demotion line."""
    start = 1 + rules.use_weight * uses + rules.repeat_weight * repeats
    return rules.half_life_days * math.log2(start / rules.demote_below)


# A job change said without the words of the question (tests of the later word, tests/tiers/namespace/test_hints.py
# and tests/server/test_updates.py): the fact, the update, and the person's notes that rank above the update for
# "Where do I work?", each nearer the question than the update is and none as near the update as the fact.
JOB = "I work at Globex as a data engineer."
JOB_CHANGED = "I joined Initech this month as a staff engineer."
AT_WORK = [
    "Where I work, Fridays are remote.",
    "My workplace is a big open-plan office.",
    "I work mostly from the Lisbon office.",
    "The place I work has a gym downstairs.",
    "I usually work from 9 to 5.",
    "I work best in the mornings.",
    "Where I work, lunch is at noon.",
    "At work I sit next to Priya.",
    "I walk to work most days.",
    "Where I work, the coffee is free.",
    "At work we have a stand-up at ten.",
    "I work on the data platform team.",
]
