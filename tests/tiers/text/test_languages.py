"""The words of a text in any script: CJK bigrams, folded accents, a stemmer only where the language is known."""

from __future__ import annotations

import re

from py_rust_stemmers import SnowballStemmer

from tiers.text.terms import STOP_WORDS, words

_OLD_STEMMER = SnowballStemmer("english")
ENGLISH = [
    "I went to the lake yesterday with my sister and her two dogs",
    "Caroline said she is researching adoption agencies because she wants a family",
    "We painted the fence last weekend; it took 3 hours!",
    "Melanie's kids loved the pottery class on Saturday, July 8, 2023",
    "Ana de Armas is an actress",
    "The band played at the fiesta in San Jose",
    "My allergy to peanuts is severe, don't forget it",
    "peanut allergy",
]


def _old_words(text: str) -> list[str]:
    found = [w for w in re.findall(r"\w+", text.lower()) if w not in STOP_WORDS]
    return list(_OLD_STEMMER.stem_words(found)) if found else []


def test_english_text_has_exactly_the_terms_it_had_before() -> None:
    for text in ENGLISH:
        assert words(text) == _old_words(text), text


def test_chinese_runs_are_split_into_character_bigrams() -> None:
    assert words("我对花生过敏。") == ["我对", "对花", "花生", "生过", "过敏"]
    assert words("我用PostgreSQL数据库") == ["我用", "postgresql", "数据", "据库"]


def test_a_lone_korean_or_japanese_character_stands_as_itself() -> None:
    assert words("제 딸") == ["제", "딸"]
    assert "名前" in words("私の娘の名前はさくらです")


def test_spanish_is_folded_and_stemmed_as_spanish_with_or_without_accents() -> None:
    assert words("¿Dónde vive mi hermana?") == ["viv", "herman"]
    assert words("Mi hermana vive en Sevilla") == ["herman", "viv", "sevill"]


def test_german_french_russian_arabic_get_their_own_stemmers() -> None:
    assert words("Meine Tochter heißt Lena und wohnt in München") == ["tocht", "lena", "wohnt", "munch"]
    assert words("Quel est le nom de ma fille ?") == ["nom", "fill"]
    assert "доч" in words("Как зовут мою дочь?")
    assert "ابنت" in words("أين تعيش ابنتي؟")


def test_a_script_without_a_known_language_is_not_stemmed() -> None:
    assert words("मेरी बेटी दिल्ली में रहती है") == ["मेरी", "बेटी", "दिल्ली", "में", "रहती", "है"]
