"""The words of a text in any script: CJK as character bigrams, accents folded, stemmed only in a known language.

English is not handled here: `terms.words` keeps its own path for it, so English ranks exactly as before.
A text's language is told by its script, and for Latin script by a vote of function words (Spanish,
German, French, Portuguese, Italian against English): a text with no vote is taken as English, since
short English queries ("peanut allergy") carry no function words. Chinese, Japanese and Korean runs are
split into overlapping character bigrams (a lone character is kept as itself), as Lucene's CJK analyzer
does, since those scripts put no spaces between words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from py_rust_stemmers import SnowballStemmer

# Function words of the Latin-script languages told apart; words that are also common English ("a", "in",
# "on", "me", "die", "son") are left out so that an English text never votes for another language.
_LATIN_STOP = {
    "es": """el la los las lo un una unos unas del al y o pero que de en con por para sin sobre mi mis tu tus su sus
        nuestro nuestra es son fue era soy eres somos estoy esta estas este esto estos esas ese esa eso hay muy mas
        cual cuales donde cuando como quien quienes porque tengo tiene tienen tenia tuve hace se le les nos yo ella
        ellos ellas usted cuantos cuanta cuanto ya tambien solo si desde hasta durante segun hacia mucho mucha muchos
        muchas poco alguien nadie siempre nunca todavia aun aqui alli ahora despues antes luego entonces vamos voy
        estaba estan estamos tenemos puede puedo quiero quiere debe mismo misma otro otra otros otras cada toda todos
        todas nuestros nuestras vez""",
    "de": """der das dem den des ein eine einer eines einem einen und oder aber dass ist sind war waren bin bist
        hat habe haben hatte ich du er sie es wir ihr mein meine meinem meinen meiner dein deine sein seine unser
        nicht kein keine mit von zu zum zur bei nach aus auf fur uber wie wo wann warum welche welcher welches wer
        was auch noch schon sehr nur hier dort heisst seit bis ohne gegen durch vom beim ins unter vor zwischen wegen
        wahrend immer jetzt dann denn weil wenn ob sich mich dich uns euch ihm ihn ihnen ihre ihren ihrem ihrer seinem
        seinen seiner muss kann konnen soll wird werden wurde gibt geht mir wohin woher womit wofur wieviel welchen
        welchem jemand etwas nichts alles viel viele mehr gern gerne zusammen""",
    "fr": """de le la les un une des du et ou mais que qui quoi est sont suis es sommes etait ete avait ai avez avons
        je tu il elle nous vous ils elles mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ce cette
        ces dans pour par avec sans sur au aux pas ne plus tres quel quelle quels quelles ou quand comment pourquoi
        combien aussi deja chez avant apres doit etre avoir fait tout tous toute toutes rien jamais toujours alors
        donc lui eux moi toi celui celle ceci cela depuis jusqu lorsque ont peut faut peu bien comme""",
    "pt": """o os as um uma uns umas do da dos das e ou mas que de em no na nos nas com por para sem sobre meu minha
        meus minhas seu sua seus suas nosso nossa e sao foi era sou estou esta estao tem tenho tinha ja muito mais
        qual quais onde quando como quem porque voce ele ela eles elas nao tambem""",
    "it": """il lo la gli le un una uno del della dei delle dello e o ma che di da in con per su tra fra mio mia miei
        mie tuo tua suo sua nostro nostra sono sei siamo era ero ho hai ha abbiamo hanno non piu molto qual quale
        dove quando come chi perche anche gia io lui lei noi voi loro questo questa quello quella""",
}
_LATIN_STOPS = {lang: frozenset(text.split()) for lang, text in _LATIN_STOP.items()}
# Function words that are also English words: never voted by, but left out once the language is known.
_ALSO = {
    "es": "a no me te se",
    "de": "in an am im die so",
    "fr": "a en on se y d l j m n s t c qu lorsqu puisqu",  # and the letters an elision leaves: d'équipe, qu'il
    "pt": "a no me se",
    "it": "a no l dell nell dall sull quest quell",
}
_ALSO_SETS = {lang: frozenset(words.split()) for lang, words in _ALSO.items()}
_DROPPED = {lang: stops | _ALSO_SETS[lang] for lang, stops in _LATIN_STOPS.items()}


def _by_word(sets: dict[str, frozenset[str]]) -> dict[str, tuple[str, ...]]:
    """Each word of these sets with the languages whose set holds it: one lookup a word where a vote reads them."""
    found: dict[str, list[str]] = {}
    for lang, held in sets.items():
        for word in held:
            found.setdefault(word, []).append(lang)
    return {word: tuple(langs) for word, langs in found.items()}


_STOP_OF = _by_word(_LATIN_STOPS)
_ALSO_OF = _by_word(_ALSO_SETS)
_VOWEL = "aeiouyhàâäéèêëîïôöùûü"
# An elided article or pronoun before a vowel: French writes them everywhere; English has none of these forms
# ("I'm", "don't" and "John's" put the apostrophe after a word, not after a lone letter).
_ELISIONS = {
    "fr": re.compile(rf"(?<![\w'’])(?:qu|jusqu|lorsqu|puisqu|[ldjmnstc])['’](?=[{_VOWEL}])"),
    "it": re.compile(rf"(?<![\w'’])(?:l|dell|nell|all|dall|sull|un|quest|quell)['’](?=[{_VOWEL}])"),
}
# Letters each of these languages writes and English does not.
_LETTERS = {
    "es": frozenset("ñáéíóú¿¡"),
    "de": frozenset("äöüß"),
    "fr": frozenset("àâçéèêëîïôùûœ"),
    "pt": frozenset("ãõçáâêôàéíóú"),
    "it": frozenset("àèéìòù"),
}
_OWN_LETTERS = {
    lang: letters.difference(*(o for k, o in _LETTERS.items() if k != lang)) for lang, letters in _LETTERS.items()
}
_LATIN_STEMMER = {"es": "spanish", "de": "german", "fr": "french", "pt": "portuguese", "it": "italian"}
_RUSSIAN_STOP = frozenset(
    """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот от
    меня еще нет о из ему теперь когда даже ну ли если уже или ни быть был была были него до вас нибудь опять уж
    вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем сам чтобы без будто чего
    раз тоже себе под будет тогда кто этот того потому этого какой совсем ним здесь этом один почти мой моя мою
    мое мои моего моей тем чтоб нее сейчас были куда зачем всех никогда можно при наконец два об другой хоть
    после над больше тот через эти нас про всего них какая много разве три эту впрочем хорошо свою этой перед
    иногда лучше чуть том нельзя такой им более всегда конечно всю между это как зовут сколько""".split()  # noqa: SIM905
)
_NOT_RUSSIAN = set("іїєґўђјљњћџѓќѕ")  # letters of Ukrainian, Belarusian, Serbian, Macedonian, not of Russian
_ARABIC_STOP = frozenset(
    """في من على إلى الى عن مع هذا هذه ذلك تلك التي الذي الذين هو هي هم أنا انا نحن أنت انت كان كانت يكون ما
    ماذا متى أين اين كيف لماذا هل كم أي اي أو او ثم لا لم لن قد كل بعض عند بين بعد قبل حتى إن ان أن""".split()  # noqa: SIM905
)
_NOT_ARABIC = set("پچژگکیٹڈڑںےھ")  # letters of Persian and Urdu, not of Arabic
_GREEK_STOP = frozenset(
    """ο η το οι τα του της των τον την τη στο στη στην στον στα μου σου μας σας και σε με για απο που ειναι
    ποιο ποια ποιος τι πως ποτε ενα μια ενας θα να δεν""".split()  # noqa: SIM905
)
_STEMMERS: dict[str, SnowballStemmer] = {}


def _stemmer(language: str) -> SnowballStemmer:
    if language not in _STEMMERS:
        _STEMMERS[language] = SnowballStemmer(language)
    return _STEMMERS[language]


def _mark_ranges() -> str:
    """A character class body of every combining mark, so a word is not cut at one (Arabic vowels, Hindi signs)."""
    out, start, last = [], -1, -2
    for code in range(0x0300, 0x10000):
        if unicodedata.category(chr(code)).startswith("M"):
            if code != last + 1:
                if start >= 0:
                    out.append((start, last))
                start = code
            last = code
    out.append((start, last))
    return "".join(f"\\u{a:04x}-\\u{b:04x}" if a != b else f"\\u{a:04x}" for a, b in out)


_TOKEN = re.compile(f"[\\w{_mark_ranges()}]+")
# Han (with extensions and compatibility forms), kana, Hangul: the scripts written without spaces.
_CJK = (
    "\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3040-\u309f\u30a0-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f\u1100-\u11ff"
    "\U00020000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{_CJK}]+|[^{_CJK}]+")
_IS_CJK = re.compile(f"[{_CJK}]")
_FOLDED_BASES = ((0x0041, 0x024F), (0x1E00, 0x1EFF), (0x0370, 0x03FF), (0x1F00, 0x1FFF), (0x0590, 0x06FF))


def _folds(base: str) -> bool:
    """Whether marks on `base` are dropped: Latin accents, Greek tonos, Hebrew points and Arabic vowel signs,
    which writers put or leave out at will. Other marks are parts of letters (kana voicing, Cyrillic й)."""
    code = ord(base)
    return any(low <= code <= high for low, high in _FOLDED_BASES)


def fold(text: str) -> str:
    """`text` case-folded, width-normalised (NFKC) and without the accents a writer may leave out."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    kept: list[str] = []
    base = " "
    for char in decomposed:
        if unicodedata.combining(char):
            if _folds(base):
                continue
        else:
            base = char
        kept.append(char)
    return (
        unicodedata.normalize("NFC", "".join(kept)).replace("\u0640", "").replace("ё", "е")
    )  # Arabic stretching, Russian ё as е


