"""The benchmark's rule for asking a question in keywords, as an agent often does (pure logic)."""

from tests.bench.locomo import FORMS, keywords


def test_a_question_in_keywords_keeps_its_content_words_in_order_and_drops_question_and_function_words() -> None:
    assert keywords("When did Ada move to the coast?") == "Ada move coast"
    assert keywords("What is Bo's favourite kind of tea?") == "Bo's favourite kind tea"
    assert keywords("Why?") == "Why?"  # nothing left: asked as it was
    assert FORMS["question"]("Where was it?") == "Where was it?"
