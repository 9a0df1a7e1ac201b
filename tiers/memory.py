"""The memory of one namespace: the hot profile, the warm and cold tiers, and the moves between them.

Every method takes `now`, so time is a parameter and a year can be simulated in seconds.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from tiers import recall as ranking
from tiers.candidates import Candidates
from tiers.classify import classify
from tiers.embedder import Embedder
from tiers.errors import InvalidInput, NotFound, ProfileCapExceeded
from tiers.heat import HeatRules, heat
from tiers.hot import Entry, HotProfile, check_key, with_value
from tiers.index import Scope
from tiers.ledger import Ledger, Move, Usage
from tiers.locking import DEFAULT_TIMEOUT, file_lock
from tiers.outcomes import Forgotten, ProfileChange, Promoted, Stored, SweepReport
from tiers.privacy import open_private
from tiers.records import MAX_BATCH, Kind, MemoryIn, Record, Tier, content_hash
from tiers.rules import Plan, hot_rid, plan_sweep, record_heat
from tiers.secrets import SecretPolicy, screen_memories, screen_values
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
    heat_candidates: int = 20
    recall: ranking.RecallSettings = field(default_factory=ranking.RecallSettings)
    secrets: SecretPolicy = SecretPolicy.REFUSE
    lock_timeout: float = DEFAULT_TIMEOUT  # seconds any lock of the data folder is waited for


@dataclass(frozen=True)
class _Origin:
    """Where a row written by the memory itself comes from (a demoted profile value), for the move log."""

    src: str
    rule: str
    key: str
    heat: float | None
    protected: bool


class Memory:
    """Hot profile + LanceDB tiers + ledger of one namespace in one folder."""

    def __init__(
        self,
        folder: Path,
        embedder: Embedder,
        settings: MemorySettings | None = None,
        new_id: Callable[[], str] = lambda: secrets.token_hex(6),
    ) -> None:
        """`new_id` makes record ids, injectable like the clock so that a simulation is reproducible."""
        self.folder = folder
        self._new_id = new_id
        self.embedder = embedder
        self.settings = settings or MemorySettings()
        open_private(folder)  # privacy: 0700/0600, also for what LanceDB writes (tiers/privacy.py)
        self.hot = HotProfile(folder / "profile.json", self.settings.cap_tokens, self.settings.lock_timeout)
        self.ledger = Ledger(folder / "ledger.sqlite")
        self._lock_path = folder / "write.lock"
        self._store: Store | None = None
        self._profile_vectors: dict[str, np.ndarray] = {}
        self._candidates = Candidates(self.ledger, self.hot, lambda: self.store, self.settings.heat_candidates)

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(
                self.folder,
                self.embedder.name,
                self.embedder.dim,
                compact_every=self.settings.compact_every,
                lock_timeout=self.settings.lock_timeout,
            )
        return self._store

    def close(self) -> None:
        self.ledger.close()

    # remember

    def remember(self, items: Sequence[MemoryIn], now: datetime) -> list[Stored]:
        """Store memories; a repeat of a stored memory refreshes it instead of adding a row.

        Each memory is classified as it is stored; a durable one is protected from going cold, and one
        with a profile key (the agent's, or a plain name) also goes into the hot profile, or, when the
        profile is full, becomes a visible candidate for it.
        """
        if not items:
            raise InvalidInput("give at least one memory to remember")
        if len(items) > MAX_BATCH:
            raise InvalidInput(f"a batch holds at most {MAX_BATCH} memories; this one has {len(items)}: split it")
        # secrets: refused or redacted here, before anything is classified, embedded or written
        items = screen_memories(items, self.settings.secrets)
        prepared = [self._prepare(item, now) for item in items]
        if any(item.key or row["_key"] for item, row in zip(items, prepared, strict=True)):
            self.hot.entries()  # a corrupt profile fails the call here, before any row is stored
        results = self._write(prepared, now)
        return self._apply_profile_hints(items, prepared, results, now)

    def _write(
        self, prepared: list[dict[str, Any]], now: datetime, origins: Sequence[_Origin] | None = None
    ) -> list[Stored]:
        """Embed and add new rows in one batch; a repeated memory is touched (and re-warmed) instead."""
        vectors = self.embedder.embed([row["content"] for row in prepared])
        results: list[Stored] = []
        moves: list[Move] = []
        repeats: list[str] = []
        rewarm: list[str] = []
        protect: list[str] = []
        with file_lock(self._lock_path, self.settings.lock_timeout):
            store = self.store
            existing = store.find_hashes([p["hash"] for p in prepared])
            fresh: list[dict[str, Any]] = []
            seen: dict[str, str] = {}
            for index, (row, vector) in enumerate(zip(prepared, vectors, strict=True)):
                origin = origins[index] if origins else None
                if row["hash"] in existing or row["hash"] in seen:
                    rid, tier = existing.get(row["hash"], (seen.get(row["hash"], ""), Tier.WARM))
                    if origin is not None:  # a demoted profile value already stored: that record holds it again
                        moves.append(Move(now, rid, origin.src, "warm", origin.rule, origin.heat, origin.key))
                        if origin.protected:
                            protect.append(rid)
                    else:
                        repeats.append(rid)
                    if tier is Tier.COLD and rid not in rewarm:
                        rewarm.append(rid)
                    results.append(Stored(rid, Tier.WARM, Kind(row["kind"]), row["protected"], duplicate_of=rid))
                    continue
                row["vector"] = vector.tolist()
                seen[row["hash"]] = row["id"]
                fresh.append(row)
                if origin is not None:
                    row["protected"] = origin.protected
                    moves.append(Move(now, row["id"], origin.src, "warm", origin.rule, origin.heat, origin.key))
                else:
                    born = heat(0, 0, row["occurred_at"], now, self.settings.rules)
                    moves.append(Move(now, row["id"], "new", "warm", f"remember:{row['kind']}", round(born, 4)))
                results.append(Stored(row["id"], Tier.WARM, Kind(row["kind"]), row["protected"]))
            store.add([{k: v for k, v in row.items() if not k.startswith("_")} for row in fresh])
            store.set_tier(rewarm, Tier.WARM)
            store.protect(protect)
            if fresh:
                written = self.ledger.bump("rows_written", len(fresh))
                store.after_write(written - len(fresh), written)
        self.ledger.touch(repeats, now, repeat=True)
        said_again = [rid for rid in rewarm if rid in repeats]
        usage = self.ledger.usage(said_again)
        moves += [
            Move(now, rid, "cold", "warm", "repeated", self._usage_heat(usage.get(rid), now)) for rid in said_again
        ]
        self.ledger.log(moves)
        return results

    def _prepare(self, item: MemoryIn, now: datetime) -> dict[str, Any]:
        found = classify(item.content, item.kind)
        metadata = dict(item.metadata)
        if found.key and not item.key:
            metadata.setdefault("profile_key", found.key)
        if item.key:
            metadata.setdefault("profile_key", item.key)
        return {
            "id": self._new_id(),
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
            # The rules key only a name; the model reads it every turn without recalling it, so it is pinned.
            pin = () if item.key else (key,)
            try:
                self.set_profile({key: value}, now, pin=pin, sources={key: (stored.id,)}, rule="remember")
            except ProfileCapExceeded as exc:
                # Never dropped in silence: the fact stays warm and protected, and `profile` lists it.
                self.ledger.link(key, [(stored.id, value)])
                self._candidates.add(stored.id, key, "profile full", value=value)
                note = f"kept warm and protected; a candidate for the profile as {key!r}, which is full: {exc}"
                out.append(_with(stored, note=note))
                continue
            except InvalidInput as exc:
                out.append(_with(stored, note=f"kept warm and protected, not put in the profile: {exc}"))
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
        *,
        src: Tier = Tier.WARM,
        heat_then: float | None = None,
    ) -> ProfileChange:
        """Change the profile; a replaced or removed value goes down to warm as a record, never lost.

        `src` and `heat_then` describe, for the move log, the record a value came from.
        """
        # secrets: refused or redacted here, before anything is written
        values = screen_values(values, self.settings.secrets)
        sources = sources or {}
        moves: list[Move] = []
        changed: list[str] = []
        with self.hot.editing() as entries:
            before = dict(entries)
            for key in [*unset, *pin, *unpin]:
                if key not in entries and key not in values:
                    raise NotFound(f"no profile entry {key!r}; entries are: {', '.join(sorted(entries)) or 'none'}")
            old: list[tuple[str, Entry, str]] = []
            for key, value in values.items():
                check_key(key)
                prior = entries.get(key)
                given = sources.get(key, ())
                entries[key] = with_value(prior, value, now, given)
                if prior is not None and prior.value != value:
                    old.append((key, prior, "superseded"))
                if prior is None or prior.value != value:
                    changed.append(key)
                if prior is None or prior.value != value or not set(given) <= set(prior.sources):
                    who = given[0] if given else hot_rid(key)
                    moves.append(
                        Move(now, who, src.value if given else "new", "hot", rule, heat_then, key, value[:200])
                    )
            for key in unset:
                old.append((key, entries.pop(key), "unset"))
            for key in pin:
                entries[key] = _entry_with(entries[key], pinned=True)
            for key in unpin:
                entries[key] = _entry_with(entries[key], pinned=False)
            self.hot.check_cap(before, entries)
            # The old values are written to warm before the new profile is: a crash in between loses nothing.
            demoted = self._demote_entries(old, now)
            after = dict(entries)
        for key, value in values.items():
            self._mark_superseded(key, value, sources.get(key, ()), now, key in changed)
        self.ledger.log(moves)
        self.ledger.touch([hot_rid(k) for k in values], now)
        return ProfileChange(after, self.hot.tokens(after), self.hot.cap_tokens, demoted, self.candidates())

    def _mark_superseded(self, key: str, value: str, given: Sequence[str], now: datetime, changed: bool) -> None:
        """Records that stated another value of `key` are superseded by this one; those stating it are current."""
        linked = self.ledger.linked(key)
        self.ledger.link(key, [(rid, value) for rid in given])
        if not changed:
            return
        records = self.store.get(list(dict.fromkeys([*linked, *given])))
        stale = [r for r, v in linked.items() if r in records and r not in given and v != value]
        stale = [r for r in stale if not records[r].superseded_by]
        now_current = [r for r in records if r in given or linked.get(r) == value]
        current = [r for r in now_current if records[r].superseded_by]
        if stale or current:
            with file_lock(self._lock_path, self.settings.lock_timeout):
                self.store.supersede(stale, given[0] if given else f"profile:{key}", now)
                self.store.supersede(current, None, None)

    def _demote_entries(
        self, old: list[tuple[str, Entry, str]], now: datetime, heats: dict[str, float] | None = None
    ) -> tuple[str, ...]:
        """Write replaced, removed or idle profile values down to warm, with their sources and when they were set."""
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
        origins = [
            # A value demoted for being idle is still the user's current one: it stays protected from going cold.
            _Origin("hot", why, key, (heats or {}).get(key), protected=why == "hot_idle")
            for key, _, why in old
        ]
        stored = self._write([self._prepare(item, now) for item in items], now, origins)
        for (key, entry, _), result in zip(old, stored, strict=True):
            self.ledger.link(key, [(result.id, entry.value)])
        return tuple(r.id for r in stored)

    def profile(self) -> dict[str, Entry]:
        return self.hot.entries()

    def candidates(self) -> tuple[dict[str, Any], ...]:
        """Records proposed for the profile, less those already in it, forgotten or superseded since."""
        return self._candidates.listed()

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
        forms = ranking.query_forms(query, self.settings.recall)
        vectors = self.embedder.embed(forms)
        vector = vectors[0]
        ranked: list[ranking.Ranked] = []
        if searched:
            scope = Scope(searched, tuple(tags), _micros(since), _micros(until))
            ranked = self.rank(forms, vectors, scope, limit, cold_penalty=default)
        profile = self._matching_profile(query, vector) if Tier.HOT in wanted or default else {}
        packed = ranking.pack(ranked, profile, limit, max_tokens, self.settings.recall.grouped)
        self.ledger.touch([h.record.id for h in packed.hits], now)
        self.ledger.touch([hot_rid(k) for k in packed.profile], now)
        return packed

    def rank(
        self, forms: list[str], vectors: np.ndarray, scope: Scope, limit: int, cold_penalty: bool
    ) -> list[ranking.Ranked]:
        """The best `limit` records in `scope` for a query's forms and their vectors; counts no use."""
        index = self.store.index()
        kinds = ranking.asked_kinds(
            self._vectors_of(list(ranking.KIND_NAMES.values())), vectors, self.settings.recall.kind_match
        )
        found = ranking.rank(
            index, vectors, forms[-1], index.mask(scope), self.settings.recall, limit, cold_penalty, kinds
        )
        records = self.store.records(index, [position for position, _, _ in found])
        return [
            ranking.Ranked(record, score, similarity)
            for record, (_, score, similarity) in zip(records, found, strict=True)
        ]

    def _vectors_of(self, texts: list[str]) -> np.ndarray:
        """Vectors of short texts recall compares queries with (profile entries, kind names), embedded once."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._profile_vectors]
        if missing:
            for text, vec in zip(missing, self.embedder.embed(missing), strict=True):
                self._profile_vectors[text] = vec
        return np.stack([self._profile_vectors[t] for t in texts])

    def _matching_profile(self, query: str, vector: np.ndarray) -> dict[str, Entry]:
        entries = self.hot.entries()
        if not entries:
            return {}
        texts = {key: f"{key.replace('_', ' ').replace('.', ' ')}: {e.value}" for key, e in entries.items()}
        self._vectors_of(list(texts.values()))
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
        """Move a record up: cold to warm, or into the profile as an entry sourced by it.

        This is also how any move is undone: a record gone cold comes back with `to=warm`, and a profile
        value that went down to warm (its history record keeps the key) comes back with `to=hot`.
        """
        record = self.get(rid)
        to = Tier(to)
        if to is Tier.COLD:
            raise InvalidInput("promote moves records up (to warm or hot); records go cold by the timer")
        heat_then = round(self.heat_of(rid, now), 4)
        if to is Tier.WARM:
            if record.tier is Tier.WARM:
                return Promoted(rid, Tier.WARM, "already_warm", src=Tier.WARM)
            with file_lock(self._lock_path, self.settings.lock_timeout):
                self.store.set_tier([rid], Tier.WARM)
            self.ledger.log([Move(now, rid, record.tier.value, "warm", "promote", heat_then)])
            self.ledger.touch([rid], now)
            return Promoted(rid, Tier.WARM, "promoted", src=record.tier)
        key = key or record.metadata.get("profile_key")
        if not key:
            raise InvalidInput("promoting to hot needs a profile key, e.g. key='diet.allergy'")
        value = record.content
        given: tuple[str, ...] = (rid,)
        if record.kind is Kind.HISTORY and value.startswith(f"{key}: "):
            value = value[len(key) + 2 :]
            earlier = [s for s in str(record.metadata.get("sources", "")).split() if s != rid]
            still_stored = self.store.get(earlier)
            given += tuple(s for s in earlier if s in still_stored)
        current = self.hot.entries().get(key)
        if current is not None and current.value == value and rid in current.sources:
            return Promoted(rid, Tier.HOT, "already_hot", key, src=Tier.HOT)
        self.set_profile({key: value}, now, sources={key: given}, rule="promote", src=record.tier, heat_then=heat_then)
        if record.tier is Tier.COLD:
            with file_lock(self._lock_path, self.settings.lock_timeout):
                self.store.set_tier([rid], Tier.WARM)
        self.ledger.touch([rid], now)
        self._candidates.drop([rid])
        return Promoted(rid, Tier.HOT, "promoted", key, src=record.tier)

    def forget(self, rid: str, now: datetime) -> Forgotten:
        """Delete a record from every tier and from search; profile entries it alone sourced are named."""
        record = self.get(rid)
        self.hot.entries()  # a corrupt profile fails the call here, before the row is deleted
        heat_then = round(self.heat_of(rid, now), 4)
        with file_lock(self._lock_path, self.settings.lock_timeout):
            self.store.delete(rid)
        self.ledger.forget(rid)
        self.ledger.log([Move(now, rid, record.tier.value, "gone", "forget", heat_then)])
        self._candidates.drop([rid])
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
        """What a sweep as of `now` would do, changing nothing."""
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
        if record_moves:
            with file_lock(self._lock_path, self.settings.lock_timeout):
                for dst in (Tier.COLD, Tier.WARM):
                    self.store.set_tier([m.rid for m in record_moves if m.dst is dst], dst)
                self.store.compact()
            self.ledger.log(
                Move(now, m.rid, m.src.value, m.dst.value, m.rule, heat=round(m.heat, 4)) for m in record_moves
            )
        idle = {m.key: round(m.heat, 4) for m in plan.moves if m.src is Tier.HOT and m.key}
        if idle:
            with self.hot.editing() as entries:
                old = [(key, entries[key], "hot_idle") for key in idle if key in entries]
                self._demote_entries(old, now, idle)  # written to warm before the entries leave the profile
                for key, _, _ in old:
                    del entries[key]
        self._candidates.refresh(plan)

    def moves(self, rid: str | None = None, limit: int = 100) -> list[Move]:
        """The move log, newest first: all of it, or one record's (with the profile entries it stated) or one key's."""
        return self.ledger.moves(rid, limit)

    def heat_of(self, rid: str, now: datetime) -> float:
        record = self.get(rid)
        row = {"occurred_at": record.occurred_at}
        return record_heat(row, self.ledger.usage([rid]).get(rid), now, self.settings.rules)

    def _usage_heat(self, usage: Usage | None, now: datetime) -> float | None:
        if usage is None:
            return None
        return round(heat(usage.uses, usage.repeats, usage.last_touch, now, self.settings.rules), 4)

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


def _micros(value: datetime | None) -> int | None:
    return None if value is None else int(as_utc(value).timestamp() * 1_000_000)


def _with(stored: Stored, **changes: Any) -> Stored:
    from dataclasses import replace

    return replace(stored, **changes)


def _entry_with(entry: Entry, **changes: Any) -> Entry:
    from dataclasses import replace

    return replace(entry, **changes)
