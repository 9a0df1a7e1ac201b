"""The words a memory is found by: stemmed words, the date it happened, and a term for "it says a time".

Computed once when a memory is written and stored beside it (the `terms` column), so the warm index
loads without re-reading text and the cold tier's BM25 (tiers/index/cold.py) ranks exactly these terms.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import TypeVar

from py_rust_stemmers import SnowballStemmer

from tiers.text import dates, languages

_WORD = re.compile(r"\w+")
_STEMMER = SnowballStemmer("english")
# Function words carry no topic; the list is the usual English one, shortened.
STOP_WORDS = frozenset(
    """a about after again all am an and any are as at be been before being below between both but by can
    could did do does doing down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me more most my myself no nor not now
    of off on once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves s t
    don didn doesn isn wasn""".split()  # noqa: SIM905
)
# Marks the terms that are not words; words (\w+) never contain it, and it survives a whitespace tokenizer.
MARK = "§"
# A row that says when something happened ("yesterday", "last May", "in 2022") carries this term too,
# so that a question asking "when" can match it by words: the answer to "when" is a time said in passing.
TIME_TERM = f"{MARK}time"
_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last (?:night|week|weekend|month|year|time|summer|winter|spring|fall)|"
    r"(?:this|next) (?:morning|week|weekend|month|year|summer|winter|spring|fall)|recently|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
    r"august|september|october|november|december|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
_MONTH = "|".join(_MONTHS)
_DAY_MONTH_YEAR = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH}),? |({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?,? )((?:19|20)\d\d)\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH}),? ((?:19|20)\d\d)\b", re.I)
_MONTH_ALONE = re.compile(rf"\b(?:in|of|during|since|last|this|early|late|mid-?) ({_MONTH})\b", re.I)
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
_RELATIVE = {"yesterday": 1, "last night": 1, "last week": 7, "last weekend": 7, "last month": 30, "last year": 365}
_RELATIVE_RE = re.compile(r"\b(" + "|".join(_RELATIVE) + r")\b", re.I)
DATE_TERM_PATTERN = rf"^{MARK}(?:y|m|mo|d)\d"  # the date terms, which BM25's length leaves out
_DATE_TERM = re.compile(DATE_TERM_PATTERN)


CACHED_UP_TO = 2_000  # characters of a text whose words are remembered: memories and queries, not transcripts
T = TypeVar("T")


def remembered(size: int) -> Callable[[Callable[[str], T]], Callable[[str], T]]:
    """A function of one text whose results for the last `size` texts of at most CACHED_UP_TO characters are
    remembered (its results must not be changed by callers): recall and writes ask the same of the same memories."""

    def wrap(function: Callable[[str], T]) -> Callable[[str], T]:
        kept = functools.lru_cache(maxsize=size)(function)

        @functools.wraps(function)
        def call(text: str) -> T:
            return kept(text) if len(text) <= CACHED_UP_TO else function(text)

        return call

    return wrap


def words(text: str) -> list[str]:
    """Lower-cased, stemmed words of `text` without stop words, in any script (tiers/text/languages.py).

    A recall reads the words of its best hits several times (their names, their pairs, how common their words
    are) and the same memories recur from one recall to the next: the words of a short text are remembered.
    """
    return list(_remembered(text))


@remembered(4_096)
def _remembered(text: str) -> tuple[str, ...]:
    return tuple(_words(text))


def _words(text: str) -> list[str]:
    if not text.isascii():
        return languages.words(text, _STEMMER, STOP_WORDS)
    every = _WORD.findall(text.lower())
    if languages.latin_language(every, STOP_WORDS, text) is not None:  # Spanish, German... written without accents
        return languages.words(text, _STEMMER, STOP_WORDS)
    found = [w for w in every if w not in STOP_WORDS]
    return list(_STEMMER.stem_words(found)) if found else []


def latin_language(text: str) -> str | None:
    """The language of a Latin-script text other than English ("es", "de", "fr", "pt", "it"), None for English or
    no vote (tiers/text/languages.py's function-word vote)."""
    latin = languages.split(text)[1]
    return languages.latin_language(latin, STOP_WORDS, text) if latin else None


_KANA = re.compile("[\u3040-\u30ff\uff66-\uff9f]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_HANGUL = re.compile("[\uac00-\ud7ff\u1100-\u11ff\u3130-\u318f]")
_CYRILLIC = re.compile("[\u0400-\u052f]")
_ARABIC = re.compile("[\u0600-\u06ff\u0750-\u077f]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")


def language(text: str) -> str:
    """The language a text is written in, as far as its script and the Latin-script vote tell: "ja" (any kana),
    "zh" (Han without kana), "ko" (Hangul), else by the letters most of it is written in: "ru" for Cyrillic, "ar"
    for Arabic script, for Latin "es", "de", "fr", "pt", "it" by the vote of function words and "en" for English
    or no vote (a name or tool written in Latin letters inside Chinese or Russian text does not change it)."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    if _HANGUL.search(text):
        return "ko"
    counts = {
        "ru": len(_CYRILLIC.findall(text)),
        "ar": len(_ARABIC.findall(text)),
        "en": len(_LATIN.findall(text)),
    }
    script = max(counts, key=lambda name: counts[name])
    if script != "en" or not counts["en"]:
        return script if counts[script] else "en"
    return latin_language(text) or "en"


def date_terms(day: date) -> list[str]:
    """The terms a date is indexed under: its year, month of year, month and day."""
    m = MARK
    return [f"{m}y{day.year}", f"{m}m{day.year}-{day.month}", f"{m}mo{day.month}", f"{m}d{day.isoformat()}"]


def asked_dates(query: str) -> list[str]:
    """The date terms a query names: "on May 3, 2023", "in October 2023", "in June", "in 2022"; also ISO dates
    and the Chinese, Japanese, Spanish, German, French, Russian and Arabic forms of tiers/text/dates.py."""
    m = MARK
    other = dates.named(query)
    out: list[str] = []
    for found in _DAY_MONTH_YEAR.finditer(query):
        day, month = (found.group(1), found.group(2)) if found.group(1) else (found.group(4), found.group(3))
        out.append(f"{m}d{int(found.group(5)):04d}-{_MONTHS.index(month.lower()) + 1:02d}-{int(day):02d}")
    out += [term for term in dict.fromkeys(f"{m}d{day.isoformat()}" for day in other.days) if term not in out]
    if not out:
        out += [f"{m}m{f.group(2)}-{_MONTHS.index(f.group(1).lower()) + 1}" for f in _MONTH_YEAR.finditer(query)]
        out += [term for term in dict.fromkeys(f"{m}m{y}-{n}" for y, n in other.months) if term not in out]
    if not out:
        out += [f"{m}mo{_MONTHS.index(f.group(1).lower()) + 1}" for f in _MONTH_ALONE.finditer(query)]
        out += [f"{m}y{f.group(1)}" for f in _YEAR.finditer(query)]
        named = [f"{m}mo{month}" for month in other.alone] + [f"{m}y{year}" for year in other.years]
        out += [term for term in dict.fromkeys(named) if term not in out]
    return out


def says_a_time(text: str) -> bool:
    return _TIME.search(text) is not None or dates.says_a_time(text)


def document_terms(content: str, occurred_at: datetime) -> str:
    """Every term a memory is indexed under, space-separated: its words, the time term, its dates."""
    found = words(content)
    if says_a_time(content):
        found.append(TIME_TERM)
    when = occurred_at.date()
    found += date_terms(when)
    for said in _RELATIVE_RE.findall(content):
        found += date_terms(when - timedelta(days=_RELATIVE[said.lower()]))
    for back in dates.relative_days(content):  # "昨天", "ayer", "вчера", "أمس"...
        found += date_terms(when - timedelta(days=back))
    return " ".join(found)


def length(terms: list[str]) -> int:
    """The length BM25 normalises by: the words and the time term, not the date terms (at least 1)."""
    return max(sum(1 for t in terms if not _DATE_TERM.match(t)), 1)
