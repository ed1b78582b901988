"""CMI's record of a sample as the Markdown of its explanation."""

from __future__ import annotations

from cmi_inspect.causal_locomo.strategies.cmi import CMI, Candidate, CMIDiagnostics
from cmi_inspect.causal_locomo.strategies.cmi.evidence import EvidenceWindow, Support
from cmi_inspect.causal_locomo.strategies.cmi.explain import explain


def record(**fields) -> dict:
    candidates = [
        Candidate(
            key="m1",
            rank=1,
            proposal_score=0.9,
            s_with=1.0,
            s_pert=0.5,
            utility=0.4,
            stability=0.5,
            reason="selected",
            memory_support=Support(score=0.5, missing=["x|y"]),
            conflicts={"m2": 0.91},
        ),
        Candidate(
            key="m2",
            rank=2,
            proposal_score=0.8,
            s_with=0.6,
            utility=0.0,
            perturbed_skipped="lazy_perturb: utility already rules it out",
            reason="utility +0.000 <= tau_u 0.0",
        ),
    ]
    base = {
        "config": {},
        "embedder": "hashing",
        "answer_no_memory": "I do not know.",
        "s_no": 0.6,
        "candidates": candidates,
        "model_calls": 4,
        "final_answer_reused": True,
    }
    return CMIDiagnostics(**{**base, **fields}).model_dump(mode="json")


def test_the_table_shows_each_candidates_scores_and_decision():
    text = explain(record(), {"m1": "gold_00 (useful)"})
    assert text.splitlines()[0] == (
        "CMI: s_no = 0.600; 4 intervention calls; final answer reused: True; "
        "intervention scorer: gold; risk filter: label; proposal: hybrid; selector: rule"
    )
    assert "| 1 | gold_00 (useful) | +1.000 | +0.500 | +0.400 | +0.500 | selected |" in text
    assert "| 2 | m2 | +0.600 | - (lazy_perturb: utility already rules it out) | +0.000 | - |" in text
    assert "Evidence from the history:" not in text
    assert CMI.explain(record(), {}) == explain(record(), {})


def test_the_evidence_is_shown_when_the_history_was_read():
    window = EvidenceWindow(ref="D2:1", relevance=0.8, dates=["yesterday = 1 May"], text="Jon: hi")
    text = explain(record(evidence=[window], support_no_memory=Support(score=0.0)), {})
    assert "- D2:1 (relevance 0.80; dates: yesterday = 1 May): Jon: hi" in text
    assert "No-memory answer support: 0.00" in text
    assert "| 1 | m1 | 0.50; lacks x/y | - | - | m2 (0.91) |" in text
    assert "| 2 | m2 | - | - | - | - |" in text


def test_a_graded_effect_shows_each_answers_probability_in_each_context():
    from cmi_inspect.causal_locomo.strategies.cmi.effect import ContextLikelihood, GradedEffect

    effect = GradedEffect(
        method="forced",
        answers=["I do not know.", "3 May"],
        scores=[0.0, 1.0],
        contexts=[
            ContextLikelihood(context="none", logprobs=[-0.1, -2.4], probabilities=[0.9, 0.1], expected=0.1),
            ContextLikelihood(context="with", logprobs=[-2.4, -0.1], probabilities=[0.1, 0.9], expected=0.9),
        ],
    )
    c = Candidate(key="m1", rank=1, proposal_score=0.5, utility=0.8, effect=effect, reason="selected")
    d = CMIDiagnostics(
        config={},
        embedder="e5",
        effect="graded",
        answer_no_memory=None,
        s_no=None,
        candidates=[c],
        model_calls=2,
        final_answer_reused=True,
    )
    text = CMI.explain(d.model_dump(), {"m1": "gold_00 (useful)"})
    assert text.startswith("CMI: s_no = -; 2 intervention calls")
    assert "| 1 | gold_00 (useful) | 3 May | 1.00 | 0.100 | 0.900 | - |" in text


def test_a_learned_selectors_probabilities_and_features_are_shown():
    d = record()
    d["selector"], d["selector_note"] = "learned_non_causal", "fitted on another model"
    d["candidates"][0] |= {"features": {"memory_support": 0.75, "versions": 1.0}, "probability": 0.61}
    text = explain(d, {"m1": "gold_00 (useful)"})
    assert "selector: learned_non_causal" in text.splitlines()[0]
    assert text.splitlines()[1] == "(fitted on another model)"
    assert "| # | memory | p(useful) | memory_support | versions |" in text
    assert "| 1 | gold_00 (useful) | 0.610 | 0.750 | 1.000 |" in text
