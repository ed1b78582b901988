"""lazy_perturb changes cost, not selections: the release, scripted and with the local model.

The eager run answers every intervention and records each answer by prompt;
the lazy run is served from that record, so a prompt it needed that the eager
run never sent would fail the test. All 87 examples with a scripted model whose
answers help, hurt or do nothing by prompt; a stratified quarter with SmolLM2.
"""

from __future__ import annotations

import hashlib

import pytest
from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.strategies.cmi import CMI, CMIConfig, CMIDiagnostics
from cmi_inspect.retrieval import HashingEmbedder
from inspect_ai.model import GenerateConfig, Model, ModelOutput, get_model

from conftest import gold_scorer, memory_task_for, mock_model

MAX_TOKENS = 16
"""Short answers keep the local model's CMI pass short; the property under test (same
selections) does not depend on answer length."""
LOCAL_SHARE = 4
"""The local model answers every LOCAL_SHARE-th example (the release is ordered by family)."""


class Recording:
    """Wraps a model and keeps each answer by prompt."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.answers: dict[str, str] = {}

    async def generate(self, prompt: str) -> ModelOutput:
        output = await self.model.generate(prompt)
        self.answers[prompt] = output.completion
        return output


async def lazy_matches_eager(records: list[ExampleRecord], answer) -> None:
    """CMI with lazy_perturb selects, and says why, exactly as eager CMI, in fewer calls."""
    embedder = HashingEmbedder()
    eager_calls = lazy_calls = 0
    for record in records:
        recording = Recording(answer(record))
        task = memory_task_for(record, model=recording, score_answer=gold_scorer(record))  # type: ignore[arg-type]
        eager = await CMI(embedder, CMIConfig()).select(task)
        replay_prompts: list[str] = []
        replay = mock_model(recording.answers.__getitem__, replay_prompts)
        task = memory_task_for(record, model=replay, score_answer=gold_scorer(record))
        lazy = await CMI(embedder, CMIConfig(lazy_perturb=True)).select(task)
        assert [p.key for p in lazy.picks] == [p.key for p in eager.picks], record.example_id
        assert isinstance(lazy.details, CMIDiagnostics) and isinstance(eager.details, CMIDiagnostics)
        assert [c.reason for c in lazy.details.candidates] == [c.reason for c in eager.details.candidates]
        for c in lazy.details.candidates:
            assert (c.perturbed_skipped is not None) == c.reason.startswith("utility")
        eager_calls += eager.details.model_calls
        lazy_calls += len(replay_prompts)
    assert lazy_calls < eager_calls


def scripted(record: ExampleRecord) -> Model:
    """Answers each prompt, by a hash of it, with the gold answer, a false one, or nothing."""
    criteria = record.scoring_criteria
    choices = [criteria.expected_answer, criteria.adversarial_answer or "Nobody.", "I do not know."]

    def respond(prompt: str) -> str:
        return choices[hashlib.sha256(prompt.encode()).digest()[0] % len(choices)]

    return mock_model(respond)


@pytest.mark.slow  # CMI twice over the whole release
async def test_lazy_perturb_selects_the_same_on_the_release_scripted(real_records):
    await lazy_matches_eager(real_records, scripted)


@pytest.mark.slow  # runs the embedded local model
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
async def test_lazy_perturb_selects_the_same_on_the_release_with_the_local_model(real_records):
    local = get_model("gguf/smollm2", config=GenerateConfig(max_tokens=MAX_TOKENS))
    await lazy_matches_eager(real_records[::LOCAL_SHARE], lambda record: local)
