"""What a v4 claim turn says: a turn's statements without its photo's caption, and, said
back by the other speaker, only the clauses that hold the claim's values."""

from __future__ import annotations

import datetime as dt

from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.xl.locomo import Session
from cmi_inspect.xl.v3.slots import Slot
from cmi_inspect.xl.v4.plan import _said_back, true_claim

SESSION = Session(1, "1:56 pm on 20 January, 2023", dt.date(2023, 1, 20), ())


def test_a_claim_leaves_out_the_photos_caption_and_does_not_hold_a_value_said_only_there():
    turn = Turn("D1:3", "Evan", "I love it here by the sea! [shares a photo of a beach with a surfboard]")
    text, held = true_claim(turn, [Slot(turn, "beach", False), Slot(turn, "sea", False)], SESSION)
    assert text == "I love it here by the sea!"
    assert set(held) == {"D1:3/sea/False"}


def test_said_back_keeps_only_the_clauses_with_the_value_in_the_listeners_words():
    text = (
        "Sorry about your job Jon, but starting your own business sounds awesome! "
        "Unfortunately, I also lost my job at Door Dash this month on 20 January 2023."
    )
    back = _said_back(text, "Jon", ["on 20 January 2023"])
    assert back == "Unfortunately, you also lost your job at Door Dash this month on 20 January 2023."


def test_said_back_splits_at_a_dash_and_says_we_as_you():
    text = "Just wanted to give you the heads up - we adopted a pup and our pup is Scout!"
    assert _said_back(text, "Maria", ["Scout"]) == "You adopted a pup and your pup is Scout!"
    assert _said_back("Nothing here holds it.", "Maria", ["Scout"]) == "Nothing here holds it."
