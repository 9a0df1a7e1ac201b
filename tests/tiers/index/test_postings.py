"""The warm postings: postings added after a load are folded into the arrays once they hold a share of them, and
every term's live rows and counts read the same before and after."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tests.helpers import T0
from tiers.index import postings as postings_module
from tiers.index.postings import Postings
from tiers.text.terms import document_terms


def read(postings: Postings, term: str, alive: np.ndarray) -> dict[int, float]:
    found = postings.posting(term, alive)
    return {} if found is None else dict(zip(found[0].tolist(), found[1].tolist(), strict=True))


def test_a_load_counts_each_rows_terms_and_its_length_without_date_terms() -> None:
    postings = Postings()
    date = document_terms("", T0).split()[0]  # a date term, as a memory's terms carry them
    lengths = postings.load(pa.chunked_array([["boat boat key", f"key {date}", ""]]), 3)
    alive = np.ones(3, dtype=bool)
    assert read(postings, "boat", alive) == {0: 2.0} and read(postings, "key", alive) == {0: 1.0, 1: 1.0}
    assert lengths.tolist() == [3.0, 1.0, 1.0]  # a date term is not counted; an empty row counts 1
    assert postings.only_loaded and postings.posting("missing", alive) is None


def test_added_postings_fold_into_the_arrays_and_read_as_they_did_before(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"w{n % 7} shared {'rare' if n % 11 == 0 else ''} w{n % 3}".split() for n in range(60)]
    alive = np.ones(60, dtype=bool)
    alive[[5, 17]] = False
    kept = Postings()
    for position, terms in enumerate(texts):
        kept.add(position, terms)
    monkeypatch.setattr(postings_module, "FOLD_FROM", 16)
    folded = Postings()
    folded.load(pa.chunked_array([[" ".join(t) for t in texts[:10]]]), 10)
    for position, terms in enumerate(texts[10:], start=10):
        folded.add(position, terms)

    assert not folded.only_loaded and len(folded.rows) > 10 * 3  # lists folded in, more than the load's
    for term in ["w0", "w1", "w2", "w6", "shared", "rare", "missing"]:
        assert read(folded, term, alive) == read(kept, term, alive)
        rows = folded.posting(term, alive)
        assert rows is None or rows[0].tolist() == sorted(rows[0].tolist())  # in position order
