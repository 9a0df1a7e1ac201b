"""The data folder is private to its user: on POSIX folders 0700, files 0600, those LanceDB and SQLite make included.

LanceDB writes its own files from its own threads, so the only way they are private from the moment
they exist is the process umask: opening a data folder tightens it to 0o077 (never loosens it), for
the whole process. A dedicated server process loses nothing by that; a program that embeds `Memory`
gets private new files too, which is what a memory of someone's health facts needs. Files that
already exist with looser modes (made before, or by another tool) are tightened on open.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077


def private_umask() -> int:
    """Make what this process creates from now on private to its user; return the umask in force before."""
    before = os.umask(PRIVATE_UMASK)
    if before | PRIVATE_UMASK != PRIVATE_UMASK:  # keep any stricter bits the process already had
        os.umask(before | PRIVATE_UMASK)
    return before


def tighten(folder: Path) -> list[Path]:
    """Remove every permission of group and others under `folder` (itself included); return what was changed.

    Symbolic links are not followed: what they point to is not memtiers' to change. Elsewhere than
    POSIX (Windows) modes are not permissions: who may read is the folder's ACL, inherited from the
    user's profile, and nothing is changed here.
    """
    changed: list[Path] = []
    if os.name != "posix" or not folder.exists():
        return changed
    for path in [folder, *folder.rglob("*")]:
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:  # removed meanwhile (compaction drops old files)
            continue
        if stat.S_ISLNK(mode) or not mode & 0o077:
            continue
        wanted = 0o700 if stat.S_ISDIR(mode) else (stat.S_IMODE(mode) & 0o700) | 0o600
        try:
            os.chmod(path, wanted)
        except FileNotFoundError:
            continue
        except PermissionError:
            log.warning("cannot make %s private (owned by another user?); fix its permissions by hand", path)
            continue
        changed.append(path)
    return changed


def open_private(folder: Path) -> list[Path]:
    """Create `folder` (and missing parents) private, tighten what is already in it, and say so once if needed."""
    private_umask()
    folder.mkdir(parents=True, exist_ok=True)
    changed = tighten(folder)
    if changed:
        shown = ", ".join(str(p) for p in changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        log.warning(
            "made %d files and folders under %s private to their owner (0700/0600); others could read them: %s",
            len(changed),
            folder,
            shown,
        )
    return changed
