"""The risk filters: their verdicts, the conflicts the evidence filter measures, the registry."""

from __future__ import annotations

import pytest
from cmi_inspect.causal_locomo.strategies.cmi import CMI, RISK_FILTERS, Candidate, CMIConfig, RiskFilter, evidence_risk
from cmi_inspect.causal_locomo.strategies.cmi.evidence import BlindEvidence, Support
from cmi_inspect.causal_locomo.strategies.cmi.history import History
from cmi_inspect.causal_locomo.strategies.cmi.risk import Conflicts, decimals_apart, find_conflicts
from cmi_inspect.causal_locomo.strategies.guard import Session
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.retrieval import HashingEmbedder

from conftest import gold_scorer, memory_task_for, mock_model


def supported(key: str, memory: float, answer: float | None, conflicts: dict[str, float]) -> Candidate:
    return Candidate(
        key=key,
        rank=1,
        proposal_score=0.0,
        memory_support=Support(score=memory),
        support_with=Support(score=answer) if answer is not None else None,
        conflicts=conflicts,
    )


def test_the_label_filter_drops_only_memories_labelled_harmful():
    label = RISK_FILTERS["label"]
    c = Candidate(key="a", rank=1, proposal_score=0.0)
    assert label.verdict(c, Memory("a", "x", 1, label="harmful"), {}) == "risk filter: labelled harmful"
    assert label.verdict(c, Memory("a", "x", 1, label="useful"), {}) is None
    assert RISK_FILTERS["none"].verdict(c, Memory("a", "x", 1, label="harmful"), {}) is None


def test_evidence_risk_weighs_the_memory_and_its_answer():
    a = supported("a", 0.5, 0.4, {"b": 0.9})
    b = supported("b", 0.6, 0.2, {"a": 0.9})
    by_key = {"a": a, "b": b}
    assert evidence_risk(a, by_key) is None  # 0.90 against 0.80
    assert evidence_risk(b, by_key) == (  # the scorer writes a's data id for its placeholder
        "evidence risk: another version of the claim of ⟨a⟩, which the history supports better (0.90 vs 0.80)"
    )
    assert str(evidence_risk(b, by_key, str)).startswith("evidence risk: another version of the claim of a,")
    lone = supported("c", 0.0, None, {})
    assert evidence_risk(lone, {"c": lone}) is None  # no conflict, nothing to prefer
    assert RISK_FILTERS["evidence"].verdict(b, Memory("b", "x", 1), by_key) == evidence_risk(b, by_key)


def test_evidence_risk_writes_enough_digits_to_show_the_difference():
    a = supported("a", 0.0213, None, {"b": 0.9})
    b = supported("b", 0.0208, None, {"a": 0.9})
    assert evidence_risk(b, {"a": a, "b": b}, str) == (
        "evidence risk: another version of the claim of a, which the history supports better (0.0213 vs 0.0208)"
    )
    assert decimals_apart(0.5, 0.5) == 2 and decimals_apart(0.30001, 0.3, 3) == 5


NO_HISTORY = History(BlindEvidence("", []))
HISTORY = History(
    BlindEvidence(
        "Who did Jon go hiking with?",
        [
            Session("1 May 2023", [("Jon", "Went hiking with my sister Ola today."), ("Marek", "Nice!")]).past_session(
                1
            ),
            Session("9 May 2023", [("Jon", "The bakery opens at seven now."), ("Ola", "Good.")]).past_session(2),
        ],
    )
)


async def test_topic_conflicts_are_paraphrases_or_one_value_edits():
    memories = {
        "a": Memory("a", "Jon went hiking with his sister Ola in May", 1),
        "b": Memory("b", "Jon went hiking with his neighbour Marek in May", 1),
        "c": Memory("c", "The bakery opens at seven on weekdays", 1),
    }
    cands = [Candidate(key=k, rank=i, proposal_score=0.0) for i, k in enumerate(memories, start=1)]
    topic = CMIConfig(conflict_kind="topic").conflicts
    await find_conflicts(cands, memories, HashingEmbedder(), topic, NO_HISTORY)
    assert set(cands[0].conflicts) == {"b"} and set(cands[1].conflicts) == {"a"} and cands[2].conflicts == {}
    strict = CMIConfig(conflict_kind="topic", conflict_similarity=1.01, conflict_overlap=1.01)
    await find_conflicts(cands, memories, HashingEmbedder(), strict.conflicts, NO_HISTORY)
    assert all(c.conflicts == {} for c in cands)


