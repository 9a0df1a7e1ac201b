"""The write path: prepare a memory (pure), merge a repeat into what is stored (pure), write under the lock,
and answer with what is now stored.

A repeat never adds a row: what it adds (tags, metadata, a stronger kind, protection, a deadline)
is merged into the stored record, and the answer describes the record as it now is on disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from tiers.errors import InvalidInput, NotFound, ProfileCapExceeded
from tiers.index.store import new_row
from tiers.lifecycle.classify import classify
from tiers.lifecycle.heat import heat
from tiers.model.embedder import cosine_scale, embed_memories, is_long
from tiers.namespace.outcomes import Earlier, Stored
from tiers.namespace.parts import Parts
from tiers.privacy.secrets import screen_memories
from tiers.recall import updates
from tiers.records import DURABLE_KINDS, MAX_BATCH, Kind, MemoryIn, Record, Tier, content_hash
from tiers.storage.ledger import Move
from tiers.text.terms import language, words
from tiers.text.timeparse import parse_deadline, parse_time

HINT_BATCH = 16  # a batch larger than this (an import) is not searched for the memories it may update
HINT_NEAREST = 8  # the nearest records by meaning in each tier a new memory is compared with
HINT_SHOWN = 3  # earlier memories named for one new memory, the closest first


@dataclass(frozen=True)
class Prepared:
    """A memory ready to be written: the record it would become, and what the agent said explicitly."""

    record: Record
    hash: str
    explicit_kind: bool
    given_metadata: dict[str, Any]
    given_deadline: bool
    profile_key: str | None  # the profile entry this memory states, if any
    profile_value: str | None
    pinned: bool  # a name found by the rules is pinned: the model reads it every turn without asking


@dataclass(frozen=True)
class Origin:
    """Where a row written by the memory itself comes from (a demoted profile value), for the move log."""

    src: str
    rule: str
    key: str
    heat: float | None
    protected: bool


def prepare(item: MemoryIn, now: datetime, rid: str) -> Prepared:
    """Classify and normalise one memory; touches nothing."""
    found = classify(item.content, item.kind)
    metadata: dict[str, Any] = dict(item.metadata)
    key = item.key or (found.key if found.value else None)
    if item.key or found.key:
        metadata.setdefault("profile_key", item.key or found.key)
    record = Record(
        id=rid,
        content=item.content,
        tier=Tier.WARM,
        kind=found.kind,
        protected=found.durable or item.key is not None,
        occurred_at=parse_time(item.occurred_at, "occurred_at") if item.occurred_at else now,
        created_at=now,
        tags=tuple(dict.fromkeys(item.tags)),
        metadata=metadata,
        source=item.source,
        forget_after=parse_deadline(item.forget_after, now) if item.forget_after else None,
    )
    return Prepared(
        record=record,
        hash=content_hash(item.content),
        explicit_kind=item.kind is not None,
        given_metadata=metadata,
        given_deadline=item.forget_after is not None,
        profile_key=key,
        profile_value=item.content if item.key else found.value,
        pinned=key is not None and not item.key,
    )


def stronger_kind(stored: Kind, new: Kind, explicit: bool) -> Kind:
    """A durable kind beats a passing one whatever was said; otherwise the agent's explicit kind wins."""
    if new == stored:
        return stored
    if (new in DURABLE_KINDS) != (stored in DURABLE_KINDS):
        return new if new in DURABLE_KINDS else stored
    return new if explicit and stored is not Kind.HISTORY else stored


