"""The label-free CMI through a real ``inspect_ai.eval`` of the blind task.

Every prompt the response model receives is captured; none may carry a label,
a label-bearing field value, the gold answer, an alias, a scoring criterion
or the answer suffix. Bad choices end in one line that names the choices.
"""

from __future__ import annotations

import json

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.cmi.selector import shipped
from cmi_inspect.causal_locomo.strategies.solvers import cmi
from cmi_inspect.errors import UserError

from conftest import LABEL_FREE, SYNTHETIC, run_blind, samples_of

SUFFIX = "Resolved temporal answer: CANARYSUFFIX"


def canary_file(tmp_path) -> str:
    """Both fixtures with every hidden field replaced by a canary, and the answer suffix added."""
    lines = []
    for i, line in enumerate([*SYNTHETIC.read_text().splitlines(), *LABEL_FREE.read_text().splitlines()]):
        record = json.loads(line)
        for j, m in enumerate(record["memory_bank"]):
            old = m["memory_id"]
            m["memory_id"] = f"CANARYID{i}x{j}"
            record["gold_memory_ids"] = [m["memory_id"] if g == old else g for g in record["gold_memory_ids"]]
            record["bad_memory_ids"] = [m["memory_id"] if b == old else b for b in record["bad_memory_ids"]]
            m["type"], m["causal_role"], m["scope"] = f"CANARYTYPE{j}", f"CANARYROLE{j}", f"CANARYSCOPE{j}"
            m["expected_effect"], m["derivation"] = f"CANARYEFFECT{j}", {"method": f"CANARYDERIV{j}"}
            m["synthetic"] = "CANARYSYNTH"
            if m["label"] == "useful":
                m["content"] = f"{m['content']} {SUFFIX}"
        c = record["scoring_criteria"]
        c.update(
            expected_answer="CANARYANSWER",
            answer_aliases=["CANARYALIAS"],
            must_include=["CANARYMUST"],
            must_not_include=["CANARYMUSTNOT"],
            judge_instructions="CANARYJUDGE",
            adversarial_answer="CANARYADVERSARIAL",
            style="CANARYSTYLE",
        )
        record["gold_behavior"] = "CANARYBEHAVIOUR"
        lines.append(json.dumps(record))
    path = tmp_path / "canary.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def selector_for_the_mock_model(tmp_path) -> str:
    """The shipped learned selector, as if fitted on the mock model's answers, so that its
    interventions run (for another model it gives way to learned non_causal, which asks none)."""
    path = tmp_path / "learned-mock.json"
    shipped("learned").model_copy(update={"response_model": "mockllm/model"}).save(path)
    return str(path)


@pytest.mark.parametrize("selector", ["learned", "rule"])
def test_no_canary_reaches_the_model_from_blind_cmi(tmp_path, selector):
    prompts: list[str] = []
    chosen = selector_for_the_mock_model(tmp_path) if selector == "learned" else selector
    solver = cmi(embedder="hashing", selector=chosen)
    log = run_blind(solver, tmp_path, prompts, data_file=canary_file(tmp_path))
    assert log.status == "success", log.error
    assert len(prompts) >= 6
    text = "\n".join(prompts)
    assert "CANARY" not in text and "Resolved temporal answer" not in text
    for word in ("useful", "irrelevant", "harmful", "[label:", "[scope:"):
        assert word not in text.lower()
    for sample in samples_of(log):
        details = sample.store["MemorySelection:details"]
        risk = "none" if selector == "learned" else "evidence"  # a learned selector weighs conflicts itself
        assert (details["intervention"], details["risk_filter"]) == ("evidence", risk)
        assert details["selector"] == ("learned" if selector == "learned" else "rule")
        assert details["model_calls"] <= 2 * details["config"]["k"] + 2


@pytest.mark.slow  # blind CMI on the whole release
@pytest.mark.heavy  # minutes on two cores: -m 'not heavy' leaves it out
def test_blind_cmi_on_the_release_prompts_only_visible_text(tmp_path, real_records):
    visible = "\n".join(
        text
        for r in real_records
        for text in (
            r.current_task.instruction,
            *(m.content for m in r.memory_bank),
            *(s.content for s in r.past_sessions),
        )
    ).lower()
    prompts: list[str] = []
    log = run_blind(cmi(embedder="hashing", selector=selector_for_the_mock_model(tmp_path)), tmp_path, prompts)
    assert log.status == "success", log.error
    text = "\n".join(prompts).lower()
    assert "resolved temporal answer" not in text and "resolved answer for" not in text
    for r in real_records:
        secrets = {
            r.gold_behavior,
            r.scoring_criteria.expected_answer,
            *r.scoring_criteria.answer_aliases,
            *(m.memory_id for m in r.memory_bank),
            *(m.type for m in r.memory_bank),
        }
        leaked = [s for s in secrets if s and s.lower() in text and s.lower() not in visible]
        assert leaked == [], r.example_id


@pytest.mark.parametrize(
    ("args", "choices"),
    [
        ({"intervention": "judge"}, "choose from gold, evidence"),
        ({"risk_filter": "labels"}, "choose from label, evidence, none"),
    ],
)
def test_unknown_choices_name_the_choices(args, choices):
    with pytest.raises(UserError, match=choices):
        cmi(**args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"intervention": "gold"}, "choose the label-free -S intervention=evidence"),
        ({"risk_filter": "label"}, "blind protocol hides; choose from evidence, none"),
    ],
)
def test_gold_reading_choices_refuse_blind(args, message, tmp_path):
    log = run_blind(cmi(embedder="hashing", **args), tmp_path, data_file=str(SYNTHETIC))
    assert log.status == "error"
    assert message in (log.error.message if log.error else "")


def test_gold_under_a_blind_task_is_refused_when_the_task_is_given_the_strategy():
    with pytest.raises(UserError, match="choose the label-free -S intervention=evidence"):
        causal_locomo(
            protocol="blind", data_file=str(SYNTHETIC), strategy="cmi", strategy_args={"intervention": "gold"}
        )
    cmi(intervention="gold")  # a solver alone knows no protocol: each sample refuses it (test_protocol)