_ASCII_WORD = re.compile(r"[a-z]+")


def may_hold(text: str, words: frozenset[str], prefixes: tuple[str, ...] = ()) -> bool:
    """False only when `text` is written in ASCII letters (any other character a mark, a dash, a curly quote) and
    holds none of `words` as a word, nor a word that begins with one of `prefixes`.

    Rules for other languages are alternations tried at every character, most of a write's time beside the
    model for an English note; where each rule's ASCII form holds one of a few words, this skips them at once.
    """
    if not text.isascii() and any(char.isalnum() for char in text if not char.isascii()):
        return True
    found = set(_ASCII_WORD.findall(text.lower()))
    return not found.isdisjoint(words) or (bool(prefixes) and any(word.startswith(prefixes) for word in found))


def is_cjk(char: str) -> bool:
    return _IS_CJK.match(char) is not None


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run; a single character stands alone."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def latin_language(found: Iterable[str], english_stop: frozenset[str], text: str = "") -> str | None:
    """The language of lower-cased, folded Latin-script words by a vote of function words; None for English
    or no vote (a language needs two votes, and more than English's among the words it does not share: "in" and
    "die" are German too, "a" Spanish and French).

    `text`, the words as written, adds two kinds of evidence: each French elision (d'équipe, qu'il, l'école) is a
    vote, and a language that has a vote of its own gains one for each of up to two letters it writes and English
    does not (ñ, ä, è...). English words borrowed with their accents ("crème brûlée", "café") have no function
    word beside them to vote, so they never turn an English text into another language. A tie goes to the
    language with evidence of its own (an elision, a letter none of the others writes).
    """
    counts = dict.fromkeys(_LATIN_STOPS, 0)
    english = 0
    shared = dict.fromkeys(_LATIN_STOPS, 0)  # English function words the language also has ("in", "die", "a")
    for word in found:
        if word in english_stop:
            english += 1
            for lang in _ALSO_OF.get(word, ()):
                shared[lang] += 1
        for lang in _STOP_OF.get(word, ()):
            counts[lang] += 1
    own = dict.fromkeys(_LATIN_STOPS, 0)  # evidence no other of these languages shares, to settle a tie
    if text and ("'" in text or "’" in text or not text.isascii()):
        lowered = text.lower()
        for lang, elided in _ELISIONS.items():
            own[lang] += len(elided.findall(lowered))
            counts[lang] += own[lang]
        written = set(lowered)
        for lang, letters in _LETTERS.items():
            if counts[lang]:
                counts[lang] += min(len(letters & written), 2)
                own[lang] += bool(_OWN_LETTERS[lang] & written)
    lang = max(counts, key=lambda name: (counts[name], own[name]))
    votes = counts[lang]
    return lang if votes >= 2 and votes > english - shared[lang] else None


