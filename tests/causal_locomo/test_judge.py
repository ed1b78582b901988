"""Judge prompt, verdict parsing and the deterministic fallback."""

from __future__ import annotations

from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.causal_locomo.judge import FALLBACK_JUDGE, alias_verdict, judge_prompt, parse_verdict

CRITERIA = ScoringCriteria(
    expected_answer="7 May 2023",
    answer_aliases=["May 7, 2023"],
    adversarial_answer="8 May 2023",
    judge_instructions="Be strict.",
)


def test_prompt_carries_task_behaviour_criteria_and_response():
    prompt = judge_prompt("When?", "Give the date.", CRITERIA, "On May 7, 2023.")
    for part in ("When?", "Give the date.", "May 7, 2023", "Be strict.", "On May 7, 2023.", "task_success_score"):
        assert part in prompt


def test_parse_verdict():
    v = parse_verdict('Sure: {"task_success_score": 0.75, "passes": true}', "grader")
    assert (v.score, v.error, v.judge) == (0.75, None, "grader")
    assert parse_verdict("no json here", "g").error == "no JSON object in the judge's reply"
    bad = parse_verdict('{"task_success_score": "high"}', "g")
    assert bad.score == 0.0 and "unreadable verdict" in (bad.error or "")
    missing = parse_verdict('{"passes": true}', "g")
    assert missing.score == 0.0 and "KeyError" in (missing.error or "")
    assert parse_verdict('{"task_success_score": 3}', "g").error == "task_success_score 3.0 outside [0, 1]"
    assert parse_verdict('{"task_success_score": 1', "g").score == 0.0


def test_alias_fallback():
    assert alias_verdict("It was May 7, 2023.", CRITERIA).score == 1.0
    assert alias_verdict("7 may 2023", CRITERIA).judge == FALLBACK_JUDGE
    assert alias_verdict("Not sure.", CRITERIA).score == 0.0
    both = alias_verdict("7 May 2023 or 8 May 2023", CRITERIA)
    assert both.score == 0.0 and "adversarial" in both.raw
