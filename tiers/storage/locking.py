"""A lock shared by every process and thread that opens the same data folder; every wait is bounded.

A process holding a lock exclusively writes its pid into the lock file, so one that gives up waiting
can name the holder. The locks are the operating system's (flock on Linux and macOS, LockFileEx on
Windows, through portalocker), which it drops when their holder dies, so a lock is never stale; a pid
left in the file by a killed holder is overwritten by the next one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import portalocker

from tiers.errors import LockTimeout, StorageError

DEFAULT_TIMEOUT = 30.0

_thread_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()
_held = threading.local()


@contextmanager
def file_lock(path: Path, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Exclusive lock on `path` across processes and threads; re-entrant within a thread.

    Raises LockTimeout, naming the file and its holder, when it is not had within `timeout` seconds.
    """
    key = str(path.resolve())
    deadline = time.monotonic() + timeout
    with _guard:
        lock = _thread_locks.setdefault(key, threading.RLock())
    if not lock.acquire(timeout=max(timeout, 0)):
        raise LockTimeout(_busy(path, timeout, os.getpid(), "another thread of this process"))
    try:
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
            _acquire(handle, path, True, deadline, timeout)
            depth[key] = 1
            try:
                yield
            finally:
                depth[key] = 0
                _release(handle)
    finally:
        lock.release()


@contextmanager
def shared_lock(path: Path, exclusive: bool = False, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """A reader/writer lock across processes and threads: each use opens its own descriptor.

    Readers of the LanceDB table hold it shared; compaction, which deletes old files, holds it
    exclusive, so no reader anywhere is ever left holding a version whose files were removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        _acquire(handle, path, exclusive, time.monotonic() + timeout, timeout)
        try:
            yield
        finally:
            _release(handle) if exclusive else portalocker.unlock(handle)


def _acquire(handle: IO[str], path: Path, exclusive: bool, deadline: float, timeout: float) -> None:
    """Lock without blocking, retried with a growing pause (1 to 50 ms) until `deadline`."""
    pause = 0.001
    while not _try_lock(handle, exclusive):
        left = deadline - time.monotonic()
        if left <= 0:
            raise LockTimeout(_busy(path, timeout, *_holder(path)))
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)
    if exclusive:
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()


def _try_lock(handle: IO[str], exclusive: bool) -> bool:
    """Take the lock on `handle` at once if it is free: False when another holds it, StorageError if locking fails."""
    flags = portalocker.LockFlags.EXCLUSIVE if exclusive else portalocker.LockFlags.SHARED
    try:
        portalocker.lock(handle, flags | portalocker.LockFlags.NON_BLOCKING)
    except portalocker.AlreadyLocked:
        return False
    except portalocker.LockException as exc:
        raise StorageError(f"cannot lock {handle.name}: {exc}") from exc
    return True


def _release(handle: IO[str]) -> None:
    handle.seek(0)
    handle.truncate()
    handle.flush()
    portalocker.unlock(handle)


def _holder(path: Path) -> tuple[int | None, str]:
    """The pid written by the exclusive holder, and what that process is, as far as can be told cheaply.

    Where locks are mandatory (Windows) the locked file cannot be read, and the holder goes unnamed.
    """
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None, "readers of the store, or a process that wrote no pid"
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        command = ""
    return pid, command[:120]


def _busy(path: Path, timeout: float, pid: int | None, what: str) -> str:
    holder = f"process {pid}" + (f" ({what})" if what else "") if pid is not None else what
    return (
        f"gave up after waiting {timeout:g} s for the lock {path}, held by {holder}: another memtiers server "
        "or command is working on this data folder; retry in a moment, or stop that process if it is stuck"
    )


@contextmanager
def serving_lock(folder: Path, exclusive: bool = False) -> Iterator[None]:
    """Held shared by every server using the folder, for as long as it runs; exclusive, without waiting,
    by work that must have the folder to itself (re-embedding), which is refused while any server runs."""
    path = folder / "serving.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        if not exclusive:  # a server waits for a running reembed to finish, however long it takes
            portalocker.lock(handle, portalocker.LockFlags.SHARED)
        elif not _try_lock(handle, exclusive=True):
            raise StorageError(
                f"a memtiers server (or another reembed) is using {folder}; stop it (quit the hosts that started "
                "it) and run this again"
            )
        try:
            yield
        finally:
            portalocker.unlock(handle)
