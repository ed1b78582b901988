"""The choices of intervention scorer and risk filter, and the refusal of label-reading ones under blind."""

from __future__ import annotations

import pytest
from cmi_inspect.choices import BlindProtocolError, note_task_protocol, refuse_for_blind_tasks


@pytest.fixture(autouse=True)
def no_tasks_built_before():
    refuse_for_blind_tasks(None, None)  # consumes whatever other tests built


@pytest.mark.parametrize(("intervention", "risk_filter", "message"), [
    ("gold", None, "intervention=gold"),
    (None, "label", "risk_filter=label"),
    ("evidence", True, None),
    (None, None, None),
])
def test_blind_tasks_refuse_label_reading_choices(intervention, risk_filter, message):
    note_task_protocol("blind")
    if message is None:
        refuse_for_blind_tasks(intervention, risk_filter)
    else:
        with pytest.raises(BlindProtocolError, match=message):
            refuse_for_blind_tasks(intervention, risk_filter)


def test_paper_or_mixed_tasks_are_left_to_the_per_sample_check():
    note_task_protocol("paper")
    refuse_for_blind_tasks("gold", "label")
    note_task_protocol("paper")
    note_task_protocol("blind")
    refuse_for_blind_tasks("gold", "label")


def test_each_solver_consumes_the_tasks_built_before_it():
    note_task_protocol("blind")
    refuse_for_blind_tasks("evidence", None)
    refuse_for_blind_tasks("gold", None)  # no task built since: nothing to refuse
