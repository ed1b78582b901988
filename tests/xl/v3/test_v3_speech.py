"""What inserted turns say: a claim turned to the other speaker's mouth, a quoted source."""

from __future__ import annotations

from cmi_inspect.xl.v3.speech import addressed, quoted, said_value, unaddressed


def test_a_claim_is_said_back_to_its_speaker():
    assert addressed("I went to my class and you helped me.") == "You went to your class and I helped you."
    assert addressed("I'm proud of myself, I was right.") == "You're proud of yourself, you were right."
    assert addressed("Your dog is mine, you know.") == "My dog is yours, I know."


def test_a_quote_lower_cases_its_first_word_unless_a_name():
    lead = "I read in a post online that"
    assert quoted(lead, "You went to the fair.", ["Priya"]) == f"{lead} you went to the fair."
    assert quoted(lead, "Yesterday you baked.", []) == f"{lead} yesterday you baked."
    assert quoted(lead, "Priya went to the fair.", ["Priya"]) == f"{lead} Priya went to the fair."
    assert quoted(lead, "I think so.", []) == f"{lead} I think so."


def test_what_answered_or_called_the_listener_is_left_out():
    assert unaddressed("Tomas, guess what, I sold a vase.", "Tomas") == "guess what, I sold a vase."
    assert unaddressed("Thanks, Tomas! I sold a vase.", "Tomas") == "I sold a vase."
    assert unaddressed("Yes, the autumn market in Coimbra.", "Tomas") == "the autumn market in Coimbra."
    assert unaddressed("Priya, guess what.", "Tomas") == "Priya, guess what."


def test_a_retraction_says_a_day_with_on():
    assert said_value("7 May 2023", dated=True) == "on 7 May 2023"
    assert said_value("the week before 4 March 2023", dated=True) == "the week before 4 March 2023"
    assert said_value("2 weeks before 19 April 2023", dated=True) == "2 weeks before 19 April 2023"
    assert said_value("Porto", dated=False) == "Porto"