async def test_claim_conflicts_are_the_same_slot_with_another_value():
    memories = {
        "a": Memory("a", "Jon went hiking up the steep hills above the lake with his sister Ola", 1),
        "b": Memory("b", "Jon went hiking up the steep hills above the lake with his neighbour Marek", 1),
        "c": Memory("c", "Jon went hiking up the steep hills above the lake with his sister Ola; it rained", 1),
        "d": Memory("d", "The bakery opens at seven on weekdays", 1),
        "e": Memory("e", "The bakery opens at nine on weekdays", 1),
    }
    cands = [Candidate(key=k, rank=i, proposal_score=0.0) for i, k in enumerate(memories, start=1)]
    assert CMIConfig().conflicts.kind == "claim"
    await find_conflicts(cands, memories, HashingEmbedder(), CMIConfig().conflicts, HISTORY)
    found = {c.key: set(c.conflicts) for c in cands}
    # b swaps who, e the hour; c restates a with more detail: no other value
    assert found["a"] == {"b"} and "a" not in found["c"] and found["d"] == {"e"} and found["e"] == {"d"}
    assert found["b"] <= {"a", "c"} and found["c"] <= {"b"}
    assert all(0.5 <= share <= 1.0 for c in cands for share in c.conflicts.values())
    await find_conflicts(cands, memories, HashingEmbedder(), CMIConfig(conflict_overlap=1.01).conflicts, HISTORY)
    assert all(c.conflicts == {} for c in cands)


def test_an_unknown_conflict_kind_is_one_line():
    with pytest.raises(ValueError, match="Unknown conflict kind 'vibe'; choose from claim, topic"):
        Conflicts(0.9, 0.5, kind="vibe")
    with pytest.raises(ValueError, match="Unknown conflict_kind 'vibe'; choose from claim, topic"):
        CMIConfig(conflict_kind="vibe")


def test_the_label_filters_refusal_names_every_label_free_filter():
    label_free = [name for name, f in RISK_FILTERS.items() if f.refused_under_blind is None]
    assert RISK_FILTERS["label"].refused_under_blind is not None
    assert RISK_FILTERS["label"].refused_under_blind.endswith(f"choose from {', '.join(label_free)}.")


async def test_a_new_filter_is_picked_up_by_name(synthetic_records, monkeypatch):
    def drop_gold(c, memory, by_key):
        return "test filter: no gold" if c.key.startswith("gold") else None

    monkeypatch.setitem(RISK_FILTERS, "no_gold", RiskFilter("no_gold", drop_gold))
    record = synthetic_records[0]
    respond = lambda p: "3 March 2022" if "Comet on 3 March 2022" in p else "I do not know."  # noqa: E731
    task = memory_task_for(record, model=mock_model(respond), score_answer=gold_scorer(record))
    sel = await CMI(HashingEmbedder(), CMIConfig(k=4, risk_filter="no_gold")).select(task)
    assert sel.picks == []
    assert sel.details is not None and sel.details.model_dump()["risk_filter"] == "no_gold"
    reasons = {c["key"]: c["reason"] for c in sel.details.model_dump()["candidates"]}
    assert reasons["gold_00"] == "test filter: no gold"


def test_an_unknown_filter_is_refused_before_any_sample():
    with pytest.raises(ValueError, match="choose from label, evidence, none"):
        CMIConfig(risk_filter="no_gold")


class OneWayEmbedder(HashingEmbedder):
    """Cosine 0.95 from the first text to the second, 0.5 back: an embedder whose first
    argument is embedded differently (e5's query side)."""

    async def cosine(self, query, texts):
        import numpy as np

        return np.array([0.95 if query.startswith("Jon") else 0.5 for _ in texts])


async def test_the_conflict_relation_is_symmetric_whatever_the_embedders_sides():
    memories = {
        "a": Memory("a", "Jon went hiking in May", 1),
        "b": Memory("b", "Hiking trip happened in June", 1),
    }
    cands = [Candidate(key=k, rank=i, proposal_score=0.0) for i, k in enumerate(memories, start=1)]
    topic = CMIConfig(conflict_kind="topic", conflict_overlap=1.01).conflicts
    await find_conflicts(cands, memories, OneWayEmbedder(), topic, NO_HISTORY)
    assert cands[0].conflicts == {"b": 0.95} and cands[1].conflicts == {"a": 0.95}
