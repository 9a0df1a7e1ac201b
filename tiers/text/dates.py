"""Dates said in words other than English: ISO dates, Chinese and Japanese date forms, and the days, months and
relative days of Spanish, German, French, Russian and Arabic (docs/languages.md lists what is understood).

terms.py keeps its English rules as they were and adds what these find. Nothing here guesses: a form is read
only where it cannot mean anything else (a month name after a preposition or beside a day or a year, "3月" but
not "3个月"), and a text in another language simply yields nothing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date

from tiers.text.languages import may_hold

# Arabic-Indic digits as ASCII ones (NFKC already turns full-width digits into ASCII).
_DIGITS = str.maketrans("٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹", "01234567890123456789")
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})"


def _plain(text: str) -> str:
    """`text` with full-width forms and Arabic digits as ASCII, accents kept (März, décembre): what the patterns
    read, each ignoring case."""
    return unicodedata.normalize("NFKC", text).translate(_DIGITS)


def _alternatives(months: dict[int, str]) -> tuple[str, dict[str, int]]:
    """A regex alternation of every month name (longest first, so "تشرين الثاني" before "تشرين") and its number."""
    number = {name: month for month, names in months.items() for name in names.split(",")}
    return "|".join(sorted(map(re.escape, number), key=len, reverse=True)), number


# The months as each language writes them (Russian in the cases dates use; Arabic in the Egyptian and the
# Levantine names), lower-cased; a comma separates the forms of one month.
_MONTH_NAMES = {
    "es": "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre,setiembre|octubre|noviembre|diciembre",
    "de": "januar,jänner|februar|märz,maerz|april|mai|juni|juli|august|september|oktober|november|dezember",
    "fr": "janvier|février,fevrier|mars|avril|mai|juin|juillet|août,aout|septembre|octobre|novembre|décembre,decembre",
    "ru": "январь,января,январе|февраль,февраля,феврале|март,марта,марте|апрель,апреля,апреле|май,мая,мае|"
    "июнь,июня,июне|июль,июля,июле|август,августа,августе|сентябрь,сентября,сентябре|октябрь,октября,октябре|"
    "ноябрь,ноября,ноябре|декабрь,декабря,декабре",
    "ar": "يناير,كانون الثاني|فبراير,شباط|مارس,آذار|أبريل,ابريل,نيسان|مايو,أيار,ايار|يونيو,يونيه,حزيران|"
    "يوليو,يوليه,تموز|أغسطس,اغسطس,آب|سبتمبر,أيلول,ايلول|أكتوبر,اكتوبر,تشرين الأول,تشرين الاول|"
    "نوفمبر,تشرين الثاني|ديسمبر,كانون الأول,كانون الاول",
}
# The words before a month that say it is meant as a time ("en marzo", "im März", "в марте", "في مارس").
_BEFORE_MONTH = {
    "es": "en|de|desde|durante|hasta|para|principios de|finales de|mediados de",
    "de": "im|seit|ab|bis|vom|zum|anfang|ende|mitte",
    "fr": "en|de|d'|d’|depuis|début|fin|mi-|courant",
    "ru": "в|во|с|до|к|на|середине|конце|начале",
    "ar": "في|منذ|حتى|خلال|شهر|بداية|نهاية|أواخر|أوائل",
}
_MONTHS: dict[str, tuple[str, dict[str, int]]] = {
    lang: _alternatives({i + 1: names for i, names in enumerate(spec.split("|"))})
    for lang, spec in _MONTH_NAMES.items()
}
_MONTH_WORDS = frozenset(name.split()[0] for _, number in _MONTHS.values() for name in number)
_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
_ENGLISH_MONTHS = frozenset({"april", "august", "september", "november"})  # also German
_B, _E = r"(?<!\w)", r"(?!\w)"  # word edges that hold in every script
# "3 de marzo de 2027", "3. März 2027", "3 mars 2027", "1er mars 2027", "3 марта 2027 года", "3 مارس 2027".
_FULL = {
    lang: re.compile(rf"{_B}{_DAY}(?:\.|er)?\s+(?:de\s+)?({names})(?:\s+(?:de|del)?\s*,?\s*{_YEAR})?{_E}", re.I)
    for lang, (names, _) in _MONTHS.items()
}
_MONTH_YEAR = {
    lang: re.compile(rf"{_B}({names})\s+(?:de\s+|del\s+)?{_YEAR}{_E}", re.I) for lang, (names, _) in _MONTHS.items()
}
_MONTH_ALONE = {
    lang: re.compile(rf"{_B}(?:{_BEFORE_MONTH[lang]})\s*({_MONTHS[lang][0]}){_E}", re.I) for lang in _MONTHS
}
_ISO_DAY = re.compile(rf"(?<![\d-]){_YEAR}-(\d\d)-(\d\d)(?![\d-])")
_ISO_MONTH = re.compile(rf"(?<![\d-]){_YEAR}-(\d\d)(?![\d-])")
_DOTTED = re.compile(rf"(?<![\d.]){_DAY}\.(\d{{1,2}})\.{_YEAR}(?![\d.])")  # 3.3.2027: German and Russian
_CJK_DAY = re.compile(rf"(?<!\d){_YEAR}\s*年\s*(\d{{1,2}})\s*月\s*(\d{{1,2}})\s*[日号號]")
_CJK_MONTH_YEAR = re.compile(rf"(?<!\d){_YEAR}\s*年\s*(\d{{1,2}})\s*月")
_CJK_NUMERAL_MONTH = "十二|十一|十|一|二|三|四|五|六|七|八|九"
_CJK_MONTH = re.compile(rf"(?<![\d年])(\d{{1,2}}|{_CJK_NUMERAL_MONTH})\s*月")
_CJK_YEAR = re.compile(rf"(?<!\d){_YEAR}\s*年")
_NUMERAL = {name: i + 1 for i, name in enumerate("一 二 三 四 五 六 七 八 九 十 十一 十二".split())}  # noqa: SIM905

# Days back from the day a memory was said, by what it says: yesterday, the day before, last week, last month,
# last year. Chinese and Japanese need no word edges; the others do.
_RELATIVE_CJK = {
    "昨天": 1, "昨晚": 1, "昨日": 1, "昨夜": 1, "前天": 2, "一昨日": 2, "おととい": 2,
    "上周": 7, "上星期": 7, "上个星期": 7, "上礼拜": 7, "先週": 7,
    "上个月": 30, "上月": 30, "先月": 30, "去年": 365, "昨年": 365,
}  # fmt: skip
_RELATIVE_WORDS = {
    "ayer": 1, "anoche": 1, "anteayer": 2, "antier": 2, "la semana pasada": 7, "el mes pasado": 30,
    "el año pasado": 365,
    "gestern": 1, "vorgestern": 2, "letzte woche": 7, "letzten woche": 7, "vergangene woche": 7,
    "letzten monat": 30, "vergangenen monat": 30, "letztes jahr": 365, "vergangenes jahr": 365,
    "letzten jahr": 365,
    "hier": 1, "avant-hier": 2, "la semaine dernière": 7, "le mois dernier": 30, "l'année dernière": 365,
    "l’année dernière": 365, "l'an dernier": 365, "l’an dernier": 365,
    "вчера": 1, "позавчера": 2, "на прошлой неделе": 7, "в прошлом месяце": 30, "в прошлом году": 365,
    "أمس": 1, "امس": 1, "الأمس": 1, "بالأمس": 1, "البارحة": 1, "أول أمس": 2, "أول من أمس": 2, "اول امس": 2,
    "الأسبوع الماضي": 7, "الاسبوع الماضي": 7, "الشهر الماضي": 30, "العام الماضي": 365, "السنة الماضية": 365,
}  # fmt: skip
_RELATIVE_RE = re.compile(
    "|".join(sorted(map(re.escape, _RELATIVE_CJK), key=len, reverse=True))
    + "|"
    + rf"{_B}(?:و)?(?:"
    + "|".join(sorted(map(re.escape, _RELATIVE_WORDS), key=len, reverse=True))
    + rf"){_E}",
    re.I,
)
# "hier" is also "here" in German and Dutch: read as yesterday only beside a French word.
_FRENCH = re.compile(
    rf"{_B}(?:je|il|elle|nous|vous|les|une|au|aux|à|est|ai|avons|suis|était|avec|chez){_E}|{_B}[jcld]['’]\w", re.I
)
# Words that say a time without naming a date: today, tomorrow, the weekdays, "ago", "recently".
_TIME_WORDS = re.compile(
    "今天|明天|后天|今日|明日|明後日|本周|这周|下周|下个月|今年|明年|来年|今週|来週|来月|今月|最近|星期[一二三四五六日天]|"
    "礼拜[一二三四五六日天]|[月火水木金土日]曜日|"
    + rf"{_B}(?:hoy|mañana|lunes|martes|miércoles|jueves|viernes|sábado|domingo|hace poco|recientemente|"
    r"hace\s+(?:\d+|un|una|unos|unas|dos|tres)\s+(?:día|semana|mes|año|hora)\w*|"
    r"heute|morgen|übermorgen|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|vor kurzem|neulich|"
    r"vor\s+(?:\d+|einem|einer|zwei|drei)\s+(?:tag|woche|monat|jahr|stunde)\w*|"
    r"aujourd'hui|aujourd’hui|demain|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|récemment|"
    r"il y a\s+(?:\d+|un|une|deux|trois|quelques)\s+(?:jour|semaine|mois|an|année|heure)\w*|"
    r"сегодня|завтра|послезавтра|понедельник\w*|вторник\w*|(?:в|по)\s+сред(?:у|ам)|четверг\w*|пятниц\w+|"
    r"суббот\w+|воскресень\w+|назад|недавно|"
    rf"اليوم|غدا|غداً|الاثنين|الإثنين|الثلاثاء|الأربعاء|الاربعاء|الخميس|الجمعة|السبت|الأحد|الاحد|منذ|مؤخرا|مؤخراً){_E}",
    re.I,
)
# Each ASCII form of the rules above holds one of these words: an English note without them skips the rules
# (languages.may_hold). A relative day's ASCII forms open with their first word ("la semana pasada", "l'an dernier").
_TIME_OPENERS = frozenset(
    (  # noqa: SIM905
        "hoy lunes martes jueves viernes domingo hace recientemente heute morgen montag dienstag mittwoch donnerstag "
        "freitag samstag sonntag vor neulich aujourd demain lundi mardi mercredi jeudi vendredi samedi dimanche il"
    ).split()
)
_RELATIVE_OPENERS = frozenset(_WORD.findall(said)[0] for said in _RELATIVE_WORDS if said.isascii())
# Where a capitalised word is a name ("I met Ayer") unless it opens a sentence ("Ayer fui al médico").
_OPENS = re.compile(r"(?:^|[.!?¡¿:;\"«(\n]\s*)$")


@dataclass
class Named:
    """The dates a text names: whole days, months of a year (year, month), months alone, years."""

    days: list[date] = field(default_factory=list)
    months: list[tuple[int, int]] = field(default_factory=list)
    alone: list[int] = field(default_factory=list)
    years: list[int] = field(default_factory=list)


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:  # 31 February, month 13: not a date
        return None


def named(text: str) -> Named:
    """The dates `text` names in ISO form, in Chinese or Japanese forms, or in the words of the languages above."""
    return _named(_plain(text))


def _named(plain: str) -> Named:
    out = Named()
    if "月" in plain:
        for said in _CJK_MONTH.findall(plain):
            month = _NUMERAL[said] if said in _NUMERAL else int(said)
            if 1 <= month <= 12:
                out.alone.append(month)
    if not _MONTH_WORDS.isdisjoint(_WORD.findall(plain.lower())):  # one cheap test before each language's
        _in_words(plain, out)
    if _DIGIT.search(plain) is None:  # every form below has a digit (\d, as its patterns)
        return out
    iso, cjk = "-" in plain, "年" in plain  # what each form needs, tested before its pattern
    for y, m, d in (_ISO_DAY.findall(plain) if iso else []) + (_CJK_DAY.findall(plain) if cjk else []):
        if (found := _day(int(y), int(m), int(d))) is not None:
            out.days.append(found)
    for d, m, y in _DOTTED.findall(plain) if "." in plain else []:
        if (found := _day(int(y), int(m), int(d))) is not None:
            out.days.append(found)
    for y, m in (_ISO_MONTH.findall(plain) if iso else []) + (_CJK_MONTH_YEAR.findall(plain) if cjk else []):
        if 1 <= int(m) <= 12:
            out.months.append((int(y), int(m)))
    out.years += [int(y) for y in _CJK_YEAR.findall(plain)] if cjk else []
    return out


def _in_words(plain: str, out: Named) -> None:
    """Add to `out` the dates `plain` names with a month's name in one of the languages."""
    for lang, (_, number) in _MONTHS.items():
        for d, name, y in _FULL[lang].findall(plain):
            if y and (found := _day(int(y), number[name.lower()], int(d))) is not None:
                out.days.append(found)
            elif not y and name.lower() not in _ENGLISH_MONTHS:  # "13 August" alone: English is read as before
                out.alone.append(number[name.lower()])
        out.months += [(int(y), number[name.lower()]) for name, y in _MONTH_YEAR[lang].findall(plain)]
        out.alone += [number[name.lower()] for name in _MONTH_ALONE[lang].findall(plain)]


def relative_days(text: str) -> list[int]:
    """Days back from when `text` was said, one for each "yesterday", "last week"... it says (not in English)."""
    return _relative_days(_plain(text))


def _relative_days(plain: str) -> list[int]:
    if not may_hold(plain, _RELATIVE_OPENERS):
        return []
    out: list[int] = []
    for found in _RELATIVE_RE.finditer(plain):
        said = found.group()
        if said in _RELATIVE_CJK:
            out.append(_RELATIVE_CJK[said])
            continue
        if said[0].isupper() and said[0].isascii() and not _OPENS.search(plain, 0, found.start()):
            continue  # a name
        said = said.lower().removeprefix("و")
        if said == "hier" and not _FRENCH.search(plain):
            continue
        out.append(_RELATIVE_WORDS[said])
    return out


def says_a_time(text: str) -> bool:
    """Whether `text` says a time in one of the forms above (a date, a relative day, a weekday, "today")."""
    plain = _plain(text)
    if (may_hold(plain, _TIME_OPENERS) and _TIME_WORDS.search(plain)) or _relative_days(plain):
        return True
    found = _named(plain)
    return bool(found.days or found.months or found.alone or found.years)
