"""lazy_perturb changes cost, not selections: all 87 examples, the real local model.

The eager run answers every intervention with SmolLM2 and records each answer
by prompt; the lazy run is served from that record, so a prompt it needed
that the eager run never sent would fail the test. One CMI pass in all.
"""

from __future__ import annotations

import pytest
from cmi_inspect.retrieval import HashingEmbedder
from cmi_inspect.strategies.cmi import CMI, CMIConfig, CMIDiagnostics
from inspect_ai.model import GenerateConfig, Model, ModelOutput, get_model

from conftest import gold_scorer, memory_task_for, mock_model

pytestmark = pytest.mark.slow  # runs the embedded local model

MAX_TOKENS = 16
"""Short answers keep one CMI pass over 87 examples to a few minutes; the property
under test (same selections) does not depend on answer length."""


class Recording:
    """Wraps a model and keeps each answer by prompt."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.answers: dict[str, str] = {}

    async def generate(self, prompt: str) -> ModelOutput:
        output = await self.model.generate(prompt)
        self.answers[prompt] = output.completion
        return output




async def test_lazy_perturb_selects_the_same_on_the_release(real_records):
    local = Recording(get_model("gguf/smollm2", config=GenerateConfig(max_tokens=MAX_TOKENS)))
    embedder = HashingEmbedder()
    eager_calls = lazy_calls = 0
    for record in real_records:
        task = memory_task_for(record, model=local, score_answer=gold_scorer(record))  # type: ignore[arg-type]
        eager = await CMI(embedder, CMIConfig()).select(task)
        replay_prompts: list[str] = []
        replay = mock_model(lambda p: local.answers[p], replay_prompts)
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
