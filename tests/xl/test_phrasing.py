"""How XL words a memory: statements kept, reported speech, the phrasings."""

from __future__ import annotations

import datetime as dt

from cmi_inspect.xl.locomo import Session
from cmi_inspect.xl.phrasing import PHRASINGS, reported, stated_words, statements


def test_statements_drop_questions_and_pleasantries():
    assert statements("Wow! I adopted a grey cat last week. Do you want to meet her?") == (
        "I adopted a grey cat last week."
    )
    assert statements("Thanks! Really?") == "Thanks! Really?"  # nothing stated: the whole turn
    assert stated_words("Thanks! Really?") == 0 and stated_words("Wow! I adopted a grey cat.") == 5


def test_reported_speech_names_the_speaker_and_the_listener():
    text = "I love my new bike and I'm riding it to you. You're going to like it."
    assert reported(text, "Ana", "Ben") == (
        "Ana loves their new bike and Ana is riding it to Ben. Ben is going to like it."
    )
    assert reported("I went to the fair with my sister.", "Ana", "Ben") == "Ana went to the fair with their sister."


def test_every_phrasing_holds_the_text_the_speaker_and_a_date():
    session = Session(3, "1:56 pm on 8 May, 2023", dt.date(2023, 8, 5), ())
    names = set()
    for phrasing in PHRASINGS:
        content = phrasing.render("Ana", "Ben", "the fair is in Lisbon", session)
        assert "Ana" in content and "the fair is in Lisbon" in content
        assert "5 August 2023" in content or "8 May, 2023" in content
        names.add(phrasing.name)
    assert len(names) == len(PHRASINGS) >= 4
    assert any(p.reports for p in PHRASINGS) and not all(p.reports for p in PHRASINGS)
