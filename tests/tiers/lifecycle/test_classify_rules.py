"""Write-time classification by rules: durable first-person facts are protected, the rest are notes."""

from __future__ import annotations

import pytest

from tiers.lifecycle.classify import Classified, classify
from tiers.records import Kind


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("I am allergic to peanuts", Kind.HEALTH),
        ("I can't eat gluten, I'm celiac", Kind.HEALTH),
        ("Never push to main on a Friday, we agreed", Kind.CONSTRAINT),
        ("I work at Acme as a data engineer", Kind.IDENTITY),
        ("I live in Lisbon", Kind.IDENTITY),
        ("My sister Marta visits in May", Kind.RELATIONSHIP),
        ("I prefer tabs over spaces", Kind.PREFERENCE),
        ("I'm vegetarian", Kind.PREFERENCE),
        ("The user is allergic to shellfish", Kind.HEALTH),
    ],
)
def test_first_person_durable_facts_are_classified_and_protected(content: str, kind: Kind) -> None:
    found = classify(content)

    assert (found.kind, found.durable) == (kind, True)


@pytest.mark.parametrize(
    "content",
    [
        "The build takes 12 minutes on CI",
        "Peanuts are legumes, not nuts",
        "Marta prefers tabs",
        "I went to the shop",
        "We shipped release 4.2",
    ],
)
def test_statements_that_are_not_durable_first_person_facts_are_unprotected_notes(content: str) -> None:
    assert classify(content) == Classified(Kind.NOTE, False)


def test_my_name_is_yields_a_profile_name_with_its_capitalised_words() -> None:
    found = classify("Hi! My name is Ana Sofia Costa and I like tea")

    assert found == Classified(Kind.IDENTITY, True, key="name", value="Ana Sofia Costa")


def test_the_agents_kind_hint_wins_over_the_rules() -> None:
    assert classify("I am allergic to peanuts", Kind.NOTE) == Classified(Kind.NOTE, False)
    assert classify("Deploys happen on Tuesdays", Kind.CONSTRAINT) == Classified(Kind.CONSTRAINT, True)
    assert classify("My name is Ana", Kind.IDENTITY).key is None


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("My colleague Priya is allergic to kiwi.", Kind.NOTE),  # her health, not the user's
        ("The user's coworker Sam never drinks coffee.", Kind.NOTE),
        ("My daughter is allergic to peanuts.", Kind.RELATIONSHIP),  # a fact about the user's family
        ("My boss never answers email on Fridays.", Kind.RELATIONSHIP),
        ("My son and I are allergic to tree nuts.", Kind.HEALTH),
        ("I'm allergic to my cat, sadly.", Kind.HEALTH),
    ],
)
def test_what_someone_of_the_users_has_is_not_the_users_own_fact(content: str, kind: Kind) -> None:
    assert classify(content).kind is kind


