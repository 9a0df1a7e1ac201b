"""Projects in the hot profile: the current project's standing decisions are carried every turn, another's are not.

An agent keys the project it works on as `current_project` and a project's standing decisions as
`project.<name>.<topic>` (docs/tiers.md and the profile tool say so). The profile is what the model reads every
turn; a project that has not been current for `HeatRules.project_away_days` has no business there, however often
its decisions were asked about (each match in a recall counts as a use, so the idle rule alone kept a finished
project's decisions hot all year). The timer moves them down to warm, protected and logged ("project_away"), and
setting `current_project` back to that project brings its latest values back ("project_current").

A project is told apart only when the names agree: `current_project` "Mobile App" is the project of keys
`project.mobile_app.*`. Where the current project has no keyed entry of its own, which project it is cannot be
read from the keys, so nothing is moved away.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta

from tiers.storage.hot import Entry

CURRENT = "current_project"
PREFIX = "project."
AWAY = "project_away"  # the sweep's rule: hot -> warm, the entry's project has not been current for a while
BACK = "project_current"  # its project is current again: warm -> hot

_SEPARATORS = re.compile(r"[\s\-]+")


def name(value: str) -> str:
    """A project's name as keys spell it: "Mobile App" and "mobile-app" are `mobile_app`."""
    return _SEPARATORS.sub("_", value.strip().lower())


def project_of(key: str) -> str | None:
    """The project a key belongs to (`project.<name>.<topic>`: `name`), None for any other key."""
    if not key.startswith(PREFIX):
        return None
    parts = key.split(".")
    return parts[1].lower() if len(parts) >= 3 and parts[1] else None


def away(profile: Mapping[str, Entry], now: datetime, days: float) -> list[str]:
    """The keys of entries whose project has not been current for `days` (nor have they changed since)."""
    current = profile.get(CURRENT)
    if current is None or days <= 0:
        return []
    here = name(current.value)
    if not any(project_of(key) == here for key in profile):
        return []  # the current project's name matches no key: which entries are another project's is unknown
    since = timedelta(days=days)
    if now - current.updated_at < since:
        return []
    return [
        key
        for key, entry in profile.items()
        if (project := project_of(key)) is not None
        and project != here
        and not entry.pinned
        and now - entry.updated_at >= since
    ]
