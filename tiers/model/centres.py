"""Where each language sits in the multilingual model's space, and vectors taken from there.

A multilingual model's vector says which language a text is written in as well as what it says: e5's vectors of
two unrelated texts of one language sit closer than those of a question and the fact that answers it in another
language, so a question asked in Chinese found Chinese notes first and the English fact it asked about far below
them (and an English question over a Chinese fact, English notes). Each language's centre is the mean vector of
its REFERENCE sentences, the same sixteen everyday sentences in each of eight languages (written for this, never
benchmark data; the same sentences, so that two centres differ by their language and not by what was said), one
centre for memories and one for queries (e5 reads each with its own prefix). A vector less the centre of its
text's language (tiers/text/terms.py `language`), made unit again, keeps what the text says and loses most of the
language it says it in. A language without sentences here (Korean, Portuguese, Italian...) is taken from the
mean of the centres. docs/model.md says what it changed, docs/benchmark.md ("Languages") has the runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from tiers.errors import CorruptFile, StorageError
from tiers.files import read_json_object, write_atomic
from tiers.text.terms import language

Embed = Callable[[Sequence[str]], np.ndarray]
ANY = "*"  # the centre of a language without sentences here: the mean of the others

REFERENCE: dict[str, tuple[str, ...]] = {
    "en": (
        "The train to the airport leaves every twenty minutes.",
        "I forgot my umbrella at the office again.",
        "Could you send me the slides before the meeting?",
        "The garden needs water after such a dry week.",
        "We are planning a small dinner for Friday evening.",
        "This recipe uses less sugar than the original one.",
        "How many chairs do we need for the workshop?",
        "The printer on the third floor is out of paper.",
        "He walks the dog along the river every morning.",
        "Remember to lock the back door before you leave.",
        "The report is due at the end of the month.",
        "My sister finally finished painting the kitchen.",
        "Which bus goes to the city centre on Sundays?",
        "The new shelves arrived but one screw is missing.",
        "I usually drink tea in the afternoon.",
        "The children built a snowman in the park.",
    ),
    "zh": (
        "去机场的火车每二十分钟一班。",
        "我又把雨伞忘在办公室了。",
        "你能在开会前把幻灯片发给我吗？",
        "这么干的一周之后，花园需要浇水了。",
        "我们打算周五晚上办一个小型晚餐。",
        "这个食谱用的糖比原来的少。",
        "研讨会我们需要多少把椅子？",
        "三楼的打印机没纸了。",
        "他每天早上沿着河边遛狗。",
        "离开前记得锁上后门。",
        "报告月底要交。",
        "我姐姐终于把厨房刷完了。",
        "星期天哪路公交车去市中心？",
        "新书架到了，但是少了一颗螺丝。",
        "我通常下午喝茶。",
        "孩子们在公园里堆了一个雪人。",
    ),
    "ja": (
        "空港行きの電車は二十分おきに出ます。",
        "また傘を会社に忘れてしまった。",
        "会議の前にスライドを送ってもらえますか？",
        "こんなに乾いた一週間の後では庭に水やりが必要だ。",
        "金曜日の夜にささやかな夕食会を計画しています。",
        "このレシピは元のものより砂糖が少ない。",
        "ワークショップには椅子がいくつ必要ですか？",
        "三階のプリンターは紙が切れている。",
        "彼は毎朝川沿いで犬を散歩させる。",
        "出かける前に裏口の鍵を閉めるのを忘れないで。",
        "報告書の締め切りは月末です。",
        "姉がやっと台所のペンキ塗りを終えた。",
        "日曜日に市の中心部へ行くバスはどれですか？",
        "新しい棚が届いたが、ねじが一本足りない。",
        "私はたいてい午後に紅茶を飲む。",
        "子どもたちは公園で雪だるまを作った。",
    ),
    "es": (
        "El tren al aeropuerto sale cada veinte minutos.",
        "Otra vez olvidé el paraguas en la oficina.",
        "¿Me puedes enviar las diapositivas antes de la reunión?",
        "El jardín necesita agua después de una semana tan seca.",
        "Estamos organizando una cena pequeña para el viernes por la noche.",
        "Esta receta lleva menos azúcar que la original.",
        "¿Cuántas sillas necesitamos para el taller?",
        "A la impresora del tercer piso se le acabó el papel.",
        "Pasea al perro junto al río todas las mañanas.",
        "Acuérdate de cerrar la puerta de atrás antes de salir.",
        "El informe se entrega a final de mes.",
        "Mi hermana por fin terminó de pintar la cocina.",
        "¿Qué autobús va al centro los domingos?",
        "Llegaron las estanterías nuevas, pero falta un tornillo.",
        "Normalmente tomo té por la tarde.",
        "Los niños hicieron un muñeco de nieve en el parque.",
    ),
    "de": (
        "Der Zug zum Flughafen fährt alle zwanzig Minuten.",
        "Ich habe meinen Regenschirm schon wieder im Büro vergessen.",
        "Kannst du mir die Folien vor der Besprechung schicken?",
        "Nach so einer trockenen Woche braucht der Garten Wasser.",
        "Wir planen ein kleines Abendessen für Freitagabend.",
        "Dieses Rezept braucht weniger Zucker als das Original.",
        "Wie viele Stühle brauchen wir für den Workshop?",
        "Der Drucker im dritten Stock hat kein Papier mehr.",
        "Er geht jeden Morgen mit dem Hund am Fluss spazieren.",
        "Denk daran, die Hintertür abzuschließen, bevor du gehst.",
        "Der Bericht ist Ende des Monats fällig.",
        "Meine Schwester hat endlich die Küche fertig gestrichen.",
        "Welcher Bus fährt sonntags in die Innenstadt?",
        "Die neuen Regale sind da, aber eine Schraube fehlt.",
        "Nachmittags trinke ich meistens Tee.",
        "Die Kinder haben im Park einen Schneemann gebaut.",
    ),
    "fr": (
        "Le train pour l'aéroport part toutes les vingt minutes.",
        "J'ai encore oublié mon parapluie au bureau.",
        "Peux-tu m'envoyer les diapositives avant la réunion ?",
        "Le jardin a besoin d'eau après une semaine aussi sèche.",
        "Nous organisons un petit dîner pour vendredi soir.",
        "Cette recette contient moins de sucre que l'originale.",
        "Combien de chaises nous faut-il pour l'atelier ?",
        "L'imprimante du troisième étage n'a plus de papier.",
        "Il promène le chien le long de la rivière tous les matins.",
        "Pense à fermer la porte de derrière à clé avant de partir.",
        "Le rapport doit être rendu à la fin du mois.",
        "Ma sœur a enfin fini de peindre la cuisine.",
        "Quel bus va au centre-ville le dimanche ?",
        "Les nouvelles étagères sont arrivées, mais il manque une vis.",
        "D'habitude, je bois du thé l'après-midi.",
        "Les enfants ont fait un bonhomme de neige dans le parc.",
    ),
    "ru": (
        "Поезд в аэропорт уходит каждые двадцать минут.",
        "Я опять забыл зонт в офисе.",
        "Можешь прислать мне слайды до встречи?",
        "После такой сухой недели сад нужно полить.",
        "Мы планируем небольшой ужин в пятницу вечером.",
        "В этом рецепте меньше сахара, чем в оригинале.",
        "Сколько стульев нам нужно для семинара?",
        "В принтере на третьем этаже закончилась бумага.",
        "Каждое утро он гуляет с собакой вдоль реки.",
        "Не забудь запереть заднюю дверь перед уходом.",
        "Отчёт нужно сдать в конце месяца.",
        "Моя сестра наконец докрасила кухню.",
        "Какой автобус идёт в центр по воскресеньям?",
        "Новые полки привезли, но не хватает одного винта.",
        "Обычно я пью чай во второй половине дня.",
        "Дети слепили снеговика в парке.",
    ),
    "ar": (
        "يغادر القطار إلى المطار كل عشرين دقيقة.",
        "نسيت مظلتي في المكتب مرة أخرى.",
        "هل يمكنك أن ترسل لي الشرائح قبل الاجتماع؟",
        "تحتاج الحديقة إلى الماء بعد أسبوع جاف كهذا.",
        "نخطط لعشاء صغير مساء الجمعة.",
        "تستخدم هذه الوصفة سكرًا أقل من الوصفة الأصلية.",
        "كم كرسيًا نحتاج للورشة؟",
        "نفد الورق من الطابعة في الطابق الثالث.",
        "يمشي مع الكلب على ضفة النهر كل صباح.",
        "تذكر أن تقفل الباب الخلفي قبل أن تغادر.",
        "موعد تسليم التقرير في نهاية الشهر.",
        "أنهت أختي أخيرًا طلاء المطبخ.",
        "أي حافلة تذهب إلى وسط المدينة يوم الأحد؟",
        "وصلت الرفوف الجديدة لكن ينقص برغي واحد.",
        "عادةً أشرب الشاي بعد الظهر.",
        "بنى الأطفال رجل ثلج في الحديقة.",
    ),
}


# What a cached file was computed from: the sentences (and the caller's model, which names the file's folder).
STAMP = hashlib.sha256(json.dumps(REFERENCE, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


class Centres:
    """Each language's centre, for memories and for queries."""

    def __init__(self, memories: dict[str, np.ndarray], queries: dict[str, np.ndarray]) -> None:
        self.memories = memories
        self.queries = queries

    @classmethod
    def of(cls, memories: Embed, queries: Embed) -> Centres:
        """The centres a model's two paths give REFERENCE's sentences."""

        def means(embed: Embed) -> dict[str, np.ndarray]:
            found = {lang: np.asarray(embed(texts), dtype=np.float64).mean(axis=0) for lang, texts in REFERENCE.items()}
            found[ANY] = np.mean(list(found.values()), axis=0)
            return found

        return cls(means(memories), means(queries))

    @classmethod
    def kept(cls, path: Path, memories: Embed, queries: Embed) -> Centres:
        """The centres kept in `path` when they were made from these sentences, else made now and kept there (a
        file that cannot be read or written is made again, or not kept: the centres are the same either way)."""
        try:
            found = read_json_object(path, "it is made again") if path.exists() else {}
        except CorruptFile:
            found = {}
        if found.get("stamp") == STAMP:
            with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):  # stamped, but not whole
                return cls(_arrays(found["memories"]), _arrays(found["queries"]))
        made = cls.of(memories, queries)
        keep = {"stamp": STAMP, "memories": _lists(made.memories), "queries": _lists(made.queries)}
        with contextlib.suppress(StorageError):  # a cache it cannot write costs the next start the same work
            write_atomic(path, json.dumps(keep))
        return made

    def memories_of(self, texts: Sequence[str], vectors: np.ndarray) -> np.ndarray:
        """Memories' vectors (unit, in `texts`' order) taken from their languages' centres, unit again."""
        return _from(self.memories, texts, vectors)

    def queries_of(self, texts: Sequence[str], vectors: np.ndarray) -> np.ndarray:
        """Queries' vectors taken from their languages' centres, unit again."""
        return _from(self.queries, texts, vectors)


def _from(centres: dict[str, np.ndarray], texts: Sequence[str], vectors: np.ndarray) -> np.ndarray:
    if not len(texts):
        return vectors
    moved = np.asarray(vectors, dtype=np.float64) - np.stack([centres.get(language(t), centres[ANY]) for t in texts])
    return (moved / np.maximum(np.linalg.norm(moved, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def _lists(centres: dict[str, np.ndarray]) -> dict[str, list[float]]:
    return {lang: centre.tolist() for lang, centre in centres.items()}


def _arrays(kept: dict[str, list[float]]) -> dict[str, np.ndarray]:
    return {lang: np.asarray(values, dtype=np.float64) for lang, values in kept.items()}
