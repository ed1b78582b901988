"""The protocols' facts, the one refusal rule, and the record of tasks built before their solver."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.protocol import (
    BUILT_TASKS,
    PROTOCOLS,
    BlindProtocolError,
    BuiltTasks,
    logged_protocol,
    named_protocol,
)
from cmi_inspect.causal_locomo.task import causal_locomo
from cmi_inspect.errors import UserError
from cmi_inspect.strategies.cmi import CMI, CMIConfig

from conftest import SYNTHETIC


def test_paper_is_the_reference_and_blind_is_label_free_and_strict():
    assert list(PROTOCOLS) == ["paper", "blind"]
    paper, blind = PROTOCOLS["paper"], PROTOCOLS["blind"]
    assert (paper.label_free, paper.scoring) == (False, "paper")
    assert (blind.label_free, blind.scoring) == (True, "strict")


def test_refuse_turns_a_choice_down_only_under_a_label_free_protocol():
    PROTOCOLS["paper"].refuse("reads labels")
    PROTOCOLS["blind"].refuse(None)
    assert PROTOCOLS["paper"].permits("reads labels") and not PROTOCOLS["blind"].permits("reads labels")
    with pytest.raises(BlindProtocolError, match="^reads labels$"):
        PROTOCOLS["blind"].refuse("reads labels")


def test_a_protocol_by_name_or_one_line_naming_them():
    assert named_protocol("blind") is PROTOCOLS["blind"]
    with pytest.raises(UserError, match="^Unknown protocol 'open'; choose from paper, blind.$"):
        named_protocol("open")
    with pytest.raises(UserError, match="Unknown protocol"):
        named_protocol(["paper"])  # as YAML can hand it over
    assert logged_protocol("blind") is PROTOCOLS["blind"] and logged_protocol("open") is None


def test_a_solver_is_built_for_the_tasks_of_one_protocol_built_since_the_last():
    record = BuiltTasks()
    assert record.for_solver() is None
    record.built("blind")
    record.built("blind")
    assert record.for_solver() is PROTOCOLS["blind"]
    assert record.for_solver() is None  # taken: those tasks have their solver
    record.built("paper")
    record.built("blind")
    assert record.for_solver() is None  # several protocols: left to each sample's check
    record.built("blind")
    record.started()
    assert record.for_solver() is None  # the run has its solver, whichever came first


def test_the_task_notes_its_protocol_for_the_next_solver():
    BUILT_TASKS.started()  # whatever other tests built
    causal_locomo(protocol="blind", data_file=str(SYNTHETIC))
    assert BUILT_TASKS.for_solver() is PROTOCOLS["blind"]


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
def test_cmi_refuses_label_reading_choices_for_blind_tasks(config, message):
    strategy = CMI(config=CMIConfig(**config))
    strategy.check_protocol(PROTOCOLS["paper"])
    if message is None:
        strategy.check_protocol(PROTOCOLS["blind"])
    else:
        with pytest.raises(BlindProtocolError, match=message):
            strategy.check_protocol(PROTOCOLS["blind"])
