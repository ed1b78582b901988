"""The history CMI reads for a sample: the evidence when a choice reads it, else nothing."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.strategies.cmi.history import History

from conftest import memory_task_for


def test_a_history_not_read_supports_and_logs_nothing(synthetic_records):
    history = History.of(memory_task_for(synthetic_records[0]), read=False)
    assert history.support("Priya adopted Comet") is None and history.log() == []
    with pytest.raises(AssertionError, match="declare reads_history"):
        history.evidence  # noqa: B018


def test_a_history_read_is_the_tasks_evidence(synthetic_records):
    task = memory_task_for(synthetic_records[0], "blind")
    history = History.of(task, read=True)
    assert history.log() and history.support(None) is None
    text = task.memories[0].content
    assert history.support(text) == history.evidence.support(text)
