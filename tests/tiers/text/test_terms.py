"""The terms a memory is found by: stemmed words, its dates, the time term; and the dates a query names."""

from __future__ import annotations

from datetime import UTC, date, datetime

from tiers.text.terms import MARK, TIME_TERM, asked_dates, date_terms, document_terms, length, words

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_words_are_lower_cased_stemmed_and_without_stop_words() -> None:
    assert words("The groups were running to the painting") == ["group", "run", "paint"]


def test_a_memory_is_indexed_under_its_words_and_the_day_it_happened() -> None:
    terms = document_terms("We painted the fence", WHEN).split()

    assert terms[:2] == ["paint", "fenc"]
    assert set(date_terms(date(2023, 5, 8))) <= set(terms)
    assert TIME_TERM not in terms


def test_a_memory_that_says_a_time_carries_the_time_term_and_the_dates_it_points_to() -> None:
    terms = document_terms("I went to the lake yesterday", WHEN).split()

    assert TIME_TERM in terms
    assert f"{MARK}d2023-05-07" in terms  # yesterday, from the day it was said
    assert f"{MARK}d2023-05-08" in terms


def test_length_counts_words_and_the_time_term_but_not_the_dates() -> None:
    terms = document_terms("I went to the lake yesterday", WHEN).split()

    assert length(terms) == len([t for t in terms if not t.startswith(f"{MARK}d") and t[1] not in "ym"]) == 4
    assert length([]) == 1


def test_a_query_names_a_day_a_month_of_a_year_a_month_or_a_year() -> None:
    assert asked_dates("what happened on 7 May 2023?") == [f"{MARK}d2023-05-07"]
    assert asked_dates("what did we do in October 2023") == [f"{MARK}m2023-10"]
    assert asked_dates("where were they in June") == [f"{MARK}mo6"]
    assert asked_dates("in 2022 they moved") == [f"{MARK}y2022"]
    assert asked_dates("how are you") == []


def test_no_word_of_a_text_can_be_taken_for_a_date_term() -> None:
    assert not any(t.startswith(MARK) for t in words("§y2023 d2023 y2023 the mark"))
