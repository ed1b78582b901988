"""The intervention scorers: the gold one and its refusal under blind, the registry by name."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.dataset import causal_locomo_dataset
from cmi_inspect.causal_locomo.protocol import BlindProtocolError
from cmi_inspect.causal_locomo.strategies.cmi import (
    CMI,
    INTERVENTION_SCORERS,
    CMIConfig,
    InterventionScorer,
    gold_answer_scorer,
    injected_scorer,
)
from cmi_inspect.retrieval import HashingEmbedder
from inspect_ai.model import ModelName
from inspect_ai.solver import TaskState

from conftest import SYNTHETIC, memory_task_for, mock_model


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


async def test_the_solver_injects_the_gold_scorer_only_where_it_runs():
    paper, blind = _state("paper"), _state("blind")
    default = injected_scorer(None)
    assert default(blind) is None  # blind's default scorer reads the history, not the sample
    injected = default(paper)
    assert injected is not None and await injected("3 March 2022") == 1.0
    assert injected_scorer("evidence")(paper) is None
    with pytest.raises(BlindProtocolError, match="blind protocol forbids"):
        injected_scorer("gold")(blind)


def test_unknown_scorer_name():
    with pytest.raises(ValueError, match="Unknown intervention scorer 'oracle'; choose from gold, evidence"):
        injected_scorer("oracle")(_state("paper"))


async def test_a_new_scorer_is_picked_up_by_name(synthetic_records, monkeypatch):
    def likes_march(task, history):
        async def score(answer: str) -> float:
            return 1.0 if "March" in answer else 0.0

        return score

    monkeypatch.setitem(INTERVENTION_SCORERS, "march", InterventionScorer("march", likes_march))
    respond = lambda p: "3 March 2022" if "Comet on 3 March 2022" in p else "I do not know."  # noqa: E731
    task = memory_task_for(synthetic_records[0], "paper", mock_model(respond))
    sel = await CMI(HashingEmbedder(), CMIConfig(k=4, intervention="march", risk_filter="none")).select(task)
    assert sel.details is not None
    d = sel.details.model_dump()
    assert d["intervention"] == "march" and d["evidence"] == []  # it reads no history
    assert d["s_no"] == 0.0 and {c["key"]: c["s_with"] for c in d["candidates"]}["gold_00"] == 1.0
    assert [p.key for p in sel.picks] == ["gold_00"]
