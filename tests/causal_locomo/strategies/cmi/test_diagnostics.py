"""CMI's log record, read back from a logged sample through its store."""

from __future__ import annotations

from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies.cmi import CMIDiagnostics, logged_diagnostics
from inspect_ai.log import EvalSample
from inspect_ai.util import Store


def sample_with(strategy: str, details: dict) -> EvalSample:
    """A logged sample whose store holds what the solver records."""
    store = Store()
    record = MemorySelection(store=store)
    record.strategy, record.details = strategy, details
    return EvalSample(id=1, epoch=1, input="q", target="", store=dict(store.items()))


def test_the_record_is_read_through_the_store():
    d = CMIDiagnostics(
        config={"k": 3},
        embedder="hashing",
        answer_no_memory="x",
        s_no=0.5,
        candidates=[],
        model_calls=1,
        final_answer_reused=True,
    )
    assert logged_diagnostics(sample_with("cmi", d.model_dump(mode="json"))) == d


def test_another_strategys_sample_has_none():
    assert logged_diagnostics(sample_with("vector_memory", {})) is None
