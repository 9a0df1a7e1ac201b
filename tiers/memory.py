"""The memory of one namespace: the hot profile, the warm and cold tiers, and the moves between them.

Every method takes `now`, so time is a parameter and a year can be simulated in seconds.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from tiers import recall as ranking
from tiers.classify import classify
from tiers.embedder import Embedder
from tiers.errors import InvalidInput, NotFound
from tiers.heat import HeatRules
from tiers.hot import Entry, HotProfile, check_key, with_value
from tiers.index import Scope
from tiers.ledger import Ledger, Move
from tiers.locking import file_lock
from tiers.records import MAX_BATCH, Kind, MemoryIn, Record, Tier, content_hash
from tiers.rules import Plan, Planned, hot_rid, plan_sweep, record_heat
from tiers.store import Store, check_id
from tiers.timeparse import as_utc, parse_deadline, parse_time

PROFILE_MATCH = 0.35


@dataclass(frozen=True)
class MemorySettings:
    """Everything tunable about one memory; the server builds it from its configuration."""

    cap_tokens: int = 1_000
    rules: HeatRules = field(default_factory=HeatRules)
    compact_every: int = 100
    candidates_per_search: int = 50
    recall: ranking.RecallSettings = field(default_factory=ranking.RecallSettings)


@dataclass(frozen=True)
class Stored:
    """What `remember` did with one memory."""

    id: str
    tier: Tier
    kind: Kind
    protected: bool
    duplicate_of: str | None = None
    profile_key: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Promoted:
    id: str
    tier: Tier
    outcome: str  # promoted | already_hot | already_warm
    key: str | None = None


@dataclass(frozen=True)
class Forgotten:
    id: str
    tier: Tier
    orphaned_profile_keys: tuple[str, ...]


@dataclass(frozen=True)
class SweepReport:
    at: datetime
    dry_run: bool
    moves: tuple[Planned, ...]
    hot_candidates: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class ProfileChange:
    entries: dict[str, Entry]
    tokens: int
    cap_tokens: int
    demoted: tuple[str, ...] = ()
    candidates: tuple[dict[str, Any], ...] = ()


class Memory:
    """Hot profile + LanceDB tiers + ledger of one namespace in one folder."""

    def __init__(self, folder: Path, embedder: Embedder, settings: MemorySettings | None = None) -> None:
        self.folder = folder
        self.embedder = embedder
        self.settings = settings or MemorySettings()
        folder.mkdir(parents=True, exist_ok=True)
        self.hot = HotProfile(folder / "profile.json", self.settings.cap_tokens)
        self.ledger = Ledger(folder / "ledger.sqlite")
        self._lock_path = folder / "write.lock"
        self._store: Store | None = None
        self._profile_vectors: dict[str, np.ndarray] = {}

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(
                self.folder, self.embedder.name, self.embedder.dim, compact_every=self.settings.compact_every
            )
        return self._store

    def close(self) -> None:
        self.ledger.close()

    # remember

    def remember(self, items: Sequence[MemoryIn], now: datetime) -> list[Stored]:
        """Store memories; a repeat of a stored memory refreshes it instead of adding a row."""
        if not items:
            raise InvalidInput("give at least one memory to remember")
        if len(items) > MAX_BATCH:
            raise InvalidInput(f"a batch holds at most {MAX_BATCH} memories; this one has {len(items)}: split it")
        prepared = [self._prepare(item, now) for item in items]
        vectors = self.embedder.embed([item.content for item in items])
        results: list[Stored] = []
        with file_lock(self._lock_path):
            store = self.store
            existing = store.find_hashes([p["hash"] for p in prepared])
            fresh: list[dict[str, Any]] = []
            seen: dict[str, str] = {}
            moves: list[Move] = []
            repeats: list[str] = []
            rewarm: list[str] = []
            for row, vector in zip(prepared, vectors, strict=True):
                if row["hash"] in existing or row["hash"] in seen:
                    rid, tier = existing.get(row["hash"], (seen.get(row["hash"], ""), Tier.WARM))
                    repeats.append(rid)
                    if tier is Tier.COLD and rid not in rewarm:
                        rewarm.append(rid)
                        moves.append(Move(now, rid, "cold", "warm", "repeated"))
                        tier = Tier.WARM
                    results.append(Stored(rid, tier, Kind(row["kind"]), row["protected"], duplicate_of=rid))
                    continue
                row["vector"] = vector.tolist()
                seen[row["hash"]] = row["id"]
                fresh.append(row)
                moves.append(Move(now, row["id"], "new", "warm", f"remember:{row['kind']}"))
                results.append(Stored(row["id"], Tier.WARM, Kind(row["kind"]), row["protected"]))
            store.add(fresh)
            store.set_tier(rewarm, Tier.WARM)
            if fresh:
                store.after_write(self.ledger.bump("writes"))
        self.ledger.touch(repeats, now, repeat=True)
        self.ledger.log(moves)
        return self._apply_profile_hints(items, prepared, results, now)

    def _prepare(self, item: MemoryIn, now: datetime) -> dict[str, Any]:
        found = classify(item.content, item.kind)
        metadata = dict(item.metadata)
        if found.key and not item.key:
            metadata.setdefault("profile_key", found.key)
        return {
            "id": secrets.token_hex(6),
            "hash": content_hash(item.content),
            "content": item.content,
            "tier": Tier.WARM.value,
            "kind": found.kind.value,
            "protected": found.durable or item.key is not None,
            "tags": list(dict.fromkeys(item.tags)),
            "metadata": json.dumps(metadata, ensure_ascii=False),
            "source": item.source,
            "occurred_at": parse_time(item.occurred_at, "occurred_at") if item.occurred_at else now,
            "created_at": now,
            "forget_after": parse_deadline(item.forget_after, now) if item.forget_after else None,
            "superseded_by": None,
            "superseded_at": None,
            "_key": found.key if found.value else None,
            "_value": found.value,
        }

    def _apply_profile_hints(
        self, items: Sequence[MemoryIn], prepared: list[dict[str, Any]], results: list[Stored], now: datetime
    ) -> list[Stored]:
        out: list[Stored] = []
        for item, row, stored in zip(items, prepared, results, strict=True):
            key = item.key or row["_key"]
            if not key:
                out.append(stored)
                continue
            value = item.content if item.key else row["_value"]
            try:
                self.set_profile({key: value}, now, sources={key: (stored.id,)}, rule="remember")
            except InvalidInput as exc:
                self._add_candidate(stored.id, key, str(exc).split(";")[0])
                out.append(_with(stored, note=f"kept warm and protected; the profile is full: {exc}"))
                continue
            out.append(_with(stored, tier=Tier.HOT, profile_key=key))
        return out

    # profile

    def set_profile(
        self,
        values: dict[str, str],
        now: datetime,
        unset: Sequence[str] = (),
        pin: Sequence[str] = (),
        unpin: Sequence[str] = (),
        sources: dict[str, tuple[str, ...]] | None = None,
        rule: str = "profile",
    ) -> ProfileChange:
        """Change the profile; a replaced or removed value goes down to warm as a record, never lost."""
        old: list[tuple[str, Entry, str]] = []
        with self.hot.editing() as entries:
            for key in [*unset, *pin, *unpin]:
                if key not in entries and key not in values:
                    raise NotFound(f"no profile entry {key!r}; entries are: {', '.join(sorted(entries)) or 'none'}")
            for key, value in values.items():
                check_key(key)
                before = entries.get(key)
                entries[key] = with_value(before, value, now, (sources or {}).get(key, ()))
                if before is not None and before.value != value:
                    old.append((key, before, "superseded"))
            for key in unset:
                old.append((key, entries.pop(key), "unset"))
            for key in pin:
                entries[key] = _entry_with(entries[key], pinned=True)
            for key in unpin:
                entries[key] = _entry_with(entries[key], pinned=False)
            after = dict(entries)
        demoted = self._demote_entries(old, now)
        moves = [Move(now, hot_rid(k), "profile", "hot", rule, key=k, note=after[k].value[:200]) for k in values]
        self.ledger.log(moves)
        self.ledger.touch([hot_rid(k) for k in values], now)
        return ProfileChange(after, self.hot.tokens(after), self.hot.cap_tokens, demoted, self.candidates())

    def _demote_entries(self, old: list[tuple[str, Entry, str]], now: datetime) -> tuple[str, ...]:
        """Write replaced or removed profile values down to warm, with their provenance."""
        if not old:
            return ()
        items = [
            MemoryIn(
                content=f"{key}: {entry.value}",
                metadata={
                    "profile_key": key,
                    "sources": " ".join(entry.sources),
                    "was_set_at": entry.updated_at.isoformat(),
                },
                occurred_at=entry.updated_at.isoformat(),
                kind=Kind.HISTORY,
            )
            for key, entry, _ in old
        ]
        stored = self.remember(items, now)
        with file_lock(self._lock_path):
            for (key, _, why), result in zip(old, stored, strict=True):
                if why == "superseded":
                    self.store.supersede(result.id, f"profile:{key}", now)
        self.ledger.log(
            Move(now, r.id, "hot", "warm", why, key=key) for (key, _, why), r in zip(old, stored, strict=True)
        )
        return tuple(r.id for r in stored)

    def profile(self) -> dict[str, Entry]:
        return self.hot.entries()

    def candidates(self) -> tuple[dict[str, Any], ...]:
        raw = self.ledger.get_state("hot_candidates")
        return tuple(json.loads(raw)) if raw else ()

    def _add_candidate(self, rid: str, key: str | None, reason: str, heat: float | None = None) -> None:
        current = [c for c in self.candidates() if c["id"] != rid]
        current.append({"id": rid, "key": key, "reason": reason, "heat": heat})
        self.ledger.set_state("hot_candidates", json.dumps(current[-50:]))

    # recall

    def recall(
        self,
        query: str,
        now: datetime,
        limit: int = 10,
        max_tokens: int | None = None,
        tiers: Sequence[Tier] | None = None,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> ranking.Packed:
        """The memories that best answer `query`, packed into `max_tokens`; each one returned counts as a use."""
        if not query.strip():
            raise InvalidInput("query is blank; say what to look for")
        wanted = tuple(dict.fromkeys(tiers)) if tiers else (Tier.HOT, Tier.WARM)
        searched = tuple(t for t in wanted if t is not Tier.HOT)
        default = tiers is None
        if default:
            searched = (Tier.WARM, Tier.COLD)
        vector = self.embedder.embed([query])[0]
        ranked: list[ranking.Ranked] = []
        if searched:
            index = self.store.index()
            scope = Scope(searched, tuple(tags), _micros(since), _micros(until))
            found = ranking.rank(index, vector, query, index.mask(scope), self.settings.recall, limit, default)
            records = self.store.records(index, [position for position, _, _ in found])
            ranked = [
                ranking.Ranked(record, score, similarity)
                for record, (_, score, similarity) in zip(records, found, strict=True)
            ]
        profile = self._matching_profile(query, vector) if Tier.HOT in wanted or default else {}
        packed = ranking.pack(ranked, profile, limit, max_tokens, self.settings.recall.grouped)
        self.ledger.touch([h.record.id for h in packed.hits], now)
        self.ledger.touch([hot_rid(k) for k in packed.profile], now)
        return packed

    def _matching_profile(self, query: str, vector: np.ndarray) -> dict[str, Entry]:
        entries = self.hot.entries()
        if not entries:
            return {}
        texts = {key: f"{key.replace('_', ' ').replace('.', ' ')}: {e.value}" for key, e in entries.items()}
        missing = [t for t in texts.values() if t not in self._profile_vectors]
        if missing:
            for text, vec in zip(missing, self.embedder.embed(missing), strict=True):
                self._profile_vectors[text] = vec
        words = {w for w in query.lower().split() if len(w) > 3}
        matched = {}
        for key, text in texts.items():
            similar = float(np.dot(self._profile_vectors[text], vector)) >= PROFILE_MATCH
            if similar or words & set(text.lower().replace(":", " ").split()):
                matched[key] = entries[key]
        return matched

    def get(self, rid: str) -> Record:
        found = self.store.get([check_id(rid)])
        if rid not in found:
            raise NotFound(f"no memory {rid!r} in this namespace (it may have been forgotten)")
        return found[rid]

    # moves

    def promote(self, rid: str, now: datetime, to: Tier = Tier.HOT, key: str | None = None) -> Promoted:
        """Move a record up: cold to warm, or into the profile as an entry sourced by it."""
        record = self.get(rid)
        to = Tier(to)
        if to is Tier.COLD:
            raise InvalidInput("promote moves records up (to warm or hot); records go cold by the timer")
        if to is Tier.WARM:
            if record.tier is Tier.WARM:
                return Promoted(rid, Tier.WARM, "already_warm")
            with file_lock(self._lock_path):
                self.store.set_tier([rid], Tier.WARM)
            self.ledger.log([Move(now, rid, record.tier.value, "warm", "promote")])
            self.ledger.touch([rid], now)
            return Promoted(rid, Tier.WARM, "promoted")
        key = key or record.metadata.get("profile_key")
        if not key:
            raise InvalidInput("promoting to hot needs a profile key, e.g. key='diet.allergy'")
        value = record.content
        if record.kind is Kind.HISTORY and value.startswith(f"{key}: "):
            value = value[len(key) + 2 :]
        current = self.hot.entries().get(key)
        if current is not None and current.value == value and rid in current.sources:
            return Promoted(rid, Tier.HOT, "already_hot", key)
        self.set_profile({key: value}, now, sources={key: (rid,)}, rule=f"promote:{rid}")
        if record.tier is Tier.COLD:
            with file_lock(self._lock_path):
                self.store.set_tier([rid], Tier.WARM)
        self.ledger.log([Move(now, rid, record.tier.value, "hot", "promote", key=key)])
        self.ledger.touch([rid], now)
        return Promoted(rid, Tier.HOT, "promoted", key)

    def forget(self, rid: str, now: datetime) -> Forgotten:
        """Delete a record from every tier and from search; profile entries it alone sourced are named."""
        record = self.get(rid)
        with file_lock(self._lock_path):
            self.store.delete(rid)
        self.ledger.forget(rid)
        self.ledger.log([Move(now, rid, record.tier.value, "gone", "forget")])
        orphaned: list[str] = []
        with self.hot.editing() as entries:
            for key, entry in list(entries.items()):
                if rid in entry.sources:
                    remaining = tuple(s for s in entry.sources if s != rid)
                    entries[key] = _entry_with(entry, sources=remaining)
                    if not remaining:
                        orphaned.append(key)
        return Forgotten(rid, record.tier, tuple(orphaned))

    def plan(self, now: datetime) -> Plan:
        rows = self.store.lifecycle_rows([Tier.WARM, Tier.COLD])
        return plan_sweep(rows, self.ledger.usage(), self.hot.entries(), now, self.settings.rules)

    def sweep(self, now: datetime, dry_run: bool = False) -> SweepReport:
        """One pass of the timer as of `now`: demote stale records, re-warm hot ones, propose candidates."""
        plan = self.plan(now)
        if not dry_run:
            self._apply(plan, now)
        return SweepReport(now, dry_run, plan.moves, plan.hot_candidates)

    def _apply(self, plan: Plan, now: datetime) -> None:
        record_moves = [m for m in plan.moves if m.src is not Tier.HOT]
        with file_lock(self._lock_path):
            for dst in (Tier.COLD, Tier.WARM):
                self.store.set_tier([m.rid for m in record_moves if m.dst is dst], dst)
            if record_moves:
                self.store.compact()
        self.ledger.log(Move(now, m.rid, m.src.value, m.dst.value, m.rule, heat=m.heat) for m in record_moves)
        idle = [m.key for m in plan.moves if m.src is Tier.HOT and m.key]
        if idle:
            with self.hot.editing() as entries:
                old = [(key, entries.pop(key), "hot_idle") for key in idle if key in entries]
            self._demote_entries(old, now)
        for rid, value in plan.hot_candidates[:20]:
            self._add_candidate(rid, None, "heat", round(value, 2))

    def moves(self, rid: str | None = None, limit: int = 100) -> list[Move]:
        return self.ledger.moves(rid, limit)

    def heat_of(self, rid: str, now: datetime) -> float:
        record = self.get(rid)
        row = {"occurred_at": record.occurred_at}
        return record_heat(row, self.ledger.usage([rid]).get(rid), now, self.settings.rules)

    def stats(self) -> dict[str, Any]:
        files, size = self.store.files()
        return {
            "folder": str(self.folder),
            "model": self.embedder.name,
            "hot_entries": len(self.hot.entries()),
            "hot_tokens": self.hot.tokens(),
            "hot_cap_tokens": self.hot.cap_tokens,
            "warm": self.store.count(Tier.WARM),
            "cold": self.store.count(Tier.COLD),
            "lance_files": files,
            "lance_bytes": size,
            "lance_versions": self.store.versions(),
        }


def reembed(folder: Path, embedder: Embedder, batch: int = 256) -> int:
    """Re-embed every record of the store in `folder` with `embedder`, keeping ids, tiers and history."""
    with file_lock(folder / "write.lock"):
        store = Store.as_recorded(folder)
        rows = [row for chunk in store.scan() for row in chunk]
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            vectors = embedder.embed([row["content"] for row in chunk])
            for row, vector in zip(chunk, vectors, strict=True):
                row["vector"] = vector.tolist()
        store.rebind(embedder.name, embedder.dim, rows)
    return len(rows)


def _micros(value: datetime | None) -> int | None:
    return None if value is None else int(as_utc(value).timestamp() * 1_000_000)


def _with(stored: Stored, **changes: Any) -> Stored:
    from dataclasses import replace

    return replace(stored, **changes)


def _entry_with(entry: Entry, **changes: Any) -> Entry:
    from dataclasses import replace

    return replace(entry, **changes)