def merge(stored: Record, new: Prepared) -> dict[str, Any]:
    """The fields a repeat changes on the stored record (empty when it adds nothing).

    Tags are joined; metadata is joined, the repeat's value winning for a key given twice; the kind
    is the stronger (`stronger_kind`); protection is only ever added; the repeat's deadline, when it
    gives one, replaces the stored one; the stored text, times and source stay.
    """
    changes: dict[str, Any] = {}
    tags = tuple(dict.fromkeys(stored.tags + new.record.tags))
    if tags != stored.tags:
        changes["tags"] = tags
    metadata = {**stored.metadata, **new.given_metadata}
    if metadata != stored.metadata:
        changes["metadata"] = metadata
    kind = stronger_kind(stored.kind, new.record.kind, new.explicit_kind)
    if kind is not stored.kind:
        changes["kind"] = kind
    if new.record.protected and not stored.protected:
        changes["protected"] = True
    if new.given_deadline and new.record.forget_after != stored.forget_after:
        changes["forget_after"] = new.record.forget_after
    if stored.source is None and new.record.source is not None:
        changes["source"] = new.record.source
    return changes


class Writer:
    """Stores memories of one namespace."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def remember(self, items: Sequence[MemoryIn], now: datetime, set_profile: Any) -> list[Stored]:
        """Store memories; a repeat of a stored memory is merged into it instead of adding a row.

        Each memory is classified as it is stored; a durable one is protected from going cold, and one
        with a profile key (the agent's, or a plain name) also goes into the hot profile through
        `set_profile`, or, when the profile is full, becomes a visible candidate for it.
        """
        if not items:
            raise InvalidInput("give at least one memory to remember")
        if len(items) > MAX_BATCH:
            raise InvalidInput(f"a batch holds at most {MAX_BATCH} memories; this one has {len(items)}: split it")
        items = screen_memories(items, self.parts.settings.secrets)  # before anything is embedded or written
        prepared = [prepare(item, now, self.parts.new_id()) for item in items]
        if any(p.profile_key for p in prepared):
            self.parts.hot.entries()  # a corrupt profile fails the call here, before any row is stored
        replaced = self._check_supersedes(items)  # an unknown id fails the call before any row is stored
        results = self.write(prepared, now)
        results = self._confirm_updates(items, results, replaced, now)
        results = self._hint_updates(results)
        return [self._into_profile(p, s, now, set_profile) for p, s in zip(prepared, results, strict=True)]

    def _check_supersedes(self, items: Sequence[MemoryIn]) -> dict[str, Record]:
        """The earlier records the batch says it replaces; an id not stored is an error the agent can act on."""
        wanted = list(dict.fromkeys(rid for item in items for rid in item.supersedes))
        if not wanted:
            return {}
        found = self.parts.store.get(wanted)
        missing = [rid for rid in wanted if rid not in found]
        if missing:
            raise NotFound(
                f"supersedes names {', '.join(missing)}, which no stored memory has; nothing was stored. "
                "Give the ids recall or remember returned (a forgotten memory cannot be superseded)."
            )
        return found

    def _confirm_updates(
        self, items: Sequence[MemoryIn], results: list[Stored], replaced: dict[str, Record], now: datetime
    ) -> list[Stored]:
        """Each memory the agent said a new one replaces is marked superseded by it (kept, ranked as history),
        the new one says which it replaces in its metadata, and the move log has 'supersedes'."""
        if not replaced:
            return results
        parts, store = self.parts, self.parts.store
        out: list[Stored] = []
        moves: list[Move] = []
        with parts.locked():
            for item, result in zip(items, results, strict=True):
                olds = [replaced[rid] for rid in item.supersedes if rid != result.id]
                if not olds:
                    out.append(result)
                    continue
                store.update(olds, {"superseded_by": result.id, "superseded_at": now})
                new = store.get([result.id]).get(result.id)
                if new is not None:
                    earlier = str(new.metadata.get("supersedes", "")).split()
                    joined = " ".join(dict.fromkeys([*earlier, *(old.id for old in olds)]))
                    store.update([new], {"metadata": {**new.metadata, "supersedes": joined}})
                for old in olds:
                    tier = old.tier.value
                    moves.append(Move(now, old.id, tier, tier, "supersedes", note=f"by {result.id}"))
                out.append(replace(result, supersedes=tuple(old.id for old in olds)))
        parts.ledger.log(moves)
        return out

    def _hint_updates(self, results: list[Stored]) -> list[Stored]:
        """Each new memory (of a batch of at most HINT_BATCH) with the earlier memories it may update."""
        fresh = [r for r in results if r.duplicate_of is None]
        if not fresh or len(results) > HINT_BATCH:
            return results
        store = self.parts.store
        vectors = store.vectors([r.id for r in fresh])
        asked = [r for r in fresh if r.id in vectors]
        if not asked:
            return results
        batch = {r.id for r in results}
        stored = store.get([r.id for r in asked])
        newer = [stored.get(r.id) for r in asked]
        found = self._earlier(newer, np.stack([vectors[r.id] for r in asked]), batch, [r.supersedes for r in asked])
        hints = {r.id: tuple(e) for r, e in zip(asked, found, strict=True) if e}
        # Kept, so a later recall that finds only the older memory can show the later word beside it; only for a
        # memory stored on its own, as an agent states a fact. The turns of a conversation stored together join no
        # recall by it: there the later turns took the places of what questions asked (docs/updates.md).
        named = [(e.id, rid) for rid, earlier in hints.items() for e in earlier] if len(results) == 1 else []
        if named:
            self.parts.ledger.hint(named, max(r.created_at for r in newer if r is not None and r.id in hints))
        self._flag_entries(hints, {r.id: r for r in newer if r is not None})
        return [replace(r, may_update=hints[r.id]) if r.id in hints else r for r in results]

    def updates_held(self, items: Sequence[MemoryIn], now: datetime) -> list[bool]:
        """Whether each of these memories, not yet stored, may update one stored here (the rule `remember` names
        earlier memories by): where a memory goes that is the later word on one of them. Reads only."""
        asked = [i for i, item in enumerate(items) if updates.says_change(item.content) and not is_long(item.content)]
        held = [False] * len(items)
        if not asked or len(items) > HINT_BATCH or not self.parts.store.count():
            return held
        texts = [items[i].content for i in asked]
        newer: list[Record | None] = [replace(prepare(items[i], now, "").record, id="") for i in asked]
        found = self._earlier(newer, self.parts.embedder.embed(texts), set(), [() for _ in asked])
        for i, earlier in zip(asked, found, strict=True):
            held[i] = bool(earlier)
        return held

    def _earlier(
        self,
        newer: Sequence[Record | None],
        vectors: np.ndarray,
        skip: set[str],
        supersedes: Sequence[Sequence[str]],
    ) -> list[list[Earlier]]:
        """For each new memory (its record and vector), the stored ones it may update, at most HINT_SHOWN; none
        of `skip` (its own batch) nor of those it supersedes already."""
        store = self.parts.store
        near = store.nearest(np.atleast_2d(vectors), HINT_NEAREST)
        wanted = list(dict.fromkeys(rid for found in near for rid, _ in found if rid not in skip))
        records = store.get(wanted)
        said = [t for r in [*records.values(), *(n for n in newer if n is not None)] for t in words(r.content)]
        common = store.common_terms(said, updates.COMMON_SHARE, updates.COMMON_FROM)
        scale = cosine_scale(self.parts.embedder)

        # A plain statement before a memory that itself reports a change, each part closest first: the other
        # updates said in the same words about other subjects ("New address for Lena: ... since the move" for
        # "New address for Wen: ...") are closer than the fact the new one changes ("Wen lives in Melbourne").
        def reports_a_change(item: tuple[str, float]) -> tuple[bool, float]:
            older = records.get(item[0])
            return (older is not None and updates.says_change(older.content), -item[1])

        out: list[list[Earlier]] = []
        for record, found, replaced in zip(newer, near, supersedes, strict=True):
            earlier: list[Earlier] = []
            out.append(earlier)
            # Named only where the new memory says that something changed: close meaning alone named a sibling
            # note ("the train to Riga was late" for "the train to Stockholm was late") for most new notes.
            if record is None or not updates.says_change(record.content):
                continue
            terms = set(words(record.content))
            written = language(record.content) if scale.memories_in else None  # one language: its own stretch
            for rid, cosine in sorted(dict(found).items(), key=reports_a_change):
                older = records.get(rid)
                if older is None or rid in skip or older.superseded_by or rid in replaced or rid == record.id:
                    continue
                same = written if written is not None and written == language(older.content) else None
                close = scale.between_memories(cosine, same)
                if updates.may_update(record, older, close, terms, common):
                    earlier.append(Earlier(older.id, older.occurred_at, older.content))
            del earlier[HINT_SHOWN:]
        return out

    def _flag_entries(self, hints: dict[str, tuple[Earlier, ...]], records: dict[str, Record]) -> None:
        """A hot entry made from a memory a new one may update is flagged, and the move log says so."""
        if not hints:
            return
        parts = self.parts
        entries = parts.hot.entries()
        moves = []
        for rid, earlier in hints.items():
            named = {e.id for e in earlier}
            for key, entry in entries.items():
                source = next((s for s in entry.sources if s in named), None)
                if source is None:
                    continue
                newer = records[rid]
                parts.flags.add(key, rid, newer.content, source, newer.created_at)
                moves.append(Move(newer.created_at, source, "hot", "hot", "flagged", key=key, note=f"by {rid}"))
        parts.ledger.log(moves)

    def write(
        self, prepared: Sequence[Prepared], now: datetime, origins: Sequence[Origin] | None = None
    ) -> list[Stored]:
        """Embed and add new records in one batch; a repeat is merged into the stored record (and re-warmed)."""
        parts = self.parts
        store = parts.store
        known = store.find_hashes([p.hash for p in prepared])
        vectors = _embed_missing(parts, prepared, known)
        with parts.locked():
            existing = store.find_hashes([p.hash for p in prepared])
            need = [p for p in prepared if p.hash not in existing and p.hash not in vectors]
            vectors.update(_embed_missing(parts, need, {}))
            plan = _Plan()
            for index, item in enumerate(prepared):
                origin = origins[index] if origins else None
                plan.place(item, existing, origin, now, parts)
            # A microsecond apart, the records of one batch keep their order through every later rewrite
            # of the table, so recall can lend a hit's score to the ones said just before and after it.
            fresh = [
                new_row(
                    replace(plan.fresh[h], created_at=plan.fresh[h].created_at + timedelta(microseconds=i)),
                    h,
                    *vectors[h],
                )
                for i, h in enumerate(plan.fresh_order)
            ]
            store.add(fresh)
            stored = store.get(list(plan.repeats)) if plan.repeats else {}
            for rid, changes in plan.merged(stored).items():
                store.update([stored[rid]], changes)
            cold = [rid for rid in plan.repeats if rid in stored and stored[rid].tier is Tier.COLD]
            if fresh:
                written = parts.ledger.bump("rows_written", len(fresh))
                store.after_write(written - len(fresh), written)
            usage = parts.ledger.usage([rid for rid in cold if rid in plan.said_again])
            store.move(
                [
                    Move(now, rid, "cold", "warm", "repeated", _usage_heat(parts, usage.get(rid), now))
                    if rid in plan.said_again
                    else Move(now, rid, "cold", "warm", plan.rule_of[rid])
                    for rid in cold
                ]
            )
            # The new records as written (reading them back would make each row of the index again), the
            # repeats as they now are.
            written_now = {record.id: record for record in plan.fresh.values()}
            rest = [rid for rid in plan.id_of.values() if rid not in written_now]
            now_stored = written_now | (store.get(rest) if rest else {})
        parts.ledger.touch(plan.said_again, now, repeat=True)
        parts.ledger.log(plan.moves)
        return [plan.outcome(item, now_stored) for item in prepared]

    def _into_profile(self, prepared: Prepared, stored: Stored, now: datetime, set_profile: Any) -> Stored:
        key = prepared.profile_key
        if not key or prepared.profile_value is None:
            return stored
        value = prepared.profile_value
        parts = self.parts
        try:
            set_profile({key: value}, now, pin=(key,) if prepared.pinned else (), sources={key: (stored.id,)})
        except ProfileCapExceeded as exc:
            # Never dropped in silence: the fact stays warm and protected, and `profile` lists it.
            parts.ledger.link(key, [(stored.id, value)])
            parts.candidates.add(stored.id, key, "profile full", value=value)
            note = f"kept warm and protected; a candidate for the profile as {key!r}, which is full: {exc}"
            return replace(stored, note=note)
        except InvalidInput as exc:
            return replace(stored, note=f"kept warm and protected, not put in the profile: {exc}")
        return replace(stored, tier=Tier.HOT, profile_key=key)


class _Plan:
    """What one batch does: which memories are new, which repeat a stored one, and what gets logged."""

    def __init__(self) -> None:
        self.fresh: dict[str, Record] = {}
        self.fresh_order: list[str] = []
        self.id_of: dict[str, str] = {}
        self.repeats: dict[str, list[Prepared]] = {}
        self.said_again: list[str] = []
        self.rule_of: dict[str, str] = {}  # why a repeat that is not the agent's (a demoted value) is stored again
        self.moves: list[Move] = []

    def place(
        self, item: Prepared, existing: dict[str, tuple[str, Tier]], origin: Origin | None, now: datetime, parts: Parts
    ) -> None:
        digest = item.hash
        if digest in existing or digest in self.fresh:
            rid = existing[digest][0] if digest in existing else self.fresh[digest].id
            self.id_of[digest] = rid
            if origin is not None:  # a demoted profile value already stored: that record holds it again
                self.moves.append(Move(now, rid, origin.src, "warm", origin.rule, origin.heat, origin.key))
                self.rule_of[rid] = origin.rule
                item = replace(item, record=replace(item.record, protected=origin.protected))
            elif rid not in self.said_again:
                self.said_again.append(rid)
            if digest in self.fresh:
                merged = merge(self.fresh[digest], item)
                self.fresh[digest] = replace(self.fresh[digest], **merged)
            else:
                self.repeats.setdefault(rid, []).append(item)
            return
        record = item.record
        if origin is not None:
            record = replace(record, protected=origin.protected)
            self.moves.append(Move(now, record.id, origin.src, "warm", origin.rule, origin.heat, origin.key))
        else:
            born = heat(0, 0, record.occurred_at, now, parts.settings.rules)
            self.moves.append(Move(now, record.id, "new", "warm", f"remember:{record.kind.value}", round(born, 4)))
        self.fresh[digest] = record
        self.fresh_order.append(digest)
        self.id_of[digest] = record.id

    def merged(self, stored: dict[str, Record]) -> dict[str, dict[str, Any]]:
        """For each repeated record, the fields its repeats change."""
        out: dict[str, dict[str, Any]] = {}
        for rid, items in self.repeats.items():
            record = stored.get(rid)
            if record is None:
                continue
            changes: dict[str, Any] = {}
            for item in items:
                step = merge(replace(record, **changes), item)
                changes.update(step)
            if changes:
                out[rid] = changes
        return out

    def outcome(self, item: Prepared, stored: dict[str, Record]) -> Stored:
        rid = self.id_of[item.hash]
        record = stored.get(rid, item.record)
        duplicate = rid if rid != item.record.id else None
        return Stored(rid, record.tier, record.kind, record.protected, duplicate_of=duplicate)


def _embed_missing(parts: Parts, prepared: Sequence[Prepared], known: dict[str, Any]) -> dict[str, Any]:
    """(vector, pieces) of the memories not already stored, by content hash (a repeat costs no embedding)."""
    texts: dict[str, str] = {}
    for item in prepared:
        if item.hash not in known and item.hash not in texts:
            texts[item.hash] = item.record.content
    if not texts:
        return {}
    made = embed_memories(parts.embedder, list(texts.values()))
    return dict(zip(texts, zip(made.vectors, made.pieces, strict=True), strict=True))


def _usage_heat(parts: Parts, usage: Any, now: datetime) -> float | None:
    if usage is None:
        return None
    return round(heat(usage.uses, usage.repeats, usage.last_touch, now, parts.settings.rules), 4)