def _script(word: str) -> str:
    code = ord(word[0])
    if code < 0x0250 or 0x1E00 <= code <= 0x1EFF:
        return "latin"
    if 0x0370 <= code <= 0x03FF or 0x1F00 <= code <= 0x1FFF:
        return "greek"
    if 0x0400 <= code <= 0x052F:
        return "cyrillic"
    if 0x0600 <= code <= 0x06FF or 0x0750 <= code <= 0x077F:
        return "arabic"
    return "other"


def split(text: str) -> tuple[list[str], list[str]]:
    """(the words of `text` folded, in order, CJK runs as bigrams; its Latin-script words alone)."""
    out: list[str] = []
    latin: list[str] = []
    for token in _TOKEN.findall(fold(text)):
        for run in _CJK_RUN.findall(token):
            if is_cjk(run[0]):
                out += bigrams(run)
            else:
                out.append(run)
                if _script(run) == "latin":
                    latin.append(run)
    return out, latin


def words(text: str, english: SnowballStemmer, english_stop: frozenset[str]) -> list[str]:
    """The stemmed words of a text in any script, without function words; English words as terms.py makes them."""
    found, latin = split(text)
    lang = latin_language(latin, english_stop, text)
    latin_stop = _DROPPED[lang] if lang else english_stop
    latin_stemmer = _stemmer(_LATIN_STEMMER[lang]) if lang else english
    cyrillic = [w for w in found if _script(w) == "cyrillic"]
    russian = bool(cyrillic) and not _NOT_RUSSIAN.intersection("".join(cyrillic))
    russian = russian and (
        any(w in _RUSSIAN_STOP for w in cyrillic) or bool(set("ыэъ").intersection("".join(cyrillic)))
    )
    arabic = not _NOT_ARABIC.intersection(text)
    out: list[str] = []
    for word in found:
        if is_cjk(word[0]):
            out.append(word)
            continue
        script = _script(word)
        if script == "latin":
            if word not in latin_stop:
                out.append(latin_stemmer.stem_word(word))
        elif script == "cyrillic":
            if word not in _RUSSIAN_STOP or not russian:
                out.append(_stemmer("russian").stem_word(word) if russian else word)
        elif script == "arabic":
            if word not in _ARABIC_STOP or not arabic:
                out.append(_stemmer("arabic").stem_word(word) if arabic else word)
        elif script == "greek":
            if word not in _GREEK_STOP:
                out.append(_stemmer("greek").stem_word(word))
        else:
            out.append(word)
    return out
