"""A lock shared by every process and thread that opens the same data folder."""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tiers.errors import StorageError

_thread_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()
_held = threading.local()


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Exclusive lock on `path` across processes (flock) and threads; re-entrant within a thread."""
    key = str(path.resolve())
    with _guard:
        lock = _thread_locks.setdefault(key, threading.RLock())
    with lock:
        depth: dict[str, int] = getattr(_held, "depth", None) or {}
        _held.depth = depth
        if depth.get(key):
            depth[key] += 1
            try:
                yield
            finally:
                depth[key] -= 1
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            depth[key] = 1
            try:
                yield
            finally:
                depth[key] = 0
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def shared_lock(path: Path, exclusive: bool = False) -> Iterator[None]:
    """A reader/writer lock across processes and threads: each use opens its own descriptor.

    Readers of the LanceDB table hold it shared; compaction, which deletes old files, holds it
    exclusive, so no reader anywhere is ever left holding a version whose files were removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def serving_lock(folder: Path, exclusive: bool = False) -> Iterator[None]:
    """Held shared by every server using the folder, for as long as it runs; exclusive, without waiting,
    by work that must have the folder to itself (re-embedding), which is refused while any server runs."""
    path = folder / "serving.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), (fcntl.LOCK_EX | fcntl.LOCK_NB) if exclusive else fcntl.LOCK_SH)
        except BlockingIOError:
            raise StorageError(
                f"a memtiers server is using {folder}; stop it (quit the hosts that started it) and run this again"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
