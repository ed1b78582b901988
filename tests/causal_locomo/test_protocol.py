"""The protocols' facts and the one refusal rule, before a run and in every sample."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.protocol import (
    PROTOCOLS,
    BlindProtocolError,
    logged_protocol,
    named_protocol,
)
from cmi_inspect.causal_locomo.strategies.cmi import CMI, CMIConfig
from cmi_inspect.errors import UserError

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


def test_a_task_given_its_strategy_refuses_what_its_protocol_hides_before_the_run():
    with pytest.raises(BlindProtocolError, match="intervention=gold"):
        causal_locomo(
            protocol="blind", data_file=str(SYNTHETIC), strategy="cmi", strategy_args={"intervention": "gold"}
        )
    causal_locomo(protocol="paper", data_file=str(SYNTHETIC), strategy="cmi", strategy_args={"intervention": "gold"})


def test_a_solver_given_apart_from_the_task_refuses_in_every_sample(tmp_path):
    from cmi_inspect.causal_locomo.strategies.solvers import cmi
    from inspect_ai import eval as inspect_eval

    from conftest import mock_model, samples_of

    [log] = inspect_eval(
        causal_locomo(protocol="blind", data_file=str(SYNTHETIC)),
        solver=cmi(intervention="gold"),
        model=mock_model(lambda p: "?"),
        display="none",
        log_dir=str(tmp_path),
        fail_on_error=False,
    )
    messages = [s.error.message if s.error else "" for s in samples_of(log)]
    assert len(messages) == 3 and all("intervention=gold" in m for m in messages), messages
    assert not any(s.scores for s in samples_of(log))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"intervention": "gold"}, "cmi with -S intervention=gold (the paper's CMI) reads the gold answer"),
        ({"ablation": "oracle"}, "The oracle ablation selects by label: it needs -T protocol=paper."),
        ({"k": 0}, "k must be an integer of at least 1, got 0."),
        ({"bogus": 1}, "Strategy 'cmi' takes no -S bogus; it takes k: int = 3"),
    ],
)
def test_both_ways_of_naming_a_strategy_refuse_the_same_argument_before_the_run(tmp_path, args, message):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.solver import SolverSpec

    from conftest import mock_model

    refusals = []
    for task_args, solver in (
        ({"strategy": "cmi", "strategy_args": args}, None),
        ({}, SolverSpec("cmi", args, args)),  # what --solver cmi -S gives
    ):
        with pytest.raises(UserError) as refused:
            inspect_eval(
                causal_locomo,  # by its registry name, so that the eval builds it
                task_args={"protocol": "blind", "data_file": str(SYNTHETIC), **task_args},
                solver=solver,
                model=mock_model(lambda p: "?"),
                display="none",
                log_dir=str(tmp_path),
            )
        refusals.append(str(refused.value))
    assert refusals[0] == refusals[1] and refusals[0].startswith(message) and "\n" not in refusals[0]
    assert not list(tmp_path.iterdir()), "refused before any log was started"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"intervention": "gold"}, "intervention=gold"),
        ({"risk_filter": "label"}, "risk_filter=label"),
        ({"intervention": "evidence", "risk_filter": "none"}, None),
        ({"ablation": "oracle"}, "oracle ablation selects by label"),
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
