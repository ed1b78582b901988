"""The one tokeniser, the two ways of reading content words with it, and word overlap."""

from __future__ import annotations

import pytest
from cmi_inspect.text import (
    ENGLISH_STOP_WORDS,
    SCORING,
    XL_STEMS,
    content_words,
    five_letter_stem,
    fold_forms,
    tokens,
    word_count,
    word_overlap,
)


def test_tokens_lower_case_and_keep_apostrophes_unless_split():
    assert tokens("Priya's dog, 3 CATS!") == ["priya's", "dog", "3", "cats"]
    assert tokens("Priya's dog", split_apostrophes=True) == ["priya", "s", "dog"]
    assert word_count("Priya's dog!!") == 2


@pytest.mark.parametrize(
    ("token", "stem"),
    [
        ("painted", "paint"),
        ("painting", "paint"),
        ("stories", "story"),
        ("peaks", "peak"),
        ("glass", "glass"),
        ("hike", "hik"),
        ("priya's", "priya"),
        ("sing", "sing"),
    ],
)
def test_fold_forms(token, stem):
    assert fold_forms(token) == stem


def test_five_letter_stem_cuts_a_plural_then_keeps_five_letters():
    assert [five_letter_stem(t) for t in ("sunflowers", "gas", "bus", "tomatoes")] == ["sunfl", "gas", "bus", "tomat"]


def test_scoring_words_fold_forms_and_numbers():
    assert content_words("Ines hiked the peaks") == content_words("ines hike peak") == ["ine", "hik", "peak"]
    assert content_words("three dogs") == content_words("3 dog") == ["3", "dog"]
    assert content_words("I'm at a 5k run") == ["i'm", "5k", "run"]  # a stop word and a letter go


def test_xl_stems_split_apostrophes_and_keep_short_words():
    assert content_words("Priya's two cats, likely", XL_STEMS) == ["priya", "s", "2", "cat"]
    assert content_words("Priya's two cats, likely", SCORING) == ["priya", "2", "cat", "likely"]


def test_the_stop_words_are_scikit_learns_english_ones():
    text = pytest.importorskip("sklearn.feature_extraction.text", reason="scikit-learn (the fit extra) compares")
    assert ENGLISH_STOP_WORDS == text.ENGLISH_STOP_WORDS


def test_word_overlap_flags_one_value_edits():
    a = "Tomasz hiked up the Rysy peak with his sister Ola."
    assert word_overlap(a, "Tomasz hiked up the Rysy peak with his neighbour Marek.") >= 0.5
    assert word_overlap(a, "Ines keeps ferns on her shaded balcony.") == 0.0