@pytest.mark.parametrize(
    ("content", "kind", "name"),
    [
        ("我对花生过敏，吃一点就会起疹子。", Kind.HEALTH, None),
        ("我是 O 型血。", Kind.HEALTH, None),
        ("我叫王伟，在上海工作。", Kind.IDENTITY, None),
        ("我女儿叫林小雨，今年六岁了。", Kind.RELATIONSHIP, None),
        ("我最喜欢的馆子是胡大饭馆。", Kind.PREFERENCE, None),
        ("私は卵アレルギーがあります。", Kind.HEALTH, None),
        ("妹の名前は美咲です。", Kind.RELATIONSHIP, None),
        ("Soy alérgico a la penicilina.", Kind.HEALTH, None),
        ("Me llamo Lucía García y vivo en Sevilla.", Kind.IDENTITY, "Lucía García"),
        ("Mi hermano Pablo se casa en junio.", Kind.RELATIONSHIP, None),
        ("Prefiero las reuniones por la tarde.", Kind.PREFERENCE, None),
        ("Ich bin allergisch gegen Haselnüsse.", Kind.HEALTH, None),
        ("Ich heiße Jonas Weber.", Kind.IDENTITY, "Jonas Weber"),
        ("Meine Tochter heißt Mia.", Kind.RELATIONSHIP, None),
        ("Je suis allergique aux arachides.", Kind.HEALTH, None),
        ("Je m'appelle Camille Durand.", Kind.IDENTITY, "Camille Durand"),
        ("Je préfère le train à l'avion.", Kind.PREFERENCE, None),
        ("У меня аллергия на орехи.", Kind.HEALTH, None),
        ("Меня зовут Анна.", Kind.IDENTITY, "Анна"),
        ("Моя дочь учится в Казани.", Kind.RELATIONSHIP, None),
        ("لدي حساسية من الفول السوداني.", Kind.HEALTH, None),
        ("اسمي أحمد وأعيش في عمّان.", Kind.IDENTITY, None),
        ("ابنتي تدرس في القاهرة.", Kind.RELATIONSHIP, None),
    ],
)
def test_first_person_durable_facts_in_other_languages_are_kept_as_in_english(
    content: str, kind: Kind, name: str | None
) -> None:
    found = classify(content)

    assert (found.kind, found.durable, found.value) == (kind, True, name)


@pytest.mark.parametrize(
    "content",
    [
        "Mi compañero Javier es alérgico a los frutos secos.",
        "Mon collègue Thomas est allergique aux fruits de mer.",
        "Meine Kollegin Sabine verträgt keine Milchprodukte.",
        "У Олега аллергия на кошачью шерсть.",
        "زميلي خالد لديه حساسية من البيض.",
        "同僚の佐藤さんはエビアレルギーなので、お店選びは要注意。",
        "同事小王对花生过敏。",
        "أفضل شاورما في الحي عند مطعم أبو علي.",  # "the best", not "I prefer"
        "나는 땅콩 알레르기가 있어요.",  # Korean: not understood, never misread or failing
        "मुझे मूंगफली से एलर्जी है।",
        "Έχω αλλεργία στα φιστίκια.",
        "🎉🎉🎉",
    ],
)
def test_facts_of_other_people_and_languages_without_rules_are_notes(content: str) -> None:
    assert classify(content) == Classified(Kind.NOTE, False)


def test_a_long_chinese_memory_is_notes_whatever_it_says_in_the_first_person() -> None:
    assert classify("我对花生过敏。" * 22).kind is Kind.NOTE  # 154 characters, each a word


def test_no_ordinary_note_of_the_multilingual_set_is_taken_for_a_durable_fact() -> None:
    from tests.bench.multilingual import ordinary

    durable = [note.text for note in ordinary() if classify(note.text).durable]

    assert durable == []


def test_the_other_languages_shortcut_skips_only_texts_no_rule_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pure logic: `durable_kind` skips the rules for ASCII texts without their words. Every text of the
    multilingual set (facts, questions, notes), each also with its accents and case folded away as a writer may,
    and the scale benchmark's English notes get what every rule tried gives."""
    from tests.bench import multilingual, synthetic
    from tiers.lifecycle import other_languages
    from tiers.text.languages import fold

    texts = [f.text for f in multilingual.facts()] + [q.text for q in multilingual.questions()]
    texts += [n.text for n in multilingual.ordinary(per_language=60)]
    texts += [fold(t) for t in texts] + synthetic.texts(4, 600, exclude=frozenset())
    shortcut = [other_languages.durable_kind(t) for t in texts]
    with monkeypatch.context() as patched:
        patched.setattr(other_languages, "may_hold", lambda *_: True)
        every_rule = [other_languages.durable_kind(t) for t in texts]

    assert shortcut == every_rule
    assert sum(t.isascii() and kind is not None for t, kind in zip(texts, every_rule, strict=True)) >= 10
    assert other_languages.durable_kind("Remind me to renew the lease before May.") is None
