"""The fixed-latency provider: its delay from the model name, its scripted answers."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.prompts import memory_prompt, no_memory_prompt
from cmi_inspect.errors import UserError
from cmi_inspect.latency_model import FixedLatencyModel, scripted_answer


def test_the_model_name_is_the_delay():
    assert FixedLatencyModel("0.25").delay == 0.25


def test_a_name_that_is_no_delay_is_one_line():
    with pytest.raises(UserError, match=r"^fixed_latency model name must be a delay in seconds, got 'fast'\.$"):
        FixedLatencyModel("fast")


def test_it_answers_with_the_first_note():
    assert scripted_answer(memory_prompt("When?", ["[m1] On 3 May.", "[m2] On 4 May."])) == "On 3 May."
    assert scripted_answer(no_memory_prompt("When?")) == "I do not know."


async def test_tokens_are_counted_as_words_offline():
    from inspect_ai.model import get_model

    model = get_model("fixed_latency/0")
    assert await model.count_tokens("Ana adopted a cat named Biscuit.") == 6
