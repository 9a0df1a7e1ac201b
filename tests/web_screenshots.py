"""Screenshots of every view of the web page, on a demo namespace: `python -m tests.web_screenshots docs/`.

A made-up person's twelve weeks of memories (notes going cold, one coming back, entries promoted to the
profile) are imported as a memtiers export, then `memtiers serve --http` is opened in Debian's chromium.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.server.web_running import MEMTIERS, browser_page, chromium_missing, serving

TOKEN = "screenshot-token-0123456789abcdef"
NOTES = [
    ("identity", "My name is Ada Moreau; I go by Ada", []),
    ("health", "I am allergic to peanuts and to penicillin", ["health"]),
    ("preference", "I prefer short answers with code first, explanation after", []),
    ("relationship", "My sister Lena lives in Porto and visits in spring", ["family"]),
    ("decision", "We chose LanceDB over SQLite-vss for the warm tier", ["memtiers"]),
    ("decision", "The sweep runs every hour; demotion is never deletion", ["memtiers"]),
    ("task", "Write the migration notes for the 0.2 release", ["memtiers"]),
    ("event", "Standup moved to 9:30 on Mondays", ["work"]),
    ("note", "The staging server listens on port 8443", ["work"]),
    ("note", "Lunch on Thursday was the lentil soup place near the station", []),
    ("note", "Dentist appointment booked for the 14th at 10:00", ["health"]),
    ("event", "Went rowing on the river with the club on Saturday", ["rowing"]),
    ("note", "The rowing club's boat shed code is on the fridge note, not stored here", ["rowing"]),
    ("task", "Renew the passport before the summer trip", []),
    ("note", "Read the MemoryOS paper: heat and tiers, but promotion mixed with retrieval", ["reading"]),
    ("note", "Tried mem0 for a week: stale facts stayed on top after updates", ["reading"]),
    ("event", "Conference talk accepted for the spring meetup", ["work"]),
    ("note", "The benchmark machine has two cores and 24 GiB", ["memtiers"]),
    ("decision", "Keep the hot profile under 1,000 tokens", ["memtiers"]),
    ("note", "Bought a new bike light; the old one broke in the rain", []),
    ("event", "Lena's birthday dinner at the Portuguese place", ["family"]),
    ("task", "Reply to the landlord about the heating", []),
    ("note", "The CI runs on a clean checkout in under 90 minutes", ["memtiers"]),
    ("note", "Coffee beans from the market stall on Saturdays are the best", []),
]  # fmt: skip


def demo_export(now: datetime) -> list[str]:
    """A memtiers export of twelve weeks: the older notes gone cold, one brought back, three in the profile."""
    lines: list[dict[str, Any]] = [{"format": "memtiers", "version": 1, "namespace": "default", "vectors": False}]
    records, moves = [], []
    start = now - timedelta(weeks=12)
    for i, (kind, content, tags) in enumerate(NOTES):
        rid = f"{0xA00000000000 + i:012x}"
        at = start + timedelta(days=3.4 * i, hours=9 + i % 8)
        durable = kind in ("identity", "health", "preference", "relationship")
        tier = "warm"
        moves.append({"at": at, "id": rid, "src": "new", "dst": "warm", "rule": f"remember:{kind}", "heat": 1.0})
        if not durable and i < 14 and i != 4:
            gone_cold = at + timedelta(days=24 + i % 5)
            moves.append({"at": gone_cold, "id": rid, "src": "warm", "dst": "cold", "rule": "heat", "heat": 0.12})
            tier = "cold"
            if i == 8:  # the staging port was asked for again: back to warm
                moves.append({"at": now - timedelta(days=9), "id": rid, "src": "cold", "dst": "warm", "rule": "heat"})
                tier = "warm"
        records.append({"type": "record", "id": rid, "content": content, "tier": tier, "kind": kind,
                        "protected": durable, "tags": tags, "occurred_at": at, "created_at": at})  # fmt: skip
    profile = {"name": ("Ada", 0), "diet.allergy": ("peanuts, penicillin", 1), "family.sister": ("Lena, in Porto", 3)}
    for key, (value, i) in profile.items():
        rid = records[i]["id"]
        at = records[i]["occurred_at"] + timedelta(days=2)
        lines.append({"type": "profile", "key": key, "value": value, "updated_at": at, "pinned": key == "name",
                      "sources": [rid]})  # fmt: skip
        lines.append({"type": "provenance", "key": key, "id": rid, "value": value})
        moves.append({"at": at, "id": rid, "key": key, "src": "warm", "dst": "hot", "rule": "promote", "note": value})
    moves.append({"at": now - timedelta(days=20), "id": "a000000000ff", "src": "warm", "dst": "gone", "rule": "forget"})
    lines += records
    lines += [{"type": "move", **m} for m in sorted(moves, key=lambda m: m["at"])]
    lines.append({"type": "end"})
    return [json.dumps(line, default=lambda t: t.isoformat()) for line in lines]


def shoot(out: Path) -> list[Path]:
    """Write one PNG per view into `out`; their paths."""
    missing = chromium_missing()
    if missing:
        raise SystemExit(f"web_screenshots: {missing}")
    out.mkdir(parents=True, exist_ok=True)
    shots = []
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        export = Path(folder) / "demo.jsonl"
        export.write_text("\n".join(demo_export(datetime.now(UTC))) + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTIERS_")} | {"MEMTIERS_HOME": str(home)}
        subprocess.run([str(MEMTIERS), "import", str(export)], env=env, check=True, capture_output=True)
        with serving(home, TOKEN) as url, browser_page(1200, 900) as page:
            page.goto(url + "/")
            page.screenshot(path=str(out / "web-login.png"))
            page.fill("input[name=token]", TOKEN)
            with page.expect_navigation():
                page.click("button:has-text('Log in')")
            views = {
                "web-profile.png": "/ns/default",
                "web-search.png": "/ns/default/search?q=what am I allergic to?&limit=6",
                "web-browse.png": "/ns/default/browse?tier=cold",
                "web-log.png": "/ns/default/log?limit=25",
                "web-transfer.png": "/ns/default/transfer",
            }
            for name, path in views.items():
                page.goto(url + path)
                page.screenshot(path=str(out / name), full_page=True)
                shots.append(out / name)
    return [out / "web-login.png", *shots]


if __name__ == "__main__":
    for path in shoot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs")):
        print(path)
