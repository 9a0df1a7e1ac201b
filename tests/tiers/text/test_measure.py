"""How long a text is in any script: words for pieces and excerpts, tokens for the budget."""

from __future__ import annotations

import pytest

from tiers.records import tokens_of
from tiers.text.measure import count, quarters, tokens, words

# English as agents and people write it, with what LoCoMo's turns hold besides ASCII (curly quotes, dashes,
# an accent, emoji): counted at four characters a token, as before.
_ENGLISH = [
    "I'm allergic to peanuts.",
    "Caroline: It went great – they approved my application last week! 🎉",
    "We met at the café near the station; the espresso was “fine”.",
    "Book the ryokan this week — cherry blossom season fills it early. 🧘‍♀️ 👍",
    "",
    "x" * 9,
]


@pytest.mark.parametrize("text", _ENGLISH)
def test_english_is_counted_at_four_characters_a_token_as_it_always_was(text: str) -> None:
    assert quarters(text) == len(text)
    assert tokens(text) == tokens_of(text) == -(-len(text) // 4)


@pytest.mark.parametrize(
    ("text", "at_least"),
    [
        ("我对花生过敏。", 7),  # Chinese: a token or more a character in an LLM's tokenizer
        ("私は花粉症です。", 8),  # Japanese
        ("나는 땅콩 알레르기가 있어요.", 10),  # Korean
        ("لدي حساسية من الفول السوداني.", 15),  # Arabic
        ("יש לי אלרגיה לבוטנים.", 10),  # Hebrew
        ("मुझे मूंगफली से एलर्जी है।", 14),  # Hindi
        ("ฉันแพ้ถั่วลิสง", 10),  # Thai
        ("У меня аллергия на арахис.", 12),  # Russian
        ("Έχω αλλεργία στα φιστίκια.", 12),  # Greek
    ],
)
def test_other_scripts_weigh_more_than_four_characters_a_token(text: str, at_least: int) -> None:
    assert tokens(text) >= at_least > -(-len(text) // 4)


def test_the_count_adds_up_over_the_lines_of_a_text() -> None:
    """pack sums its lines' weights against the budget, so the whole text never weighs more than the sum."""
    lines = ["[abc] 我对花生过敏。", "[def] У меня аллергия на арахис.", "2026-12-08:", "[ghi] plain English"]
    assert quarters("\n".join(lines)) == sum(quarters(line) for line in lines) + len(lines) - 1


def test_words_without_han_or_kana_are_split_at_whitespace_as_before() -> None:
    for text in [*_ENGLISH, "  spaced\tout\nacross lines  ", "Привет, мир!  Как дела?", "나는 학생입니다"]:
        found = words(text)
        assert found.words == text.split() and count(text) == len(text.split())
        assert found.join(0, len(found)) == " ".join(text.split())
        assert found.join(2, 5) == " ".join(text.split()[2:5])


def test_each_chinese_or_japanese_character_is_a_word_and_the_words_join_back_without_spaces() -> None:
    text = "我 喜欢 Python 和 Go，真的。データベースはPostgreSQLです"
    found = words(text)
    assert found.words[:6] == ["我", "喜", "欢", "Python", "和", "Go，"]
    assert count(text) == len(found) == 19
    assert found.join(0, len(found)) == text
    assert found.join(1, 3) == "喜欢" and found.join(2, 5) == "欢 Python 和"
    assert found.join(9, 19) == "データベースはPostgreSQLです"
