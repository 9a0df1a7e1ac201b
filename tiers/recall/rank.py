"""Recall: rank a pool of rows by meaning and by words, then pack the best into the model's token budget.

The text built here is exactly what the model reads, so the budget is checked on it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from tiers.index.pieces import piece_scores
from tiers.model.embedder import piece_span
from tiers.model.scale import AS_THEY_ARE, CosineScale
from tiers.recall import updates
from tiers.recall.updates import Later
from tiers.records import Kind, Record, Tier, tokens_of
from tiers.storage.hot import Entry
from tiers.text.measure import Words, quarters
from tiers.text.measure import words as words_of
from tiers.text.terms import STOP_WORDS, TIME_TERM, asked_dates, latin_language, words

DEPTH = 200  # ranks past this add nothing to the fusion
_OFF = {"rrf_k": 60.0, "text_weight": 0.0, "excerpt_span": 1, "rerank": 0}  # rrf_k "off" is the customary constant


@dataclass(frozen=True)
class RecallSettings:
    """The recall techniques, each one switchable (0 or False) to measure what it adds."""

    text_weight: float = 1.0  # weight of the BM25 ranking against the vector ranking (times the model's words_weight)
    rrf_k: float = 10.0  # reciprocal-rank constant: 10 trusts the top ranks more than the usual 60
    score_mix: float = 2.0  # weight of each signal's own score (median to best, as 0 to 1) beside its rank
    neighbours: float = 0.75  # share of its score a hit lends the rows stored just before and after it
    reach: int = 2  # how many rows before and after a hit it lends to, the share shrinking with each step
    # Default tiers: share of its score a cold row loses against a warm one. 0: none, and a cold row ranks just
    # below an equally good warm one only by the pool's order (warm rows first, ties kept in order). After a
    # sweep the rows left warm are mostly durable facts, not the evidence a question needs: any penalty cost
    # recall there (docs/recall.md, "Why each default is what it is", for this and each figure below).
    cold_penalty: float = 0.0
    shared_words: bool = True  # each tier's BM25 as a share of the query's weight there, so tiers compare
    grouped: bool = True  # one date header per day instead of an id-and-date prefix per line
    perspective: bool = True  # a query about "the user" is also searched in the first person, as users speak
    durable: int = (
        4  # for a query about the user, its best few durable facts by meaning (at most half the limit) keep a place
    )
    when: bool = True  # a question asking "when" also matches, by words, the rows that say a time
    dated: bool = True  # a query naming a date also matches, by words, the rows of that date (or that say it)
    kind_match: float = 0.4  # cosine to a durable kind's name ("my health") at which a query lists that kind first
    # The host carries the hot profile every turn (it reads the resource into each prompt): recall then
    # shows none of it, nor the memories its entries were made from. Off, recall shows the entries a query
    # matches (for hosts that never read the resource), and never again the memories they were made from.
    profile_carried: bool = False
    # A row's meaning is also read with its episode neighbours': its cosine takes this share from the cosine
    # of its vector added to a neighbour's (the better side, never below its own), so a reply ("It's like
    # therapy for me") is also found by what the turn before it said ("I signed up for a pottery class").
    # 0.5 helped conversations in every query form and left an agent-written store where it was. 0: each row
    # read alone.
    context: float = 0.5
    # A long memory (tiers/index/pieces.py) is scored by meaning as the nearer of its mean and its best piece, so what
    # its end says counts undiluted; off: by the mean of its pieces alone. LoCoMo's turns are all short.
    pieces: bool = True
    # A long memory that does not fit the budget whole is shown by its piece nearest the query (what it says
    # there, marked as an excerpt with its place and the whole's size) instead of being left out.
    excerpts: bool = True
    # Which piece an excerpt shows: its cosine to the query plus this times the share of the query's terms it
    # holds (a memory found by its words is shown where they are); more weight than 1 added nothing. 0: by
    # meaning alone.
    excerpt_words: float = 1.0
    # How many neighbouring pieces an excerpt may span where the budget left holds them: from the chosen piece
    # toward its nearer neighbour by the same score, while it fits. A fact told across a piece's edge, or just
    # past it, is shown whole; a third piece added nothing. 1: the chosen piece alone.
    excerpt_span: int = 2
    # Recall's best this many candidates read again by a cross-encoder beside the query (tiers/model/rerank.py) and
    # reordered by both orders; 0: off. Off by default: it finds more, but costs a second or so a recall on CPU.
    rerank: int = 0
    # Among the best hits, those that hold a name the query writes with a capital letter ("Where does Ana live?",
    # "Atlas web framework") go first, each part in its own order: another person's fact in the same words
    # ("Sam lives in Porto") answers another question, however many of the query's other words it holds.
    names_first: bool = True
    # Among the best hits, an older memory a later one may update (tiers/recall/updates.py) is shown after it and
    # marked by it; off: ranked as any other hits.
    updates: bool = True

    def without(self, *names: str) -> RecallSettings:
        """These settings with the named techniques switched off."""
        off: dict[str, Any] = {}
        for name in names:
            off[name] = _OFF.get(name, False if isinstance(getattr(self, name), bool) else 0.0)
        return replace(self, **off)

    def describe(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


@dataclass(frozen=True)
class Ranked:
    """A candidate after ranking: its record, fused score and cosine similarity to the query; for a long memory,
    each of its pieces' (tiers/model/embedder.py `pieces`) best cosine to the query; once packed, the excerpt
    shown of it where the whole did not fit the budget."""

    record: Record
    score: float
    similarity: float
    piece_cosines: tuple[float, ...] | None = None
    excerpt: Excerpt | None = None
    later: Later | None = None  # a later memory among the hits that may replace this one (tiers/recall/updates.py)


@dataclass(frozen=True)
class Excerpt:
    """The piece of a long memory shown in its place: its words `first` to `last` (from 1) of `words`."""

    text: str
    first: int
    last: int
    words: int
    whole_tokens: int  # what showing the memory whole costs, in tokens (tiers/text/measure.py)


@dataclass
class Packed:
    """What recall returns: the hits that fit, the matching profile entries, and the text the model reads."""

    hits: list[Ranked] = field(default_factory=list)
    profile: dict[str, Entry] = field(default_factory=dict)
    left_out: int = 0
    text: str = ""

    @property
    def tokens(self) -> int:
        return tokens_of(self.text)


_WORD = re.compile(r"\w+")
_WHEN = re.compile(r"\b(?:when|what (?:date|day|year|month|time)|how long ago)\b", re.IGNORECASE)
_ABOUT_USER = re.compile(r"\b(?:I|me|my|mine|myself|the user|user's)\b|\bI'", re.IGNORECASE)
_MODALS = "can|could|will|would|should|shall|may|might|must"
_POSSESSIVE = re.compile(r"\bthe\s+user['’]s\b", re.IGNORECASE)
_ASKED = re.compile(rf"\b(does|do|did|is|was|has|had|{_MODALS})\s+the\s+user\b", re.IGNORECASE)
_STATED = re.compile(rf"\bthe\s+user\s+(is|was|has|does|{_MODALS}|\w+(?:s|ed))\b", re.IGNORECASE)
_OBJECT = re.compile(r"\bthe\s+user\b(?=\s*(?:[?!.,;:]|$|\s(?:about|for|to|with|on|in|at)\b))", re.IGNORECASE)
_FIRST = {"does": "do", "is": "am", "has": "have"}


def first_person(query: str) -> str | None:
    """`query` as the user would say it ("what does the user eat?" -> "what do I eat?"), or None if it names no user.

    Agents ask about "the user" while users speak of themselves as "I" and "my": the stored words and
    the embedding both follow the speaker's person, so a third-person query misses first-person facts.
    """
    out = _POSSESSIVE.sub("my", query)
    out = _ASKED.sub(lambda m: f"{_FIRST.get(m.group(1).lower(), m.group(1))} I", out)
    out = _STATED.sub(lambda m: f"I {_FIRST.get(m.group(1).lower(), m.group(1))}", out)
    out = _OBJECT.sub("me", out)
    return out if out != query else None


def query_forms(query: str, settings: RecallSettings) -> list[str]:
    """The texts a query is searched as: itself, and in the first person when it asks about the user.

    Vectors are taken from every form (a row's cosine is its best); words from the last form only.
    """
    if settings.perspective:
        rewritten = first_person(query)
        if rewritten:
            return [query, rewritten]
    return [query]


# What a query about a durable kind sounds like, in the first person as its facts are said.
KIND_NAMES = {
    Kind.HEALTH: "my health",
    Kind.IDENTITY: "my identity",
    Kind.PREFERENCE: "my preferences",
    Kind.CONSTRAINT: "my rules",
    Kind.RELATIONSHIP: "my relationships",
}


@dataclass(frozen=True)
class Pool:
    """The rows one query ranks: every warm row in scope and the cold rows its searches found.

    Positions index every array alike; `prev` and `next` link each row to its episode neighbours (-1: none).
    """

    cosine: np.ndarray
    words: np.ndarray
    mask: np.ndarray
    cold: np.ndarray
    durable: np.ndarray
    kind: np.ndarray
    prev: np.ndarray
    next: np.ndarray
    # The median cosine and median word score of every row in scope, when the pool holds only the rows that
    # can rank (a large warm tier): None when it holds them all and the medians are its own.
    medians: tuple[float, float] | None = None
    # Each row's cosine by its own vector, where `cosine` reads it in context (RecallSettings.context): None
    # where the two are the same.
    own: np.ndarray | None = None

    @property
    def alone(self) -> np.ndarray:
        """Each row's cosine by its own meaning, its neighbours' left out."""
        return self.cosine if self.own is None else self.own


def in_context(own: np.ndarray, sides: Sequence[tuple[np.ndarray, np.ndarray]], share: float) -> np.ndarray:
    """Rows' cosines with `share` of each taken from the better of its own and its vector added to a neighbour's.

    `sides`: per side, each row's neighbour's cosine and the row's cosine to that neighbour (NaN: none).
    For unit vectors a and b, cos(q, a + b) = (q.a + q.b) / sqrt(2 + 2 a.b): made from cosines alone, no
    vector read. A row is never read worse for its neighbours: a fact stored in one batch beside unrelated
    lines keeps its own cosine, where the pair's would dilute it and lose a critical fact said among chatter.
    """
    own = own.astype(np.float32)
    best = own.copy()
    for theirs, pair in sides:
        has = ~(np.isnan(theirs) | np.isnan(pair))
        mixed = (own[has] + theirs[has]) / np.sqrt(np.maximum(2.0 + 2.0 * pair[has], 1e-6))
        best[has] = np.maximum(best[has], mixed)
    return ((1.0 - share) * own + share * best).astype(np.float32)


def _rrf(scores: np.ndarray, candidates: np.ndarray, k: float) -> np.ndarray:
    """Reciprocal-rank contribution of each row by its rank among `candidates` (0 past DEPTH)."""
    out = np.zeros(len(scores), dtype=np.float64)
    if len(candidates):
        order = _best(scores, candidates, DEPTH)
        out[order] = 1.0 / (k + 1.0 + np.arange(len(order)))
    return out


def _signal(
    scores: np.ndarray, candidates: np.ndarray, settings: RecallSettings, median: float | None = None
) -> np.ndarray:
    """One ranking's contribution: its reciprocal rank, plus its score scaled from the median to the best."""
    out = _rrf(scores, candidates, settings.rrf_k)
    if settings.score_mix and len(candidates):
        values = scores[candidates].astype(np.float64)
        low = float(np.median(values)) if median is None else median
        high = float(values.max())
        scaled = np.clip((values - low) / max(high - low, 1e-9), 0.0, 1.0)
        out[candidates] += settings.score_mix * scaled / (settings.rrf_k + 1.0)
    return out


def wants_time(query: str, settings: RecallSettings) -> list[str]:
    """The extra terms a query is searched with: the time term for "when", the dates it names."""
    extra = [TIME_TERM] if settings.when and _WHEN.search(query) else []
    if settings.dated:
        extra += asked_dates(query)
    return extra


def rank(
    pool: Pool,
    query: str,
    settings: RecallSettings,
    limit: int,
    cold_penalty: bool,
    kinds: Sequence[str] = (),
) -> list[tuple[int, float, float]]:
    """The best `limit` rows of the pool as (position, score, cosine); `cold_penalty` under default tiers.

    `kinds`: durable kinds the query asks about as a whole; their current facts come first, by meaning.
    """
    mask = pool.mask
    candidates = np.flatnonzero(mask)
    if not len(candidates):
        return []
    cosine, words = pool.cosine, pool.words
    medians = pool.medians or (None, None)
    fused = _signal(cosine, candidates, settings, medians[0])
    fused += settings.text_weight * _signal(words, candidates[words[candidates] > 0], settings, medians[1])
    top_weight = (1.0 + settings.text_weight) * (1.0 + settings.score_mix)
    fused *= settings.rrf_k + 1.0
    fused /= top_weight
    if cold_penalty and settings.cold_penalty:
        fused[pool.cold] *= 1.0 - settings.cold_penalty
    if settings.neighbours:
        fused = _lend_to_neighbours(pool, fused, settings.neighbours, settings.reach)
    if kinds:
        listed = mask & pool.durable & np.isin(pool.kind, list(kinds))
        fused[listed] = float(fused.max()) + 1.0 + pool.alone[listed]
    order = [int(i) for i in _best(fused, np.flatnonzero(mask & (fused > 0)), 4 * limit)]
    if settings.durable and about_user(query):
        order = _with_durable(pool, order, fused, settings.durable, limit)
    return [(i, float(fused[i]), float(cosine[i])) for i in order[:limit]]


NAMED_WITHIN = 10  # the recall tool's default limit: the hits holding the query's names go first among this many


def named(query: str) -> set[str]:
    """The words a query writes with a capital letter (a person, a project, a place; "I" and the question words are
    stop words), as terms and as written (lower-cased): what it asks about. None in scripts without capitals, nor in
    German, which capitalises every noun; in the other Latin-script languages the query's first word is left out,
    as their question words are not all stop words ("Dónde", "Quand")."""
    said = _WORD.findall(query)
    language = latin_language(query)
    if language == "de":
        return set()
    if language is not None:
        said = said[1:]
    capitalised = [w for w in said if w[0].isupper()]
    return set(words(" ".join(capitalised))) | {w.lower() for w in capitalised if w.lower() not in STOP_WORDS}


def holds_a_name(asked: set[str], content: str) -> bool:
    """Whether `content` holds one of the names `named` found, as a term or as written: a name is not stemmed
    alike in two languages ("Javier" is "javier" to the English stemmer, "javi" to the Spanish one), and a question
    in one language asks about a name said in another."""
    return not asked.isdisjoint(words(content)) or not asked.isdisjoint(_WORD.findall(content.lower()))


def named_first(query: str, ranked: Sequence[Ranked]) -> list[Ranked]:
    """The best NAMED_WITHIN hits with those holding a name the query writes first, each part in its order.

    Words and meaning rank a fact of the same kind about another subject ("Sam's usual drink is a cortado" for
    "Ana usual drink") above the subject's own facts said in other words ("Ana only orders chai lately"): the
    name is one word of three, and no rarer than the others. A hit that holds none of the names the query asks
    about answers another question. Nothing moves where every hit, or none, holds one."""
    asked = named(query)
    window = list(ranked[:NAMED_WITHIN])
    if not asked:
        return list(ranked)
    holds = [holds_a_name(asked, hit.record.content) for hit in window]
    if all(holds) or not any(holds):
        return list(ranked)
    first = [hit for hit, held in zip(window, holds, strict=True) if held]
    return first + [hit for hit, held in zip(window, holds, strict=True) if not held] + list(ranked[NAMED_WITHIN:])


def about_user(query: str) -> bool:
    """Whether a query is about the user (I, my, the user): only then are the user's durable facts brought up."""
    return bool(_ABOUT_USER.search(query))


def _best(scores: np.ndarray, candidates: np.ndarray, count: int) -> np.ndarray:
    """The `count` best candidates, best first (ties in row order)."""
    if len(candidates) > count:
        candidates = np.sort(candidates[np.argpartition(-scores[candidates], count)[:count]])
    return candidates[np.argsort(-scores[candidates], kind="stable")]


DURABLE_WITHIN = 10  # the recall tool's default limit: the durable facts' places are among the first this many


def _with_durable(pool: Pool, order: list[int], fused: np.ndarray, count: int, limit: int) -> list[int]:
    """The best few durable facts take the places of the weakest hits if they did not make the limit.

    Durable facts (identity, preferences, constraints, relationships, health) are few, said once and
    asked about in other words than they were said in; ranked among their own kind they surface. Each by its
    own meaning: a fact says all it means, and read in context a preference said beside related lines would
    outrank a critical fact said beside unrelated ones (the simulated year lost one that way).

    The places are among the first DURABLE_WITHIN whatever the limit: a recall under a token budget asks for 50
    and shows the few that fit, so facts placed at 47-50 would never be read (the simulated year's budgets of
    800 tokens had the answer in context less often than the default limit of 10 did, with fewer tokens).
    """
    within = min(limit, DURABLE_WITHIN)
    shown = set(order[:within])
    count = min(count, within // 2)  # never more than half the answer, so the best hits always stay
    durable = np.flatnonzero(pool.mask & pool.durable)
    extra = [int(i) for i in _best(pool.alone, durable, count) if int(i) not in shown]
    if not extra:
        return order
    kept = order[: max(within - len(extra), 0)]
    placed = set(extra)
    rest = [i for i in order[len(kept) :] if i not in placed]
    return sorted(kept + extra, key=lambda i: -fused[i]) + rest


def asked_kinds(
    names: np.ndarray, vectors: np.ndarray, threshold: float, scale: CosineScale = AS_THEY_ARE
) -> list[str]:
    """The durable kinds whose name (rows of `names`, in KIND_NAMES order) a query's forms come close to."""
    if not threshold:
        return []
    best = scale.to_query((names @ np.atleast_2d(vectors).T).max(axis=1))
    return [kind.value for kind, score in zip(KIND_NAMES, best, strict=True) if score >= threshold]


def _lend_to_neighbours(pool: Pool, fused: np.ndarray, share: float, reach: int) -> np.ndarray:
    """Each row scores at least `share` of its neighbours' scores: the turn before a hit asks, the one after answers."""
    mask = pool.mask
    lent = fused.copy()
    for links in (pool.prev, pool.next):
        rows = np.flatnonzero(mask)
        lender = fused[rows]
        for step in range(reach):
            targets = links[rows]
            keep = targets >= 0
            rows, lender = targets[keep], lender[keep]
            np.maximum.at(lent, rows, share ** (step + 1) * lender)
    lent[~mask] = 0.0
    return lent


def render_hit(hit: Ranked, grouped: bool = False) -> str:
    """One compact line: id (and date and tier unless grouped under a header), content, tags, supersession."""
    record = hit.record
    if grouped:
        head = f"[{record.id}"
    else:
        head = f"[{record.id} {record.occurred_at.date().isoformat()}"
        if record.tier is not Tier.WARM:
            head += f" {record.tier.value}"
    if hit.excerpt is None:
        line = f"{head}] {' '.join(record.content.split())}"
    else:
        cut = hit.excerpt
        line = f"{head}] ... {cut.text} ... (excerpt: words {cut.first}-{cut.last} of {cut.words}; "
        line += f"the whole is {cut.whole_tokens} tokens)"
    if record.tags:
        line += " #" + " #".join(record.tags)
    if record.superseded_by:
        when = record.superseded_at.date().isoformat() if record.superseded_at else "?"
        line += f" (superseded by {record.superseded_by} on {when})"
    elif hit.later is not None:
        line += updates.mark(hit.later)
    return line


def _span(words: Words, first_piece: int, last_piece: int, whole_tokens: int) -> Excerpt:
    """The excerpt of a long memory's (split) text from the start of one piece to the end of another."""
    first, _ = piece_span(len(words), first_piece)
    _, last = piece_span(len(words), last_piece)
    return Excerpt(words.join(first, last), first + 1, last, len(words), whole_tokens)


def _excerpted(
    hit: Ranked,
    whole_cost: int,
    room: int,
    extra: int,
    grouped: bool,
    terms: Sequence[str],
    weight: float,
    span: int,
    scale: CosineScale = AS_THEY_ARE,
) -> tuple[Ranked, int] | None:
    """A long hit shown by an excerpt, and its cost, where one fits the `room` left (`extra`: its day header's
    cost): its piece nearest the query (`piece_scores`), grown by the nearer neighbouring piece that still fits,
    up to `span` pieces. None where the nearest piece does not fit. Reads the pieces' words, which costs, so
    `pack` asks only where the whole does not fit."""
    assert hit.piece_cosines is not None

    def fits(shown: Ranked) -> int | None:
        cost = quarters(render_hit(shown, grouped)) + 1 + extra
        return cost if cost <= room else None

    said = words_of(hit.record.content)
    tokens = -(-whole_cost // 4)
    cuts = [_span(said, p, p, tokens) for p in range(len(hit.piece_cosines))]
    costs = [fits(replace(hit, excerpt=cut)) for cut in cuts]
    if all(cost is None for cost in costs):
        return None
    cosines = scale.to_memory(np.asarray(hit.piece_cosines, dtype=np.float32))
    scores = piece_scores(cosines, [c.text for c in cuts], terms, weight)
    first = last = int(np.argmax(scores))
    cost = costs[first]
    if cost is None:
        return None
    best = (replace(hit, excerpt=cuts[first]), cost)
    while last - first + 1 < span:
        for step in sorted((p for p in (first - 1, last + 1) if 0 <= p < len(cuts)), key=lambda p: -scores[p]):
            lo, hi = min(first, step), max(last, step)
            wide = replace(hit, excerpt=_span(said, lo, hi, tokens))
            if (cost := fits(wide)) is not None:
                first, last, best = lo, hi, (wide, cost)
                break
        else:
            break
    return best


def group_header(record: Record) -> str:
    """The header of the day a record happened, naming its tier when it is not warm."""
    tier = "" if record.tier is Tier.WARM else f" {record.tier.value}"
    return f"{record.occurred_at.date().isoformat()}{tier}:"


def render_profile(entries: dict[str, Entry]) -> str:
    return "profile: " + "; ".join(f"{key}={entry.value}" for key, entry in sorted(entries.items()))


def _budget(limit: int, max_tokens: int | None) -> int | None:
    """Quarters of a token (tiers/text/measure.py: a character in Latin script) a packed answer may hold, less
    room for the last line, whatever the count it names."""
    if max_tokens is None:
        return None
    return max_tokens * 4 - len(left_out_line(limit, max_tokens)) - 1


def profile_fits(profile: dict[str, Entry], limit: int, max_tokens: int | None) -> bool:
    """Whether `pack` shows these profile entries within the budget."""
    budget = _budget(limit, max_tokens)
    return bool(profile) and (budget is None or quarters(render_profile(profile)) + 1 <= budget)


def profile_shown(matching: dict[str, Entry], limit: int, max_tokens: int | None) -> dict[str, Entry]:
    """The matching entries a recall shows: the best `limit` of them (`matching` is best match first), when their
    line fits the budget, else none, and the budget goes to the hits.

    Every entry a query touched cost a small recall more than its one hit, so only the best `limit` are shown.
    Under a budget, the best entries that fit took the room of better hits, so under a budget the line is all
    or none (docs/recall.md, "Why each default is what it is")."""
    shown = dict(list(matching.items())[:limit])
    return shown if profile_fits(shown, limit, max_tokens) else {}


def fits_beside(profile: dict[str, Entry], best: Ranked, limit: int, max_tokens: int | None, grouped: bool) -> bool:
    """Whether the profile line leaves the budget room for the best memory, shown whole (always, with no budget)."""
    budget = _budget(limit, max_tokens)
    if budget is None:
        return True
    return quarters(render_profile(profile)) + 1 + _cost(best, grouped, new_day=True) <= budget


def _cost(hit: Ranked, grouped: bool, new_day: bool) -> int:
    """What a hit adds to a packed answer, in quarters of a token: its line, and its day's header when it opens a
    new day."""
    header = len(group_header(hit.record)) + 1 if grouped and new_day else 0
    return quarters(render_hit(hit, grouped)) + 1 + header


def pack(
    ranked: Sequence[Ranked],
    profile: dict[str, Entry],
    limit: int,
    max_tokens: int | None,
    grouped: bool = False,
    terms: Sequence[str] = (),
    excerpt_words: float = 0.0,
    excerpt_span: int = 1,
    scale: CosineScale = AS_THEY_ARE,
) -> Packed:
    """Take hits in rank order while they fit `max_tokens` (counted by script: tiers/text/measure.py) and `limit`.

    A long hit that does not fit whole is shown by an excerpt: its piece nearest the query by its cosine and
    the share of the query's `terms` it holds (weighted `excerpt_words`: RecallSettings.excerpt_words), widened
    to up to `excerpt_span` pieces, each time by the nearer neighbour the budget still holds; the cosines read
    on the default model's `scale` (tiers/model/scale.py), as the weight was set on it.

    Grouped, the chosen hits are shown by day, oldest first, in the order they were stored within a day.
    """
    budget = _budget(limit, max_tokens)
    packed = Packed()
    used = 0
    head: list[str] = []
    if profile_fits(profile, limit, max_tokens):
        line = render_profile(profile)
        head.append(line)
        used = quarters(line) + 1
        packed.profile = profile
    headers: set[str] = set()
    for hit in ranked[:limit]:
        header = group_header(hit.record) if grouped else ""
        extra = len(header) + 1 if grouped and header not in headers else 0
        cost = _cost(hit, grouped, header not in headers)
        if budget is not None and used + cost > budget and hit.piece_cosines is not None:
            # A long memory that does not fit whole: the part of it nearest the query, said to be an excerpt.
            excerpted = _excerpted(hit, cost, budget - used, extra, grouped, terms, excerpt_words, excerpt_span, scale)
            if excerpted is not None:
                hit, cost = excerpted
        if budget is not None and used + cost > budget:
            packed.left_out += 1
            continue
        used += cost
        headers.add(header)
        packed.hits.append(hit)
    lines = head + (grouped_lines(packed.hits) if grouped else [render_hit(h) for h in packed.hits])
    if packed.left_out:
        lines.append(left_out_line(packed.left_out, max_tokens))
    packed.text = "\n".join(lines) if lines else "no memories match"
    return packed


def grouped_lines(hits: Sequence[Ranked]) -> list[str]:
    """Hits under the day they happened, oldest day first, in the order they were stored within a day."""
    lines: list[str] = []
    last = None
    for hit in sorted(hits, key=_day_order):
        header = group_header(hit.record)
        if header != last:
            lines.append(header)
            last = header
        lines.append(render_hit(hit, grouped=True))
    return lines


def _day_order(hit: Ranked) -> tuple[object, ...]:
    r = hit.record
    return (r.occurred_at.date(), r.tier.value, r.occurred_at, r.created_at, r.id)


def left_out_line(count: int, max_tokens: int | None) -> str:
    """The line that says how many hits a token budget left out."""
    return f"({count} more left out by the {max_tokens}-token budget)"
