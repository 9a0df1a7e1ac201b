"""How a model's cosines are read on the default model's scale, where recall compares them with fixed thresholds.

Recall's thresholds were set on the default model's cosines: how alike two memories must be for one to be a
later word on the other (tiers/recall/updates.py), how close a query must come to "my health" to list the user's
health facts first (`RecallSettings.kind_match`), to a profile entry to show it (tiers/namespace/search.py), and
how much an excerpt's choice weighs meaning against words (tiers/index/pieces.py). Another model's cosines may sit
elsewhere: e5's own vectors share one large direction, so any two texts sit at a cosine of 0.7 to 0.9 where the
default model puts unrelated texts near 0.2, and under them every pair passed every threshold. A `CosineScale`
keeps 1 at 1 and stretches the distance below it by one factor for each kind of pair (two memories, a query and a
memory, two queries: e5's prefixes make them differ), so that the median cosine of unrelated texts is the default
model's. Only comparisons with a threshold read it: ranking uses each model's own cosines (its order within a
query does not change under such a map, and the fusion with words reads each ranking's scores from its median to
its best).

The factors are fitted on NEUTRAL, thirty ordinary English sentences and questions on unrelated subjects written
for this (never benchmark data), by `python -m tests.bench.cosine_scale`: for each kind of pair, the median
cosine of two of them by each model. English, because that is where the thresholds were set on the default
model: its cosines of unrelated texts in other languages run higher (it was trained on English), and are no
scale to read by. A model whose unrelated texts of one language sit closer than English ones may read two
memories of that language by a stretch of its own (`memories_in`, fitted on tiers/model/neutral.py, fifteen of
NEUTRAL translated into seven languages): e5's own vectors needed it (Chinese 0.86 against English 0.78), the
multilingual model's vectors taken from their language's centres (tiers/model/centres.py) do not, and sit close to
the default model's floor in every language (its shipped scale stretches by about 0.95).
tests/tiers/model/test_multilingual.py checks that the shipped factors are what these texts give.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TypeVar

import numpy as np

Cosine = TypeVar("Cosine", float, np.ndarray)


@dataclass(frozen=True)
class CosineScale:
    """Cosines read on the default model's scale: `1 - stretch * (1 - cosine)`, a stretch for each kind of pair.

    The default model's is the identity: its cosines come back as given, the very same objects.
    """

    memories: float = 1.0  # two memories (both embedded as memories)
    queries: float = 1.0  # a query and a memory
    asked: float = 1.0  # a query and a short text embedded as a query (a kind's name, a profile entry)
    # Two memories both written in one of these languages (tiers/text/terms.py `language`): that language's own
    # stretch, where its unrelated texts sit closer than English ones (`memories` for any other pair).
    memories_in: tuple[tuple[str, float], ...] = ()

    def between_memories(self, cosine: Cosine, language: str | None = None) -> Cosine:
        """Two memories' cosine; `language`: the one both are written in, when they are."""
        return _stretched(cosine, dict(self.memories_in).get(language or "", self.memories))

    def between(self, cosines: np.ndarray, languages: Sequence[str]) -> np.ndarray:
        """A matrix of memories' cosines, each pair of one language read by that language's stretch; the very same
        matrix where no language has its own (the default model's)."""
        out = self.between_memories(cosines)
        for language, stretch in self.memories_in:
            rows = [i for i, said in enumerate(languages) if said == language]
            if len(rows) > 1:
                if out is cosines:
                    out = cosines.copy()
                out[np.ix_(rows, rows)] = _stretched(cosines[np.ix_(rows, rows)], stretch)
        return out

    def to_memory(self, cosine: Cosine) -> Cosine:
        return _stretched(cosine, self.queries)

    def to_query(self, cosine: Cosine) -> Cosine:
        return _stretched(cosine, self.asked)


AS_THEY_ARE = CosineScale()  # the default model's: its own scale


def _stretched(cosine: Cosine, stretch: float) -> Cosine:
    if stretch == 1.0:
        return cosine
    return 1.0 - stretch * (1.0 - cosine)


NEUTRAL = (
    "The museum opens at nine on weekdays and at ten on Sundays.",
    "Rain is expected over the coast later this afternoon.",
    "Water boils at a lower temperature on a high mountain.",
    "The library moved its children's books to the second floor.",
    "How long does it take to walk from the station to the harbour?",
    "Fresh bread sells out early at the corner bakery.",
    "Bridges expand slightly in the summer heat.",
    "Which road is shorter when the river is flooded?",
    "meeting notes",
    "I finally fixed the squeaky hinge on the back door.",
    "We are thinking about repainting the hallway a lighter colour.",
    "My neighbour lent me his ladder for the weekend.",
    "The concert was cancelled because of the storm.",
    "Should I bring anything to the picnic on Saturday?",
    "She started learning the violin when she was seven.",
    "Our team switched the weekly call to Thursday mornings.",
    "The ferry to the island leaves twice a day in winter.",
    "He keeps his grandfather's watch in a drawer by the bed.",
    "Tomatoes grow better against a south-facing wall.",
    "What time does the pharmacy close on public holidays?",
    "The old cinema downtown is being turned into flats.",
    "Our printer jams whenever the paper is slightly damp.",
    "Most of the guests arrived after the speeches had started.",
    "The recipe calls for two eggs and a cup of flour.",
    "Is the swimming pool open early on weekdays?",
    "A fox has been visiting the garden at night.",
    "The motorway is closed between junctions four and five.",
    "They bought a second-hand piano for the living room.",
    "The invoice template needs the new company address.",
    "Snow is rare here, but the hills get some every year.",
)


Embed = Callable[[Sequence[str]], np.ndarray]


def floors(memories: Embed, queries: Embed) -> tuple[float, float, float]:
    """The median cosine of two different NEUTRAL texts: (two memories, a query and a memory, two queries),
    through a model's two paths."""
    m, q = memories(NEUTRAL), queries(NEUTRAL)
    pairs = list(combinations(range(len(NEUTRAL)), 2))
    between = [float(m[i] @ m[j]) for i, j in pairs]
    to_memory = [float(q[i] @ m[j]) for i, j in pairs] + [float(q[j] @ m[i]) for i, j in pairs]
    to_query = [float(q[i] @ q[j]) for i, j in pairs]
    return float(np.median(between)), float(np.median(to_memory)), float(np.median(to_query))


def fit(
    default: tuple[float, float, float], model: tuple[float, float, float], languages: dict[str, float] | None = None
) -> CosineScale:
    """The scale that reads `model`'s floors as the default model's (each stretch rounded to two places);
    `languages`: the model's floor of two memories in each of these languages (`floor_between`), read as the
    default model's English one."""
    memories, queries, asked = (round((1.0 - d) / (1.0 - m), 2) for d, m in zip(default, model, strict=True))
    own = tuple((lang, round((1.0 - default[0]) / (1.0 - m), 2)) for lang, m in (languages or {}).items())
    return CosineScale(memories, queries, asked, own)


def floor_between(memories: Embed, texts: Sequence[str]) -> float:
    """The median cosine of two different texts embedded as memories (tiers/model/neutral.py's, of one language)."""
    m = memories(texts)
    return float(np.median([float(m[i] @ m[j]) for i, j in combinations(range(len(texts)), 2)]))
