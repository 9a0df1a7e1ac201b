"""The ledger: use counters for heat and the log of every move, in SQLite beside the LanceDB tables.

Counters that change on every recall live here, not in LanceDB, where each update is a new version.
SQLite in WAL mode is safe for several processes on one data folder.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tiers.errors import CorruptFile, StorageError

_SCHEMA = [
    # migration 1
    """
    CREATE TABLE IF NOT EXISTS uses (
        rid TEXT PRIMARY KEY, uses INTEGER NOT NULL DEFAULT 0, repeats INTEGER NOT NULL DEFAULT 0,
        last_touch REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS moves (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, rid TEXT NOT NULL, key TEXT,
        src TEXT NOT NULL, dst TEXT NOT NULL, rule TEXT NOT NULL, heat REAL, note TEXT);
    CREATE INDEX IF NOT EXISTS moves_rid ON moves(rid);
    CREATE TABLE IF NOT EXISTS state (k TEXT PRIMARY KEY, v TEXT NOT NULL);
    """,
    # migration 2: which records stated which value of which profile key (sources and history)
    """
    CREATE TABLE IF NOT EXISTS provenance (
        key TEXT NOT NULL, rid TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, rid));
    CREATE INDEX IF NOT EXISTS provenance_rid ON provenance(rid);
    """,
    # migration 3: the warm tier's change feed (which records changed, so every process's warm index
    # follows), and tier moves under way (a crash between the two tables' writes is finished on open)
    """
    CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS pending (
        rid TEXT PRIMARY KEY, at REAL NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL, rule TEXT NOT NULL,
        heat REAL);
    """,
    # migration 4: which tier's index a change concerns (NULL: both), so a write to warm costs cold nothing
    """
    ALTER TABLE changes ADD COLUMN tier TEXT;
    """,
    # migration 5: the moves of one rule (a project's parked profile entries, tiers/lifecycle/projects.py),
    # found by index
    """
    CREATE INDEX IF NOT EXISTS moves_rule ON moves(rule);
    """,
    # migration 6: records a write is changing, noted before the table write and cleared with its feed entry,
    # so a write killed between the two still reaches every process's index (`Ledger.intend`)
    """
    CREATE TABLE IF NOT EXISTS changing (rid TEXT NOT NULL, tier TEXT);
    CREATE INDEX IF NOT EXISTS changing_rid ON changing(rid);
    """,
    # migration 7: the earlier memories `remember` named as ones a new memory may update (a guess, never a
    # supersession), so recall can show the later word beside an older one its query found alone
    """
    CREATE TABLE IF NOT EXISTS hints (
        older TEXT NOT NULL, newer TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (older, newer));
    CREATE INDEX IF NOT EXISTS hints_newer ON hints(newer);
    """,
]
# The change feed keeps this many entries; a process that fell further behind reloads the warm tier.
CHANGES_KEPT = 100_000


@dataclass(frozen=True)
class Usage:
    """How often a record was used or said again, and when it was last touched."""

    uses: int
    repeats: int
    last_touch: datetime


@dataclass(frozen=True)
class Move:
    """One logged move between tiers (dst `gone` for a forget, `hot` for a profile entry)."""

    at: datetime
    rid: str
    src: str
    dst: str
    rule: str
    heat: float | None = None
    key: str | None = None
    note: str | None = None
    seq: int | None = None


def _ts(value: datetime) -> float:
    return value.timestamp()


def _dt(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=UTC)


class Ledger:
    """Use counters and the move log of one namespace."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
            # Checked before anything is written: SQLite would go on writing the pages it can read of a damaged file.
            problems = [row[0] for row in self._db.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                self._db.close()
                raise sqlite3.DatabaseError(f"malformed: {problems[0].splitlines()[-1].strip()}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # Deleted text is overwritten, not left in free pages: a forgotten memory leaves no trace here.
            self._db.execute("PRAGMA secure_delete=ON")
            self._migrate()
        except sqlite3.Error as exc:
            damaged = any(word in str(exc).lower() for word in ("not a database", "malformed", "corrupt"))
            raise (CorruptFile if damaged else StorageError)(
                f"cannot open the ledger {path} ({exc}); it was left untouched. If it is damaged, move it aside "
                "(with its -wal and -shm files) and retry: a new ledger starts empty, losing the use counters and "
                "the move log but no memory (those are in lance/ and profile.json)"
            ) from exc

    def _migrate(self) -> None:
        with self._tx() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            for number, script in enumerate(_SCHEMA[version:], start=version + 1):
                for statement in filter(str.strip, script.split(";")):
                    db.execute(statement)
                db.execute(f"PRAGMA user_version={number}")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StorageError(f"writing the ledger {self.path} failed: {exc}{_advice(exc)}") from exc

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, for one read under the lock; an SQLite error becomes a StorageError naming the file."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise StorageError(f"reading the ledger {self.path} failed: {exc}{_advice(exc)}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def touch(self, rids: Iterable[str], at: datetime, *, repeat: bool = False) -> None:
        """Count a use (or a repeat, when the same memory is said again) of each record."""
        column = "repeats" if repeat else "uses"
        rows = [(rid, _ts(at)) for rid in rids]
        if not rows:
            return
        with self._tx() as db:
            db.executemany(
                f"INSERT INTO uses(rid, {column}, last_touch) VALUES (?, 1, ?) "
                f"ON CONFLICT(rid) DO UPDATE SET {column} = {column} + 1, "
                "last_touch = MAX(last_touch, excluded.last_touch)",
                rows,
            )

    def usage(self, rids: Iterable[str] | None = None) -> dict[str, Usage]:
        with self._reading() as db:
            if rids is None:
                cursor = db.execute("SELECT rid, uses, repeats, last_touch FROM uses")
                rows = cursor.fetchall()
            else:
                wanted = list(rids)
                rows = []
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows += db.execute(
                        f"SELECT rid, uses, repeats, last_touch FROM uses WHERE rid IN ({marks})", chunk
                    ).fetchall()
        return {rid: Usage(uses, repeats, _dt(last)) for rid, uses, repeats, last in rows}

    def forget(self, rid: str, texts: Iterable[str] = ()) -> None:
        """Drop a forgotten record's counters and provenance, and every note that quotes what it said.

        Its moves stay in the log (that it was stored, moved and forgotten, and when), without their
        notes; the write-ahead log is then emptied, so no file keeps an old page of it.
        """
        quoted = [t for t in dict.fromkeys(texts) if t.strip()]
        with self._tx() as db:
            values = [v for (v,) in db.execute("SELECT value FROM provenance WHERE rid = ?", (rid,))]
            db.execute("DELETE FROM uses WHERE rid = ?", (rid,))
            db.execute("DELETE FROM provenance WHERE rid = ?", (rid,))
            db.execute("DELETE FROM hints WHERE older = ? OR newer = ?", (rid, rid))
            db.execute("UPDATE moves SET note = NULL WHERE rid = ? AND note IS NOT NULL", (rid,))
            for text in [*quoted, *values]:
                db.execute(
                    "UPDATE moves SET note = NULL "
                    "WHERE note IS NOT NULL AND (instr(note, ?) > 0 OR instr(?, note) > 0)",
                    (text[:200], text),
                )
        self.checkpoint()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database and truncate it."""
        with self._lock:
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise StorageError(f"ledger checkpoint failed: {exc}") from exc

    # the change feed the in-memory indexes of every process follow

    def intend(self, rids: Iterable[str], tier: str | None = None) -> int:
        """Note, before a write to a table, the records it will change (for `tier`'s index; None: both), cleared
        by `changed` once the write is done; the number of records a write left noted and never fed.

        A write killed between its table write and its feed entry left the table changed and every other
        process's index as it was (and the index saved for the next process, which the feed brings up to date).
        Writes hold the data folder's write lock, so a record still noted when the next one starts, or when
        the store is opened, belongs to a write that died: it goes into the feed then, and every index reads
        it again. A write that never reached the table is read again unchanged, which costs nothing."""
        rows = [(rid, tier) for rid in dict.fromkeys(rids)]
        with self._tx() as db:
            left = db.execute("SELECT DISTINCT rid, tier FROM changing").fetchall()
            if left:
                db.executemany("INSERT INTO changes(rid, tier) VALUES (?, ?)", left)
                db.execute("DELETE FROM changing")
            if rows:
                db.executemany("INSERT INTO changing(rid, tier) VALUES (?, ?)", rows)
        return len(left)

    def changed(self, rids: Iterable[str], tier: str | None = None) -> int:
        """Note that these records changed in `tier` (None: in both, or either); the feed's newest position."""
        rows = [(rid, tier) for rid in dict.fromkeys(rids)]
        with self._tx() as db:
            if rows:
                db.executemany("INSERT INTO changes(rid, tier) VALUES (?, ?)", rows)
                db.executemany("DELETE FROM changing WHERE rid = ?", [(rid,) for rid, _ in rows])
            return int(db.execute("SELECT COALESCE(MAX(seq), 0) FROM changes").fetchone()[0])

    def last_change(self) -> int:
        with self._reading() as db:
            return int(db.execute("SELECT COALESCE(MAX(seq), 0) FROM changes").fetchone()[0])

    def changes_since(self, seq: int, tier: str | None = None) -> tuple[int, set[str] | None]:
        """The feed's newest position and the records changed after `seq` (None: too far behind to say).

        With `tier`, only the changes that concern that tier's index.
        """
        with self._reading() as db:
            oldest, newest = db.execute("SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM changes").fetchone()
            if newest <= seq:
                return int(newest), set()
            if seq < oldest - 1:
                return int(newest), None
            which = "" if tier is None else " AND (tier IS NULL OR tier = ?)"
            wanted = (seq, newest) if tier is None else (seq, newest, tier)
            rows = db.execute(f"SELECT DISTINCT rid FROM changes WHERE seq > ? AND seq <= ?{which}", wanted)
            return int(newest), {rid for (rid,) in rows}

    def trim_changes(self) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM changes WHERE seq <= (SELECT MAX(seq) FROM changes) - ?", (CHANGES_KEPT,))

    # tier moves under way

    def begin_moves(self, moves: Iterable[Move]) -> None:
        rows = [(m.rid, _ts(m.at), m.src, m.dst, m.rule, m.heat) for m in moves]
        if rows:
            with self._tx() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO pending(rid, at, src, dst, rule, heat) VALUES (?,?,?,?,?,?)", rows
                )

    def finish_moves(self, done: Iterable[Move], undone: Iterable[str] = ()) -> None:
        """Log the moves that happened and clear them, with those that did not, from the moves under way."""
        done = list(done)
        with self._tx() as db:
            db.executemany(
                "INSERT INTO moves(at, rid, key, src, dst, rule, heat, note) VALUES (?,?,?,?,?,?,?,?)",
                [(_ts(m.at), m.rid, m.key, m.src, m.dst, m.rule, m.heat, m.note) for m in done],
            )
            db.executemany("DELETE FROM pending WHERE rid = ?", [(m.rid,) for m in done] + [(r,) for r in undone])

    def pending_moves(self) -> list[Move]:
        with self._reading() as db:
            rows = db.execute("SELECT rid, at, src, dst, rule, heat FROM pending").fetchall()
        return [Move(_dt(at), rid, src, dst, rule, heat) for rid, at, src, dst, rule, heat in rows]

    def log(self, moves: Iterable[Move]) -> None:
        rows = [(_ts(m.at), m.rid, m.key, m.src, m.dst, m.rule, m.heat, m.note) for m in moves]
        if rows:
            with self._tx() as db:
                db.executemany(
                    "INSERT INTO moves(at, rid, key, src, dst, rule, heat, note) VALUES (?,?,?,?,?,?,?,?)",
                    rows,
                )

    def moves(self, rid: str | None = None, limit: int = 100) -> list[Move]:
        """The newest moves first, of all, or of one record (and the profile entries it stated) or profile key."""
        query = _MOVES
        args: tuple[object, ...] = ()
        if rid is not None:
            query += " WHERE rid = ? OR key = ? OR rid IN (SELECT 'hot:' || key FROM provenance WHERE rid = ?)"
            args = (rid, rid, rid)
        query += " ORDER BY seq DESC LIMIT ?"
        with self._reading() as db:
            return _moves(db.execute(query, (*args, limit)).fetchall())

    def moved_by(self, rule: str) -> list[Move]:
        """Every move a rule made, oldest first."""
        with self._reading() as db:
            return _moves(db.execute(f"{_MOVES} WHERE rule = ? ORDER BY seq", (rule,)).fetchall())

    def link(self, key: str, rows: Iterable[tuple[str, str]]) -> None:
        """Record that each (record id, value) stated `key`'s value; a record states one value per key."""
        values = [(key, rid, value) for rid, value in rows]
        if values:
            with self._tx() as db:
                db.executemany(
                    "INSERT INTO provenance(key, rid, value) VALUES (?, ?, ?) "
                    "ON CONFLICT(key, rid) DO UPDATE SET value = excluded.value",
                    values,
                )

    def linked(self, key: str) -> dict[str, str]:
        """The records that stated a value of `key`, with that value."""
        with self._reading() as db:
            rows = db.execute("SELECT rid, value FROM provenance WHERE key = ?", (key,)).fetchall()
        return dict(rows)

    def hint(self, pairs: Iterable[tuple[str, str]], at: datetime) -> None:
        """Record that each (older, newer) pair was named by `remember`: the newer memory may update the older."""
        rows = [(older, newer, _ts(at)) for older, newer in pairs]
        if rows:
            with self._tx() as db:
                db.executemany("INSERT OR IGNORE INTO hints(older, newer, at) VALUES (?, ?, ?)", rows)

    def hinted(self, olders: Iterable[str]) -> dict[str, list[str]]:
        """The newer memories named as possible updates of each of these, the most recently named first."""
        wanted = list(dict.fromkeys(olders))
        out: dict[str, list[str]] = {}
        if not wanted:
            return out
        with self._reading() as db:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for older, newer in db.execute(
                    f"SELECT older, newer FROM hints WHERE older IN ({marks}) ORDER BY at DESC, newer", chunk
                ):
                    out.setdefault(older, []).append(newer)
        return out

    def bump(self, name: str, by: int = 1) -> int:
        """Add `by` to a named counter and return its new value."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO state(k, v) VALUES (?, CAST(? AS TEXT)) "
                "ON CONFLICT(k) DO UPDATE SET v = CAST(v AS INTEGER) + excluded.v",
                (name, by),
            )
            return int(db.execute("SELECT v FROM state WHERE k = ?", (name,)).fetchone()[0])

    def reset(self, name: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM state WHERE k = ?", (name,))

    def get_state(self, name: str) -> str | None:
        with self._reading() as db:
            row = db.execute("SELECT v FROM state WHERE k = ?", (name,)).fetchone()
        return row[0] if row else None

    def set_state(self, name: str, value: str) -> None:
        with self._tx() as db:
            _set_state(db, name, value)

    def change_state(self, name: str, change: Callable[[str | None], str | None]) -> None:
        """Read a state value, change it and write it back in one transaction, so two processes changing it at
        once each see the other's change. `change` is given the value as it is (None when there is none) and
        returns the new one, or None to leave it."""
        with self._tx() as db:
            row = db.execute("SELECT v FROM state WHERE k = ?", (name,)).fetchone()
            value = change(row[0] if row else None)
            if value is not None:
                _set_state(db, name, value)

    # export and import (tiers/transfer/jsonl.py): the whole ledger out, and back in without duplicates

    def all_moves(self) -> list[Move]:
        """The whole move log, oldest first."""
        with self._lock:
            return _moves(self._db.execute(f"{_MOVES} ORDER BY seq").fetchall())

    def all_provenance(self) -> list[tuple[str, str, str]]:
        """Every (key, record id, value) link, by key then record."""
        with self._lock:
            rows = self._db.execute("SELECT key, rid, value FROM provenance ORDER BY key, rid").fetchall()
        return [(key, rid, value) for key, rid, value in rows]

    def restore_moves(self, moves: Iterable[Move]) -> int:
        """Append moves to the log in the order given, skipping any already logged; how many were added.

        A move is the same when its time, record, key, tiers and rule are: an import run twice logs once.
        """
        added = 0
        with self._tx() as db:
            for m in moves:
                cursor = db.execute(
                    "INSERT INTO moves(at, rid, key, src, dst, rule, heat, note) SELECT ?1,?2,?3,?4,?5,?6,?7,?8 "
                    "WHERE NOT EXISTS (SELECT 1 FROM moves WHERE rid = ?2 AND at = ?1 AND key IS ?3 "
                    "AND src = ?4 AND dst = ?5 AND rule = ?6)",
                    (_ts(m.at), m.rid, m.key, m.src, m.dst, m.rule, m.heat, m.note),
                )
                added += cursor.rowcount
        return added

    def restore_uses(self, usage: dict[str, Usage]) -> None:
        """Merge use counters, keeping the larger count and the later touch: idempotent, never lowers a count."""
        rows = [(rid, u.uses, u.repeats, _ts(u.last_touch)) for rid, u in usage.items()]
        if rows:
            with self._tx() as db:
                db.executemany(
                    "INSERT INTO uses(rid, uses, repeats, last_touch) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(rid) DO UPDATE SET uses = MAX(uses, excluded.uses), "
                    "repeats = MAX(repeats, excluded.repeats), last_touch = MAX(last_touch, excluded.last_touch)",
                    rows,
                )


_MOVES = "SELECT seq, at, rid, key, src, dst, rule, heat, note FROM moves"


def _moves(rows: list[tuple[Any, ...]]) -> list[Move]:
    """Moves from rows of `_MOVES`."""
    return [
        Move(at=_dt(at), rid=r, key=k, src=s, dst=d, rule=rule, heat=h, note=n, seq=seq)
        for seq, at, r, k, s, d, rule, h, n in rows
    ]


def _advice(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "full" in text or "too large" in text:
        return "; free disk space and retry (nothing was changed)"
    if "malformed" in text or "not a database" in text:
        return (
            "; the file is damaged: move it aside (with its -wal and -shm files) and retry, a new ledger starts empty"
        )
    return ""


def _set_state(db: sqlite3.Connection, name: str, value: str) -> None:
    db.execute("INSERT INTO state(k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v", (name, value))
