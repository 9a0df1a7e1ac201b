"""How long a text is in any script: its words, and the tokens a language model reads for it.

Words are split at whitespace, as English is written; in Chinese and Japanese, which put no spaces between
words, each Han or kana character counts as a word of its own, so a long Chinese memory is cut into pieces
and excerpts as a long English one is. A text with no such character is split exactly as `str.split` does.

Tokens are counted from a weight per character, in quarters of a token: a Latin letter, a digit, punctuation,
a symbol or an emoji weighs one (four characters a token, as English always was); a Greek, Cyrillic, Armenian
or Georgian letter three; a character of any other script (Han, kana, Hangul, Arabic, Hebrew, Indic, Thai...)
five. The weights were chosen against real tokenizers of language models (docs/benchmark.md, "Languages"):
a budget in tokens should not hold more than that many tokens of the reader's in any script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Han (with extensions and compatibility forms), kana and the CJK punctuation between them: written without
# spaces, so each character is a word. Hangul is left out: Korean puts spaces between words.
_UNSPACED = (
    "\u2e80-\u2fdf\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uff61-\uff9f\U00020000-\U0003134f"
)
_HAS_UNSPACED = re.compile(f"[{_UNSPACED}]")
_UNIT = re.compile(f"[{_UNSPACED}]|[^{_UNSPACED}]+")
# Three quarters of a token: the alphabets a little denser than Latin in a tokenizer's vocabulary.
_ALPHABET = re.compile(
    "[\u0370-\u03ff\u1f00-\u1fff\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f\u0530-\u058f\u10a0-\u10ff\u1c90-\u1cbf]"
)
_ALPHABET_EXTRA = 2
# Five quarters: every other script past Latin and those alphabets (Hebrew and Arabic on, but Georgian, the
# punctuation, symbols and emoji from U+2000, and the Latin extensions from U+1E00, stay at one quarter).
_DENSE = re.compile(
    "[\u0590-\u109f\u1100-\u1c7f\u1cc0-\u1cff\u2e80-\ua63f\ua6a0-\ua6ff\ua800-\uabff\uac00-\ud7ff\uf900-\ufaff"
    "\ufb1d-\ufdff\ufe70-\ufeff\uff00-\uffef\U00010000-\U0001efff\U00020000-\U0003ffff]"
)
_DENSE_EXTRA = 4


def quarters(text: str) -> int:
    """What `text` weighs in quarters of a token: its length in characters for Latin script, more for others."""
    if text.isascii():
        return len(text)
    return len(text) + _ALPHABET_EXTRA * len(_ALPHABET.findall(text)) + _DENSE_EXTRA * len(_DENSE.findall(text))


def tokens(text: str) -> int:
    """Tokens a language model reads for `text`, estimated by script (`quarters`), rounded up."""
    return -(-quarters(text) // 4)


@dataclass(frozen=True)
class Words:
    """A text's words in order; `glued[i]` says word i follows word i-1 with no space (None: none does)."""

    words: list[str]
    glued: list[bool] | None = None

    def __len__(self) -> int:
        return len(self.words)

    def join(self, start: int, end: int) -> str:
        """Words `start` to `end` (end excluded) as text: a space between two words unless they were glued."""
        if self.glued is None:
            return " ".join(self.words[start:end])
        out: list[str] = []
        for at in range(start, min(end, len(self.words))):
            if out and not self.glued[at]:
                out.append(" ")
            out.append(self.words[at])
        return "".join(out)


def words(text: str) -> Words:
    """The words of `text`: split at whitespace, each Han or kana character a word (`str.split` where none is)."""
    spaced = text.split()
    if not _HAS_UNSPACED.search(text):
        return Words(spaced)
    found: list[str] = []
    glued: list[bool] = []
    for chunk in spaced:
        for at, unit in enumerate(_UNIT.findall(chunk)):
            found.append(unit)
            glued.append(at > 0)
    return Words(found, glued)


def count(text: str) -> int:
    """How many words `text` has (`words`)."""
    if not _HAS_UNSPACED.search(text):
        return len(text.split())
    return sum(len(_UNIT.findall(chunk)) for chunk in text.split())
