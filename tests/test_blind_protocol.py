"""Under the blind protocol no label, label-bearing field or answer key reaches a response-model prompt.

Every prompt the response model receives is captured (mockllm) for every
strategy. Two checks: on synthetic examples whose label-bearing fields and
answer key are replaced by canary strings, no canary may appear at all; on
the release, no memory id, label word, field value or answer-key string may
appear unless the text the strategy may see (request, memory contents, past
sessions) contains it too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

import pytest
from cmi_inspect.causal_locomo.blinding import strip_answer_suffix
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.solvers import (
    cmi,
    full_history,
    graph_memory,
    no_memory,
    reflection_memory,
    summary_memory,
    vector_memory,
)
from inspect_ai import eval as inspect_eval
from inspect_ai.solver import Solver

from conftest import SYNTHETIC, mock_model, run_blind

SOLVERS: dict[str, Callable[[], Solver]] = {
    "no_memory": no_memory,
    "full_history": full_history,
    "summary_memory": summary_memory,
    "vector_memory": partial(vector_memory, embedder="hashing"),  # what it sees is the same with e5
    "graph_memory": graph_memory,
    "reflection_memory": reflection_memory,
}
LABEL_FIELDS = ("label", "type", "causal_role", "synthetic", "expected_effect", "derivation")


def capture(solver, tmp_path, **task_args) -> list[str]:
    prompts: list[str] = []
    log = run_blind(solver, tmp_path, prompts, **task_args)
    assert log.status == "success", log.error
    assert prompts
    return prompts


def canary_file(tmp_path):
    lines = []
    for i, line in enumerate(SYNTHETIC.read_text().splitlines()):
        record = json.loads(line)
        for j, m in enumerate(record["memory_bank"]):
            m["memory_id"] = f"CANARYID{i}x{j}"
            m["type"], m["causal_role"] = f"CANARYTYPE{j}", f"CANARYROLE{j}"
            m["expected_effect"], m["derivation"] = f"CANARYEFFECT{j}", {"method": f"CANARYDERIV{j}"}
            m["synthetic"] = "CANARYSYNTH"
            m["attack_kind"] = f"CANARYKIND{j}"
        ids = [m["memory_id"] for m in record["memory_bank"]]
        record["gold_memory_ids"] = [ids[0]]
        record["bad_memory_ids"] = ids[1:]
        c = record["scoring_criteria"]
        c.update(
            expected_answer="CANARYANSWER",
            answer_aliases=["CANARYALIAS"],
            must_include=["CANARYMUST"],
            must_not_include=["CANARYMUSTNOT"],
            judge_instructions="CANARYJUDGE",
            adversarial_answer="CANARYADVERSARIAL",
        )
        record["gold_behavior"] = "CANARYBEHAVIOUR"
        lines.append(json.dumps(record))
    path = tmp_path / "canary.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("name", SOLVERS)
def test_no_canary_reaches_the_model(name, tmp_path):
    prompts = capture(SOLVERS[name](), tmp_path, data_file=str(canary_file(tmp_path)))
    text = "\n".join(prompts)
    assert "CANARY" not in text
    for word in ("useful", "irrelevant", "harmful", "[label:", "[scope:"):
        assert word not in text.lower()


def test_cmi_with_the_gold_scorer_refuses_blind(tmp_path):
    gold_cmi = cmi(intervention="gold")  # built before the task, so the sample's own check refuses
    [log] = inspect_eval(
        causal_locomo(protocol="blind", data_file=str(SYNTHETIC)),
        solver=gold_cmi,
        model=mock_model(lambda p: "x"),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "error"
    assert "blind protocol forbids" in (log.error.message if log.error else "")


def _leaks(record: dict, prompt: str) -> list[str]:
    """Label-bearing or answer-key strings in the prompt that the visible text does not contain."""
    visible = "\n".join(
        [
            record["current_task"]["instruction"],
            *(strip_answer_suffix(m["content"]) for m in record["memory_bank"]),
            *(s["content"] for s in record["past_sessions"]),
        ]
    ).lower()
    secrets = {"useful", "irrelevant", "harmful", "[label:", record["gold_behavior"]}
    for m in record["memory_bank"]:
        secrets |= {m["memory_id"], m["type"], m["causal_role"], m["expected_effect"], json.dumps(m["derivation"])}
    c = record["scoring_criteria"]
    secrets |= {c["expected_answer"], *c["answer_aliases"], c["judge_instructions"]}
    return [s for s in secrets if s and s.lower() in prompt.lower() and s.lower() not in visible]


@pytest.mark.slow  # every strategy over all 87 examples
@pytest.mark.parametrize("name", SOLVERS)
def test_release_prompts_carry_nothing_beyond_visible_text(name, tmp_path, real_records):
    records = [r.model_dump(mode="json") for r in real_records]

    def source(prompt: str) -> dict:
        # an answer prompt carries the question; the summary request, the whole bank
        return next(
            r
            for r in records
            if f"Question: {r['current_task']['instruction']}\n" in prompt
            or all(strip_answer_suffix(m["content"]) in prompt for m in r["memory_bank"])
        )

    prompts = capture(SOLVERS[name](), tmp_path)
    assert len(prompts) >= 87
    for prompt in prompts:
        assert _leaks(source(prompt), prompt) == []
        assert "Resolved temporal answer" not in prompt and "Resolved answer for" not in prompt
