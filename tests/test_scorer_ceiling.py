"""The scorer-ceiling analysis replays a CMI record with CMI's own decision."""

from __future__ import annotations

import pytest
from benchmarks.scorer_ceiling import replay
from cmi_inspect.causal_locomo.strategies.cmi import CMI, CMIConfig, CMIDiagnostics
from cmi_inspect.retrieval import HashingEmbedder

from conftest import gold_scorer, memory_task_for, mock_model


def respond(prompt: str) -> str:
    """Both dated memories help, the gold one most; perturbed copies do not."""
    if "It is not true that" in prompt or "may no longer hold" in prompt:
        return "I do not know."
    if "Comet on 3 March 2022" in prompt:
        return "3 March 2022"
    return "March 2022" if "Comet on 9 March 2022" in prompt else "I do not know."


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"budget": 1},
        {"budget": 1, "prefer": "proposal"},
        {"budget": 2},
        {"tau_s": 0.5},
    ],
)
async def test_replaying_with_the_runs_scorer_keeps_what_the_run_kept(synthetic_records, config):
    record = synthetic_records[0]
    task = memory_task_for(record, model=mock_model(respond), score_answer=gold_scorer(record))
    selection = await CMI(HashingEmbedder(), CMIConfig(k=4, risk_filter="none", **config)).select(task)
    assert isinstance(selection.details, CMIDiagnostics)
    kept, utilities = await replay(selection.details, gold_scorer(record))
    assert kept == [p.key for p in selection.picks]
    assert utilities == {c.key: c.utility for c in selection.details.candidates}
