"""Each perturbation kind, and which kind a memory gets."""

from __future__ import annotations

from cmi_inspect.causal_locomo.strategies.cmi.perturb import (
    PERTURBATIONS,
    negation,
    perturb,
    perturbation_kind,
    temporal_shift,
)
from cmi_inspect.causal_locomo.view import Memory


def test_negation_of_key_verbs():
    assert negation("Melanie prefers tea.") == "Melanie does not prefer tea."
    assert negation("Jon likes jazz and prefers blues.") == "Jon likes jazz and does not prefer blues."
    assert negation("They use Linux.") == "They do not use Linux."
    assert negation("You should rest.") == "You should not rest."
    assert negation("Keep calm.") == "do not keep calm."


def test_negation_fallback_denies_the_claim():
    assert negation("Caroline moved in 2020.") == "It is not true that caroline moved in 2020."
    assert negation("Users are happy.") == "It is not true that users are happy."  # 'use' is a whole word


def test_temporal_shift_keeps_the_text():
    shifted = temporal_shift("Jon lost his job on 20 January.")
    assert shifted.endswith("Jon lost his job on 20 January.") and "may no longer hold" in shifted


def test_kind_follows_the_label_and_defaults_to_negation():
    assert perturbation_kind(Memory("a", "x", 1, label="harmful")) == "temporal_shift"
    assert perturbation_kind(Memory("a", "x", 1, label="useful")) == "negation"
    assert perturbation_kind(Memory("a", "x", 1)) == "negation"
    kind, copy = perturb(Memory("a", "Ann likes tea.", 3, scope="Ann", label="useful"))
    assert kind == "negation" and copy == Memory("a", "Ann does not like tea.", 3, "Ann", "useful")
    assert set(PERTURBATIONS) == {"negation", "temporal_shift"}
