"""The multilingual model's cosine scale (tiers/model/scale.py), fitted anew on its neutral texts.

    PYTHONPATH=. .venv/bin/python -m tests.bench.cosine_scale

Prints each model's floors (the median cosine of two different neutral texts: two memories, a query and a
memory, two queries; two memories of one language, on tiers/model/neutral.py's texts) and the `CosineScale` that reads
the multilingual model's on the default model's; the product ships it as tiers/model/multilingual.py `SCALE`.
"""

from __future__ import annotations

from tiers.model.embedder import FastEmbedder, embed_queries
from tiers.model.multilingual import SCALE, MultilingualEmbedder
from tiers.model.neutral import NEUTRAL_IN
from tiers.model.scale import fit, floor_between, floors


def main() -> int:
    default, multilingual = FastEmbedder(), MultilingualEmbedder()
    default_floors = floors(default.embed, lambda texts: embed_queries(default, texts))
    model_floors = floors(multilingual.embed, multilingual.embed_queries)
    languages = {lang: floor_between(multilingual.embed, texts) for lang, texts in NEUTRAL_IN.items()}
    print("floors (two memories, a query and a memory, two queries):")
    print(f"  {default.name}: " + ", ".join(f"{f:.3f}" for f in default_floors))
    print(f"  {multilingual.name}: " + ", ".join(f"{f:.3f}" for f in model_floors))
    print(f"  {multilingual.name}, read on the scale: " + ", ".join(f"{f:.3f}" for f in scaled(model_floors)))
    print(
        f"  {multilingual.name}, two memories of one language: "
        + ", ".join(f"{k} {v:.3f}" for k, v in languages.items())
    )
    print(f"fitted: {fit(default_floors, model_floors, languages)}")
    print(f"shipped: {SCALE}")
    return 0


def scaled(model_floors: tuple[float, float, float]) -> tuple[float, float, float]:
    return (
        SCALE.between_memories(model_floors[0]),
        SCALE.to_memory(model_floors[1]),
        SCALE.to_query(model_floors[2]),
    )


if __name__ == "__main__":
    raise SystemExit(main())
