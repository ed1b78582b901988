"""The graded effect: the model's likelihood of the answers in each context, read by forced
decoding or as lettered options, and what it turns into."""

from __future__ import annotations

import math

import pytest
from cmi_inspect.causal_locomo.strategies.cmi.effect import (
    EFFECTS,
    effect,
    graded_effect,
    likelihood_for,
    options,
    options_prompt,
    softmax,
)
from cmi_inspect.errors import UserError
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)


class ForcedModel:
    """A stand-in whose provider offers forced decoding: each answer's log-probability per
    token is looked up by (last words of the prompt, answer)."""

    def __init__(self, table: dict[tuple[str, str], list[float]]) -> None:
        self.table = table
        self.api = self
        self.asked: list[tuple[str, list[str]]] = []

    async def continuation_logprobs(self, input: list[ChatMessage], continuations: list[str]) -> list[list[float]]:
        prompt = input[-1].text
        self.asked.append((prompt, continuations))
        return [self.table[prompt, a] for a in continuations]


def letter_model(top: list[tuple[str, float]] | None, prompts: list[str]):
    """A mockllm model whose one output token carries these top log-probabilities."""

    async def outputs(input, tools, choice, config: GenerateConfig) -> ModelOutput:
        prompts.append(input[-1].text)
        assert config.logprobs and config.top_logprobs and config.max_tokens == 1
        out = ModelOutput.from_content(model="mockllm", content=top[0][0] if top else "A")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        if top is not None:
            first = Logprob(
                token=top[0][0], logprob=top[0][1], top_logprobs=[TopLogprob(token=t, logprob=x) for t, x in top]
            )
            out.choices[0].logprobs = Logprobs(content=[first])
        return out

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def test_softmax_is_a_distribution_that_keeps_the_order():
    p = softmax([-1.0, -2.0, -30.0])
    assert math.isclose(sum(p), 1.0) and p[0] > p[1] > p[2] > 0


async def test_the_graded_score_is_the_expected_answer_score_in_each_context():
    model = ForcedModel(
        {
            ("none", "3 May"): [-2.0],
            ("none", "I do not know."): [-0.5, -0.5],
            ("with", "3 May"): [-0.1],
            ("with", "I do not know."): [-3.0, -2.0],
        }
    )
    g = await graded_effect(model, {"none": "none", "with": "with"}, ["3 May", "I do not know."], [1.0, 0.0])  # type: ignore[arg-type]
    assert g.method == "forced" and g.graded
    none, with_ = g.contexts
    assert math.isclose(none.expected, softmax([-2.0, -1.0])[0])
    assert math.isclose(with_.expected, softmax([-0.1, -5.0])[0])
    assert with_.expected > none.expected  # the memory made the supported answer likelier
    assert [a for _, a in model.asked] == [["3 May", "I do not know."]] * 2


async def test_options_read_the_letters_log_probabilities():
    prompts: list[str] = []
    model = letter_model([("B", -0.2), (" A", -1.9), ("Z", -0.5)], prompts)
    assert await options(model, "Q?", ["x", "y", "z"]) == [-1.9, -0.2, -1.9]  # C unreported: the floor
    assert prompts == [options_prompt("Q?", ["x", "y", "z"])]
    assert "A. x\nB. y\nC. z" in prompts[0]
    # a confident model: the unlisted options get the least likely token reported, not A's
    confident = letter_model([("A", -0.001), ("Z", -4.0), ("Q", -6.5)], [])
    assert await options(confident, "Q?", ["x", "y", "z"]) == [-0.001, -6.5, -6.5]


async def test_a_model_without_log_probabilities_leaves_the_answer_effect():
    prompts: list[str] = []
    model = letter_model(None, prompts)
    assert likelihood_for(model)[0] == "options"
    assert await options(model, "Q?", ["x", "y"]) is None
    g = await graded_effect(model, {"none": "a", "with": "b"}, ["x", "y"], [0.0, 1.0])
    assert not g.graded and g.contexts == [] and len(prompts) == 2  # it stopped at the first context


def test_effects_by_name():
    assert set(EFFECTS) == {"answer", "graded", "logprob"} and effect("graded").graded and not effect("answer").graded
    with pytest.raises(UserError, match="^Unknown effect 'x'; choose from answer, graded, logprob.$"):
        effect("x")
