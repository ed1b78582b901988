"""CMI's ``logprob`` effect: a memory's utility is the forced log-probability gain of the
answer given with it over no memory, its stability the gain over its perturbed copy."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.strategies.base import MemoryTask
from cmi_inspect.causal_locomo.strategies.cmi import CMI, CMIConfig, CMIDiagnostics
from cmi_inspect.causal_locomo.strategies.cmi.effect import EFFECTS, effect
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import UserError
from cmi_inspect.retrieval import HashingEmbedder
from inspect_ai.model import ChatMessage, Model

from conftest import mock_model

REQUEST = "Which city did Priya move to?"
HELPFUL = Memory("m1", "Priya moved to Lisbon in May.", 2)
IDLE = Memory("m2", "Sam plays the cello on weekends.", 1)
REFUSAL = (
    "^cmi with -S effect=logprob scores answers by their log-probability under forced decoding, "
    r"which mockllm/model cannot return: use a gguf/ model \(the embedded one, gguf/smollm2\).$"
)


def answer(prompt: str) -> str:
    return "Lisbon." if HELPFUL.content in prompt else "I do not know."


def forced_model() -> Model:
    """Answers "Lisbon." where the helpful memory stands in the prompt, else "I do not know.";
    "Lisbon." is 4 nats likelier where it does (-6 against -10), the refusal always -1."""
    model = mock_model(answer)

    async def continuation_logprobs(input: list[ChatMessage], continuations: list[str]) -> list[list[float]]:
        prompt = input[-1].text
        return [[-1.0] if c != "Lisbon." else [-6.0 if HELPFUL.content in prompt else -10.0] for c in continuations]

    model.api.continuation_logprobs = continuation_logprobs  # type: ignore[attr-defined]
    return model


def task_of(model: Model, protocol: str) -> MemoryTask:
    async def nothing(answer: str) -> float:
        return 0.0  # the answer score moves nothing: the logprob effect reads none

    return MemoryTask(
        request=REQUEST,
        memories=[HELPFUL, IDLE],
        sessions=[],
        protocol=protocol,  # type: ignore[arg-type]
        model=model,
        score_answer=nothing,
    )


@pytest.mark.parametrize("protocol", ["paper", "blind"])
async def test_the_logprob_effect_ranks_a_helpful_memory_above_an_unhelpful_one(protocol):
    config = CMIConfig(effect="logprob", selector="rule")
    selection = await CMI(HashingEmbedder(), config).select(task_of(forced_model(), protocol))
    d = selection.details
    assert isinstance(d, CMIDiagnostics) and d.effect == "logprob"
    helpful, idle = sorted(d.candidates, key=lambda c: c.key)
    assert (helpful.utility, helpful.stability) == (4.0, 4.0)  # -6 with it, -10 without or perturbed
    assert (idle.utility, idle.stability) == (0.0, 0.0)
    assert [p.key for p in selection.picks] == ["m1"] and helpful.selected and not idle.selected
    assert helpful.effect is not None and helpful.effect.method == "forced"
    assert helpful.effect.answers == ["Lisbon."]
    assert [(x.context, x.expected) for x in helpful.effect.contexts] == [
        ("none", -10.0),
        ("with", -6.0),
        ("perturbed", -10.0),
    ]


async def test_a_model_without_forced_decoding_is_one_line_before_the_run_and_in_a_sample():
    strategy = CMI(HashingEmbedder(), CMIConfig(effect="logprob"))
    with pytest.raises(UserError, match=REFUSAL):
        strategy.check_model(mock_model(answer))
    with pytest.raises(UserError, match=REFUSAL):
        await strategy.select(task_of(mock_model(answer), "paper"))
    CMI(HashingEmbedder(), CMIConfig(effect="graded")).check_model(mock_model(answer))  # options stand in


def test_logprob_is_an_effect_by_name_and_refuses_lazy_perturbation():
    assert list(EFFECTS) == ["answer", "graded", "logprob"]
    assert effect("logprob").graded and effect("logprob").needs_forced and not effect("graded").needs_forced
    with pytest.raises(UserError, match="-S effect=logprob reads every candidate's perturbed answer"):
        CMIConfig(lazy_perturb=True, effect="logprob")
