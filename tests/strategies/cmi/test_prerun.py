"""The refusal of label-reading CMI choices for blind tasks, before any sample runs."""

from __future__ import annotations

import pytest
from cmi_inspect.strategies.cmi import BlindProtocolError, CMIConfig, note_task_protocol, refuse_for_blind_tasks


@pytest.fixture(autouse=True)
def no_tasks_built_before():
    refuse_for_blind_tasks(CMIConfig())  # consumes whatever other tests built


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"intervention": "gold"}, "intervention=gold"),
        ({"risk_filter": "label"}, "risk_filter=label"),
        ({"intervention": "evidence", "risk_filter": "none"}, None),
        ({"ablation": "oracle"}, None),  # left to the per-sample refusal
        ({}, None),
    ],
)
def test_blind_tasks_refuse_label_reading_choices(config, message):
    note_task_protocol("blind")
    if message is None:
        refuse_for_blind_tasks(CMIConfig(**config))
    else:
        with pytest.raises(BlindProtocolError, match=message):
            refuse_for_blind_tasks(CMIConfig(**config))


def test_paper_or_mixed_tasks_are_left_to_the_per_sample_check():
    gold = CMIConfig(intervention="gold", risk_filter="label")
    note_task_protocol("paper")
    refuse_for_blind_tasks(gold)
    note_task_protocol("paper")
    note_task_protocol("blind")
    refuse_for_blind_tasks(gold)


def test_each_solver_consumes_the_tasks_built_before_it():
    note_task_protocol("blind")
    refuse_for_blind_tasks(CMIConfig())
    refuse_for_blind_tasks(CMIConfig(intervention="gold"))  # no task built since: nothing to refuse
