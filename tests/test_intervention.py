"""The gold-reading intervention scorer, and its refusal under the blind protocol."""

from __future__ import annotations

import pytest
from cmi_inspect.choices import BlindProtocolError
from cmi_inspect.dataset import causal_locomo_dataset
from cmi_inspect.intervention import gold_answer_scorer, intervention_scorer
from inspect_ai.model import ModelName
from inspect_ai.solver import TaskState

from conftest import SYNTHETIC


def _state(protocol: str) -> TaskState:
    sample = causal_locomo_dataset(protocol, data_file=SYNTHETIC)[0]  # type: ignore[arg-type]
    assert sample.id is not None
    return TaskState(ModelName("mockllm/model"), sample.id, 0, sample.input, [], metadata=sample.metadata)


async def test_gold_scorer_uses_the_deterministic_score():
    score = gold_answer_scorer(_state("paper"))
    assert await score("3 March 2022") == 1.0
    assert await score("I do not know.") == pytest.approx(0.6)


def test_blind_protocol_refuses_the_gold_scorer():
    with pytest.raises(BlindProtocolError, match="blind protocol forbids"):
        gold_answer_scorer(_state("blind"))


def test_unknown_scorer_name():
    assert intervention_scorer("gold") is gold_answer_scorer
    with pytest.raises(ValueError, match="Unknown intervention scorer"):
        intervention_scorer("oracle")
