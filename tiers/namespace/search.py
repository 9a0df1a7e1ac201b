"""Search: one query against the warm tier and, when it can help, the cold tier.

Both tiers are searched in memory (tiers/index/warm.py, tiers/index/cold.py) by meaning and by words; the cold
rows found join the warm ones in one pool, ranked together, the rows stored just before and after the
best cold hits join from the cold index so they can be lent a share of their score as warm ones are,
and the cold records that rank are taken from the cold index: no read of the tables on the way.
One thread: searching cold in a second one while this one scores warm was no faster on two cores, as both
wait for the interpreter lock between their numpy passes and share the memory bus (docs/recall.md).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from tiers.errors import InvalidInput
from tiers.index import samples, signs
from tiers.index.cold_reads import ColdHits, Found, cold_scope
from tiers.index.warm import Scope, WarmIndex
from tiers.lifecycle.rules import hot_rid
from tiers.model import rerank
from tiers.model.embedder import cosine_scale, embed_queries, is_long, lists_kinds, words_weight
from tiers.model.embedder import pieces as pieces_of
from tiers.namespace.parts import Parts
from tiers.recall import rank as ranking
from tiers.recall import updates
from tiers.records import Record, Tier
from tiers.storage.hot import Entry
from tiers.text.terms import words
from tiers.text.timeparse import as_utc

PROFILE_MATCH = 0.35
# A word held by more than this share of the profile's entries (and by more than two) matches none by itself.
PROFILE_WORD_SHARE = 0.1
POOL_ALL_UP_TO = 20_000  # warm rows every query ranks in full; past this, only those that can rank
# Past POOL_ALL_UP_TO: warm rows taken by meaning, by words and among durable facts. At least recall's DEPTH,
# so every rank that counts in the fusion is the rank among all warm rows.
WARM_DEPTH = 1_000
NEAR_KEEP = 2 * WARM_DEPTH  # warm rows the sign codes keep per scope and query form for the exact cosine
COLD_DEPTH = 200  # cold rows each cold search returns to the pool (after a sweep, 100 lost evidence)
# The later memory `remember` last named for one of recall's first this many hits joins them (Search._hinted),
# at most this many in all: they take places in a recall of ten.
HINTED_WITHIN = 5
HINTS_JOINING = 3


@dataclass(frozen=True)
class Query:
    """A query as searched: its forms, their vectors, its terms, and what it may return."""

    text: str
    forms: list[str]
    vectors: np.ndarray
    terms: list[str]
    tiers: tuple[Tier, ...]
    tags: tuple[str, ...]
    since: datetime | None
    until: datetime | None
    default: bool  # default tiers: cold joins, a little below equally good warm rows


class Search:
    """Recall over one namespace."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

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
        thorough: bool = False,
    ) -> ranking.Packed:
        """The memories that best answer `query`, packed into `max_tokens`; each one returned counts as a use.

        `thorough`: at least the best rerank.THOROUGH candidates are read again by the cross-encoder, whatever
        RecallSettings.rerank says (an agent's second try, about a second; tiers/model/rerank.py)."""
        settings = self.parts.settings.recall
        depth = max(settings.rerank, rerank.THOROUGH) if thorough else settings.rerank
        parsed = self.parse(query, tiers, tags, since, until)
        wanted = parsed.default or Tier.HOT in (tiers or ())
        profile = self._matching_profile(query, parsed.vectors[0]) if wanted else {}
        # What the context holds already is not ranked again: the memories the entries shown here were made
        # from, or, when the host carries the profile, those of every entry (and none is shown).
        if settings.profile_carried:
            shown: dict[str, Entry] = {}
            entries = self.parts.hot.entries().values() if wanted else []
        else:
            shown = ranking.profile_shown(profile, limit, max_tokens)
            entries = shown.values()
        held = frozenset(rid for entry in entries for rid in entry.sources)
        # At least the window the later word of an update, or a hit holding the query's names, is looked for in, so
        # a recall of one finds it.
        wide = max(limit, depth, updates.WINDOW if settings.updates else 0)
        wide = max(wide, ranking.NAMED_WITHIN if settings.names_first else 0)
        ranked = self.rank(parsed, wide, held) if parsed.tiers else []
        if shown and ranked and not ranking.fits_beside(shown, ranked[0], limit, max_tokens, settings.grouped):
            # Under a budget the line never takes the best memory's place: without it, the memories its entries
            # were made from rank again. Decided before the cross-encoder reads them, so it reads them once.
            shown = {}
            ranked = self.rank(parsed, wide, frozenset())
        if depth and len(ranked) > 1:
            ranked = self.reranked(parsed, ranked[:depth]) + ranked[depth:]
        if settings.names_first:
            ranked = ranking.named_first(query, ranked)
        if settings.updates and len(ranked) > 1:
            ranked = self.later_first(parsed, ranked, reranked=bool(depth))
        ranked = ranked[:limit]
        terms, weight = parsed.terms, settings.excerpt_words
        scale = cosine_scale(self.parts.embedder)
        packed = ranking.pack(
            ranked, shown, limit, max_tokens, settings.grouped, terms, weight, settings.excerpt_span, scale
        )
        self.parts.ledger.touch([h.record.id for h in packed.hits], now)
        self.parts.ledger.touch([hot_rid(k) for k in profile if k in packed.profile or settings.profile_carried], now)
        return packed

    def later_first(self, query: Query, ranked: list[ranking.Ranked], reranked: bool = False) -> list[ranking.Ranked]:
        """The best hits with the later word of each update above its older one, each older one marked by it
        (tiers/recall/updates.py); a query about the past keeps their order, with the marks. `reranked`: the
        cross-encoder ordered them, and a later word is not lifted past hits by its cosine to the query.

        A later memory `remember` named as a possible update of one of the first hits (the ledger's hints) joins
        them where the query did not find it among the best, and stays only where the same rule pairs it with
        that hit."""
        window, pulled = self._hinted(query, ranked[: updates.WINDOW], ranked[updates.WINDOW :])
        ordered, later_of = self._later_first(query, window, reranked)
        # A named later memory the rule does not pair with the hit it was named for answers another question.
        dropped = {newer for newer, older in pulled.items() if later_of.get(older) != newer}
        if dropped:
            window = [hit for hit in window if hit.record.id not in dropped]
            ordered, _ = self._later_first(query, window, reranked)
        if not pulled:
            return ordered + ranked[updates.WINDOW :]
        stay = {hit.record.id for hit in ordered}
        return ordered + [hit for hit in ranked[updates.WINDOW :] if hit.record.id not in stay]

    def _later_first(
        self, query: Query, window: list[ranking.Ranked], reranked: bool
    ) -> tuple[list[ranking.Ranked], dict[str, str]]:
        """The window ordered and marked by tiers/recall/updates.py, and each older memory's later one, by id."""
        vectors = self.parts.store.vectors([hit.record.id for hit in window])
        known = [i for i, hit in enumerate(window) if hit.record.id in vectors]
        if len(known) < 2:
            return window, {}
        records = [window[i].record for i in known]
        said = [t for r in records for t in words(r.content)]
        common = self.parts.store.common_terms(said, updates.COMMON_SHARE, updates.COMMON_FROM)
        relevance = [window[i].similarity for i in known]
        placed, marks = updates.later_first(
            records,
            np.stack([vectors[r.id] for r in records]),
            relevance,
            updates.asks_past(query.text),
            common,
            cosine_scale(self.parts.embedder),
            lift=not reranked,
            query=query.text,
        )
        ordered = list(window)
        for place, chosen in zip(known, placed, strict=True):
            hit = window[known[chosen]]
            ordered[place] = replace(hit, later=marks[chosen]) if chosen in marks else hit
        return ordered, {records[older].id: later.id for older, later in marks.items()}

    def _hinted(
        self, query: Query, window: list[ranking.Ranked], rest: list[ranking.Ranked]
    ) -> tuple[list[ranking.Ranked], dict[str, str]]:
        """The window with the later memory last named as a possible update of each of its first HINTED_WITHIN
        hits (and of that one in turn), each just below the hit it was named for, or, for a question about the
        past, below them all, so the older memories it asks for keep their places. One ranked past the window
        comes up from there, any other is read. Returns the window and, for each memory that joined, the hit it
        was named for. A recall scoped by tags or time takes none (what it asked for is what it found)."""
        if query.tags or query.since or query.until:
            return window, {}
        past = updates.asks_past(query.text)
        further = {hit.record.id: hit for hit in rest}
        out = list(window)
        pulled: dict[str, str] = {}  # joined -> the hit it was named for
        asked = [hit.record.id for hit in window[:HINTED_WITHIN]]
        while asked and len(pulled) < HINTS_JOINING:
            named = self.parts.ledger.hinted(asked)
            shown = {hit.record.id for hit in out}
            wanted = {older: named[older][0] for older in asked if older in named and named[older][0] not in shown}
            unread = [newer for newer in wanted.values() if newer not in further]
            records = self.parts.store.get(unread) if unread else {}
            vectors = self.parts.store.vectors(unread) if unread else {}
            asked = []
            for older, newer in wanted.items():
                if newer in pulled or len(pulled) >= HINTS_JOINING:
                    continue
                place = next(i for i, h in enumerate(out) if h.record.id == older)
                if newer in further:
                    hit = further[newer]
                elif newer in records and newer in vectors:
                    record = records[newer]
                    if record.tier not in query.tiers or record.superseded_by:
                        continue
                    similarity = float(np.max(np.atleast_2d(query.vectors) @ vectors[newer]))
                    hit = ranking.Ranked(record, out[place].score, similarity)
                else:
                    continue
                out.insert(len(out) if past else place + 1, hit)
                pulled[newer] = older
                asked.append(newer)
        return out, pulled

    def reranked(self, query: Query, ranked: list[ranking.Ranked]) -> list[ranking.Ranked]:
        """`ranked` reordered by a cross-encoder's reading of each beside the query, fused with their order."""
        scores = rerank.shared().scores(query.text, [_as_read(hit) for hit in ranked])
        return rerank.fuse(ranked, scores)

    def parse(
        self,
        query: str,
        tiers: Sequence[Tier] | None,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Query:
        if not query.strip():
            raise InvalidInput("query is blank; say what to look for")
        settings = self.parts.settings.recall
        chosen = tuple(dict.fromkeys(tiers)) if tiers else (Tier.WARM, Tier.COLD)
        forms = ranking.query_forms(query, settings)
        vectors = embed_queries(self.parts.embedder, forms)
        terms = words(forms[-1]) + ranking.wants_time(query, settings)
        searched = tuple(t for t in chosen if t is not Tier.HOT)
        return Query(query, forms, vectors, terms, searched, tuple(tags), since, until, tiers is None)

    def rank(self, query: Query, limit: int, held: frozenset[str] = frozenset()) -> list[ranking.Ranked]:
        """The best `limit` records for a parsed query, none of the `held` ids; counts no use."""
        parts = self.parts
        settings = parts.settings.recall
        if (weight := words_weight(parts.embedder)) != 1.0:  # the words' weight beside this model's meaning
            settings = replace(settings, text_weight=settings.text_weight * weight)
        if not lists_kinds(parts.embedder):
            settings = replace(settings, kind_match=0.0)
        store = parts.store
        hits: ColdHits | None = None
        if Tier.COLD in query.tiers:
            scope = cold_scope(query.tags, query.since, query.until)
            depth = max(COLD_DEPTH, 2 * limit)
            hits = store.cold_reads.search(query.vectors, query.terms, depth, scope, settings.pieces)
        # A kind of the user's facts is listed only for a query about the user: "the identity team" is not "my
        # identity".
        names = parts.vectors_of(list(ranking.KIND_NAMES.values())) if ranking.about_user(query.text) else None
        scale = cosine_scale(parts.embedder)
        kinds = ranking.asked_kinds(names, query.vectors, settings.kind_match, scale) if names is not None else []
        with store.warm() as index:
            shared = settings.shared_words
            searched = Tier.WARM in query.tiers
            warm = _WarmPart(index, query, searched, settings.reach, shared, settings.context, settings.pieces)
            pool = _PoolBuilder(warm, index, query, held, hits, shared, settings.context)
            if hits is not None:
                pool.add_candidates(hits.found)
                if settings.context and len(hits.found):
                    # Read in context, a cold row is found by its neighbour's meaning as a warm one is: the rows
                    # beside the cold hits by meaning join before the ranking, not only after it; beside all
                    # COLD_DEPTH of them found more than beside the best few (docs/recall.md).
                    best = np.argsort(-hits.found.cosine, kind="stable")[:COLD_DEPTH]
                    pool.add_candidates(store.cold_reads.neighbours(hits, best))
            found = ranking.rank(pool.build(), query.text, settings, limit, query.default, kinds)
            # The best cold hits' neighbours join from the cold index, to be lent their score; then one read
            # of the cold records that rank: the rest stay unread.
            missing = pool.missing_neighbours([i for i, _, _ in found], settings.reach)
            if missing and hits is not None:
                pool.add_candidates(store.cold_reads.lookup(hits, missing))
                found = ranking.rank(pool.build(), query.text, settings, limit, query.default, kinds)
            wanted, where = pool.unread([i for i, _, _ in found])
            if wanted:  # fewer come back than asked when one was forgotten meanwhile
                pool.add_records(store.cold_reads.records(wanted, where))
            index.make_rows(warm.position(i) for i, _, _ in found if i < warm.size)
            ranked = [
                ranking.Ranked(pool.record(i), score, similarity) for i, score, similarity in found if pool.readable(i)
            ]
            return self._piece_cosines(ranked, index, query) if settings.excerpts else ranked

    def _piece_cosines(self, ranked: list[ranking.Ranked], index: WarmIndex, query: Query) -> list[ranking.Ranked]:
        """The hits, each long one with each of its pieces' cosine to the query, from which `pack` chooses what to
        show of it when it does not fit whole. A long memory stored before pieces were kept has none."""
        long = [hit.record for hit in ranked if is_long(hit.record.content)]
        if not long:
            return ranked
        kept: dict[str, np.ndarray | None] = {}
        for record in long:
            if record.tier is Tier.WARM and (position := index.positions.get(record.id)) is not None:
                kept[record.id] = index.pieces.of(position)
        cold = [record.id for record in long if record.tier is Tier.COLD]
        if cold:
            kept.update(self.parts.store.cold_reads.pieces(cold))
        out = []
        for hit in ranked:
            found = kept.get(hit.record.id)
            if found is not None:
                cosines = (found @ np.atleast_2d(query.vectors).T).max(axis=1)
                hit = replace(hit, piece_cosines=tuple(float(c) for c in cosines))
            out.append(hit)
        return out

    def _matching_profile(self, query: str, vector: np.ndarray) -> dict[str, Entry]:
        """The entries a query is about, nearest in meaning first: near it, or sharing a word with it that few
        entries hold.

        A word most entries hold ("project" across `project.<name>.<topic>` keys) says nothing of which one is
        asked about; matched on it, every query naming it showed them all and counted each a use, so none ever
        went idle (the simulated year kept a finished project's decisions hot 200 days on). Function words and
        words of one or two characters ("2", "pm") never match.
        """
        entries = self.parts.hot.entries()
        if not entries:
            return {}
        texts = {key: f"{key.replace('_', ' ').replace('.', ' ')}: {e.value}" for key, e in entries.items()}
        vectors = self.parts.vectors_of(list(texts.values()))
        scale = cosine_scale(self.parts.embedder)
        held = {key: set(words(text)) for key, text in texts.items()}
        counts: dict[str, int] = {}
        for found in held.values():
            for word in found:
                counts[word] = counts.get(word, 0) + 1
        few = max(2, int(len(entries) * PROFILE_WORD_SHARE))
        asked = {w for w in words(query) if len(w) >= 3 and counts.get(w, 0) <= few}
        matched: list[tuple[float, str, Entry]] = []
        for (key, entry), entry_vector in zip(entries.items(), vectors, strict=True):
            cosine = float(np.dot(entry_vector, vector))
            if scale.to_query(cosine) >= PROFILE_MATCH or asked & held[key]:
                matched.append((cosine, key, entry))
        return {key: entry for _, key, entry in sorted(matched, key=lambda m: -m[0])}


def _as_read(hit: ranking.Ranked) -> str:
    """What the cross-encoder reads of a hit: a long memory by its piece nearest the query (it reads 256 word
    pieces with the query, so a fact at the end of long notes would go unseen), any other whole."""
    if hit.piece_cosines is None:
        return hit.record.content
    return pieces_of(hit.record.content)[int(np.argmax(hit.piece_cosines))]


class _WarmPart:
    """The warm tier's share of a pool: its scores for the query, computed once.

    Up to POOL_ALL_UP_TO warm rows every one joins the pool; past it only those that can rank: the best
    WARM_DEPTH by meaning, by words and among the durable facts, and the neighbours they lend to. Past
    signs.EXACT_UP_TO as well, meaning is scored only on the rows the sign codes put nearest (in scope and
    among the durable facts), on those that join by words or as neighbours, and on an even sample for the
    median: at 100,000 warm rows the exact cosine over all of them was most of a recall's time. Read in context
    (RecallSettings.context), a row's cosine is blended with its vector added to a neighbour's, made from the
    two cosines and the index's cosine between the pair; past signs.EXACT_UP_TO with the neighbours scored
    already (a row at the edge of those that join, by its one side; one of the sample, mostly by none).
    """

    def __init__(
        self,
        index: WarmIndex,
        query: Query,
        searched: bool,
        reach: int,
        shared_words: bool = True,
        context: float = 0.0,
        pieces: bool = True,
    ) -> None:
        """`context`: the share of a row's cosine read with its neighbours' (RecallSettings.context; 0: none);
        `pieces`: a long row scored by its best piece too (RecallSettings.pieces)."""
        size = index.size
        self.context = context
        self.own: np.ndarray | None = None  # the rows' own cosines, where `cosine` holds them read in context
        self.near: np.ndarray | None = None  # the rows the sign codes chose, when only those were scored by meaning
        if not searched or not size:
            self.mask = np.zeros(size, dtype=bool)
            self.cosine = np.zeros(size, dtype=np.float32)
            self.words = np.zeros(size, dtype=np.float32)
        else:
            scope = Scope(query.tags, _micros(query.since), _micros(query.until))
            self.mask = index.mask(scope)
            if index.live > max(POOL_ALL_UP_TO, signs.EXACT_UP_TO):
                self.cosine = self._by_codes(index, query.vectors)
                if pieces:
                    self._by_pieces(index, query.vectors)
            else:
                self.cosine = index.cosine(query.vectors)
                if pieces:
                    self._by_pieces(index, query.vectors)
                if context:
                    self._in_context(index, np.flatnonzero(self.mask))
            self.words = index.bm25(query.terms)
            if shared_words:
                self.words = _share(self.words, index.query_weight(query.terms))
        self.chosen: np.ndarray | None = None  # warm positions in the pool, in pool order; None: all of them
        self.scored: tuple[np.ndarray, np.ndarray, int] | None = None  # every warm row's scores, where not all join
        if searched and index.live > POOL_ALL_UP_TO:
            self._choose(index, reach, query.vectors)
        self.size = size if self.chosen is None else len(self.chosen)
        self.where = np.arange(size) if self.chosen is None else np.full(size, -1, dtype=np.int64)
        if self.chosen is not None:
            self.where[self.chosen] = np.arange(len(self.chosen))

    def _by_codes(self, index: WarmIndex, vectors: np.ndarray) -> np.ndarray:
        """Cosines of the rows nearest by sign codes, in scope and among its durable facts; 0 until filled."""
        durable = self.mask & index.durable[: index.size]
        self.near = index.nearest(vectors, [self.mask, durable], NEAR_KEEP)
        self._known = np.zeros(index.size, dtype=bool)
        cosine = np.zeros(index.size, dtype=np.float32)
        cosine[self.near] = index.cosine_at(vectors, self.near)
        self._known[self.near] = True
        return cosine

    def _by_pieces(self, index: WarmIndex, vectors: np.ndarray) -> None:
        """A long row's cosine is its best piece's where that is higher (tiers/index/pieces.py); scored by
        meaning whatever its sign code, when only the rows the codes chose are."""
        owners, best = index.pieces.best(vectors, self.mask)
        if not len(owners):
            return
        if self.near is not None:
            self._fill(index, vectors, owners)
            self.near = np.union1d(self.near, owners)
        self.cosine[owners] = np.maximum(self.cosine[owners], best)

    def _fill(self, index: WarmIndex, vectors: np.ndarray, positions: np.ndarray) -> None:
        """The cosines of these positions, where the codes did not choose them."""
        missing = positions[~self._known[positions]]
        self.cosine[missing] = index.cosine_at(vectors, missing)
        self._known[missing] = True

    def _choose(self, index: WarmIndex, reach: int, vectors: np.ndarray) -> None:
        size = len(self.mask)
        inside = np.flatnonzero(self.mask)
        worded = np.flatnonzero(self.mask & (self.words > 0))
        meant = inside if self.near is None else self.near  # the rows scored by meaning
        durable = meant[index.durable[: index.size][meant]]
        picked = [_top(self.cosine, meant), _top(self.words, worded), _top(self.cosine, durable)]
        rows = signs.union(size, picked)
        found = [rows]
        for links in (index.prev, index.next):
            at = rows
            for _ in range(reach):
                at = links[at]
                at = at[at >= 0]
                found.append(at)
        chosen = signs.union(size, found)
        self.chosen = chosen[self.mask[chosen]]
        if self.near is None:
            self.scored = (self.cosine[inside], self.words[worded], len(inside))
            return
        # Rows that joined by words or as a neighbour are scored by meaning too; the median cosine, which
        # ranking scales from, is taken over an even sample of the rows in scope.
        self._fill(index, vectors, self.chosen)
        sample = samples.sample(inside).values
        self._fill(index, vectors, sample)
        if self.context:  # read in context with the neighbours scored already (the rows at the edge: one side)
            self._in_context(index, signs.union(size, [self.chosen, sample]), self._known)
        self.scored = (self.cosine[sample], self.words[worded], len(inside))

    def _in_context(self, index: WarmIndex, rows: np.ndarray, known: np.ndarray | None = None) -> None:
        """Read the cosines of these rows with those of their neighbours in scope (and `known`: scored)."""
        own = self.cosine.copy()
        sides = []
        for links, after in ((index.prev, False), (index.next, True)):
            theirs = np.full(len(rows), np.nan, dtype=np.float32)
            pair = np.full(len(rows), np.nan, dtype=np.float32)
            linked = links[rows]
            has = np.flatnonzero(linked >= 0)
            has = has[self.mask[linked[has]]]
            if known is not None:
                has = has[known[linked[has]]]
            theirs[has] = own[linked[has]]
            # A row's cosine to the one before it is that row's to the one after it, which the index keeps.
            pair[has] = index.next_similarity(rows[has] if after else linked[has])
            sides.append((theirs, pair))
        self.cosine[rows] = ranking.in_context(own[rows], sides, self.context)
        self.own = own

    def take(self, values: np.ndarray) -> np.ndarray:
        """A warm array (by warm position) in pool order."""
        size = len(self.mask)
        return values[:size] if self.chosen is None else values[self.chosen]

    def position(self, pool_position: int) -> int:
        return pool_position if self.chosen is None else int(self.chosen[pool_position])


def _top(scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    if len(rows) <= WARM_DEPTH:
        return rows
    return rows[np.argpartition(-scores[rows], WARM_DEPTH)[:WARM_DEPTH]]


class _PoolBuilder:
    """Warm rows in pool order (all, or those that can rank), then cold rows found after them, as ranking arrays."""

    def __init__(
        self,
        warm: _WarmPart,
        index: WarmIndex,
        query: Query,
        held: frozenset[str] = frozenset(),
        hits: ColdHits | None = None,
        shared_words: bool = True,
        context: float = 0.0,
    ) -> None:
        """`held`: ids that stay out of the ranking (what the context holds already); `hits`: the cold search, if
        one ran; `shared_words`: the cold rows' BM25 scores divided by the query's weight among them, as the warm
        ones are; `context`: the share of a cold row's cosine read with its neighbours' in the pool (0: none)."""
        self.warm = warm
        self.context = context
        self.hits = hits
        self.cold_weight = hits.weight if hits is not None and shared_words else 0.0
        self.index = index
        self.query = query
        self.held = held
        self.found: list[Found] = []  # the cold rows in the pool, in pool order, as the searches found them
        self.cold: list[str] = []  # their ids
        self.starts: list[int] = []  # where each part of `found` starts among the cold rows
        self.position: dict[str, int] = {}
        self.records: dict[str, Record] = {}

    def add_candidates(self, found: Found) -> None:
        start = len(self.cold)
        position, warm, at = self.position, self.index.positions, self.warm.size + start
        taken: list[int] = []
        for row, rid in enumerate(found.ids):
            if rid in position or rid in warm:
                continue
            position[rid] = at + len(taken)
            taken.append(row)
        if not taken:
            return
        self.starts.append(start)
        if len(taken) == len(found):
            self.cold += found.ids
            self.found.append(found)
        else:
            self.cold += [found.ids[row] for row in taken]
            self.found.append(found.take(np.asarray(taken, dtype=np.int64)))

    def add_records(self, records: Sequence[Record]) -> None:
        """Cold records read in full, for pool rows that ranked."""
        for record in records:
            self.records[record.id] = record

    def _column(self, name: str, dtype: npt.DTypeLike) -> np.ndarray:
        parts = [getattr(found, name) for found in self.found]
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

    def build(self) -> ranking.Pool:
        warm = self.warm
        size = warm.size
        index = self.index
        n = len(self.cold)
        prev = np.concatenate([self._linked(index.prev), np.full(n, -1, dtype=np.int64)])
        nxt = np.concatenate([self._linked(index.next), np.full(n, -1, dtype=np.int64)])
        at = size
        for found in self.found:
            before, after = found.first_links()
            prev[at : at + len(found)] = [self._at(rid) for rid in before]
            nxt[at : at + len(found)] = [self._at(rid) for rid in after]
            at += len(found)
        relinked = _link_back(prev, nxt, size)
        warm_cosine = warm.take(warm.cosine)
        cold_cosine = self._column("cosine", np.float32)
        own = None  # every row's own cosine, where the pool reads rows in context
        if self.context:
            own = np.concatenate([warm.take(warm.cosine if warm.own is None else warm.own), cold_cosine])
            if n:
                vectors = self._vectors()
                rows = np.concatenate([relinked, np.arange(size, size + n)])
                read = self._in_context(own, prev, nxt, rows, vectors)
                warm_cosine = warm_cosine.copy()
                warm_cosine[relinked] = read[: len(relinked)]
                cold_cosine = read[len(relinked) :]
        cold_words = _share(self._column("words", np.float32), self.cold_weight)
        medians = self._medians(warm_cosine)
        mask = np.concatenate([warm.take(warm.mask), np.ones(n, dtype=bool)])
        for rid in self.held:
            at = self._at(rid)
            if at >= 0:
                mask[at] = False
        return ranking.Pool(
            cosine=np.concatenate([warm_cosine, cold_cosine]),
            words=np.concatenate([warm.take(warm.words), cold_words]),
            mask=mask,
            cold=np.concatenate([np.zeros(size, dtype=bool), np.ones(n, dtype=bool)]),
            durable=np.concatenate([warm.take(index.durable), self._column("durable", bool)]),
            kind=np.concatenate([warm.take(index.kind), self._column("kind", "<U12")]),
            prev=prev,
            next=nxt,
            medians=medians,
            own=own,
        )

    def _medians(self, warm_cosine: np.ndarray) -> tuple[float, float] | None:
        """The medians ranking scales each signal from, as if every row in scope, of both tiers, were in the pool:
        the pool holds only the cold rows a search found (its best), so their own medians would be far above the
        tier's, and a row's score would hang on which tier it sits in. None where the pool holds every row."""
        warm = self.warm
        hits = self.hits
        if warm.scored is None and hits is None:
            return None
        if warm.scored is not None:
            cosine, words, inside = warm.scored
            by_meaning, by_words = [samples.Sample(cosine, inside)], [samples.sample(words)]
        else:
            mask = warm.take(warm.mask)
            words = warm.take(warm.words)[mask]
            by_meaning, by_words = [samples.sample(warm_cosine[mask])], [samples.sample(words[words > 0])]
        if hits is not None:
            by_meaning.append(hits.cosines)
            by_words.append(samples.Sample(_share(hits.worded.values, self.cold_weight), hits.worded.rows))
        return samples.median(by_meaning), samples.median(by_words)

    def _vectors(self) -> Callable[[np.ndarray], np.ndarray]:
        """The vectors of pool positions: a warm row's from the warm index, a cold row's from its codes."""
        size = self.warm.size
        at = np.arange(size) if self.warm.chosen is None else self.warm.chosen
        cold = np.concatenate([found.vectors() for found in self.found])
        warm_vectors = self.index.vectors

        def of(positions: np.ndarray) -> np.ndarray:
            out = np.empty((len(positions), cold.shape[1]), dtype=np.float32)
            in_warm = positions < size
            out[in_warm] = warm_vectors[at[positions[in_warm]]]
            out[~in_warm] = cold[positions[~in_warm] - size]
            return out

        return of

    def _in_context(
        self,
        own: np.ndarray,
        prev: np.ndarray,
        nxt: np.ndarray,
        rows: np.ndarray,
        vectors: Callable[[np.ndarray], np.ndarray],
    ) -> np.ndarray:
        """These rows' cosines read with their neighbours' in the pool (`own`: every row's own cosine), each row's
        cosine to a neighbour made from their vectors (a cold row's from the codes the search found it by)."""
        mine = vectors(rows)
        sides = []
        for links in (prev, nxt):
            theirs = np.full(len(rows), np.nan, dtype=np.float32)
            pair = np.full(len(rows), np.nan, dtype=np.float32)
            has = np.flatnonzero(links[rows] >= 0)
            other = links[rows[has]]
            theirs[has] = own[other]
            pair[has] = np.einsum("ij,ij->i", mine[has], vectors(other))
            sides.append((theirs, pair))
        return ranking.in_context(own[rows], sides, self.context)

    def _linked(self, links: np.ndarray) -> np.ndarray:
        """Episode links of the warm rows in the pool, as pool positions (-1 where the neighbour is not in it)."""
        targets = self.warm.take(links)
        out = np.full(len(targets), -1, dtype=np.int64)
        has = targets >= 0
        out[has] = self.warm.where[targets[has]]
        return out

    def _at(self, rid: str | None) -> int:
        """The pool position of a record, if it is in the pool (warm or cold)."""
        if rid is None:
            return -1
        at = self.position.get(rid)
        if at is not None:
            return at
        warm = self.index.positions.get(rid, -1)
        return int(self.warm.where[warm]) if warm >= 0 and self.warm.mask[warm] else -1

    def missing_neighbours(self, best: Sequence[int], reach: int) -> list[str]:
        """Ids of the cold rows linked to the best cold hits that are not in the pool yet."""
        out: list[str] = []
        for position in best:
            if position < self.warm.size:
                continue
            part, row = self._part(position)
            for rid in self.found[part].links(row, reach):
                if rid not in self.position and rid not in self.index.positions and rid not in out:
                    out.append(rid)
        return out

    def unread(self, positions: Sequence[int]) -> tuple[list[str], list[int]]:
        """Ids of the cold rows among `positions` whose full record has not been read, and where the cold index
        had each one when it was found."""
        ids, where = [], []
        for p in positions:
            if p < self.warm.size:
                continue
            rid = self.cold[p - self.warm.size]
            if rid in self.records:
                continue
            part, row = self._part(p)
            ids.append(rid)
            where.append(int(self.found[part].positions[row]))
        return ids, where

    def _part(self, position: int) -> tuple[int, int]:
        """Which part of `found` a cold pool position is in, and its row there."""
        offset = position - self.warm.size
        part = bisect.bisect_right(self.starts, offset) - 1
        return part, offset - self.starts[part]

    def readable(self, position: int) -> bool:
        return position < self.warm.size or self.cold[position - self.warm.size] in self.records

    def record(self, position: int) -> Record:
        if position < self.warm.size:
            return self.index.record(self.warm.position(position))
        return self.records[self.cold[position - self.warm.size]]


def _link_back(prev: np.ndarray, nxt: np.ndarray, size: int) -> np.ndarray:
    """Link the warm rows of a pool (its first `size` positions) to the cold rows that name them as neighbours.

    A warm row's links in the warm index join it to the warm rows of its episode, skipping those gone cold;
    a row that went cold keeps the ids of its neighbours then, so the cold row in the pool whose nearest
    neighbour is a warm row is that warm row's neighbour on the other side: linked back, the warm row lends it
    a share of its score and is read in context with it, as before they parted. The warm rows relinked.
    """
    cold = np.arange(size, len(prev))
    for mine, theirs in ((prev, nxt), (nxt, prev)):
        named = mine[size:]
        warm = (named >= 0) & (named < size)
        theirs[named[warm]] = cold[warm]
    relinked = np.concatenate([prev[size:], nxt[size:]])
    return np.unique(relinked[(relinked >= 0) & (relinked < size)])


def _micros(value: datetime | None) -> int | None:
    return None if value is None else int(as_utc(value).timestamp() * 1_000_000)


def _share(scores: np.ndarray, weight: float) -> np.ndarray:
    """BM25 scores as shares of the query's weight in their tier (tiers/index/bm25.py); as they are for no weight."""
    return scores / np.float32(weight) if weight > 0 else scores
