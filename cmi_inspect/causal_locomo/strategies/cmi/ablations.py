"""CMI's ablations: the variants of its rule, each by which answers it asks for and how it
decides (``-S ablation=``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ablation:
    """A variant of CMI's rule: which answers it asks for and how it decides."""

    name: str
    asks_no_memory: bool = True
    """Answers with no memory (every rule that reads a utility needs it)."""
    asks_with: bool = True
    """Answers with each candidate memory."""
    asks_perturbed: bool = True
    """Answers with each perturbed candidate."""
    tests_utility: bool = True
    """Rejects a candidate whose utility is not above tau_u."""
    tests_stability: bool = True
    """Rejects a candidate whose stability is below tau_s."""
    no_memory_as_perturbed: bool = False
    """Takes s_pert = s_no instead of asking for a perturbed answer."""
    by_label: bool = False
    """Selects exactly the candidates labelled useful, asking nothing."""
    skipped: str | None = None
    """Why no perturbed answer is asked for, as the log says it."""
    learned: bool = False
    """Ranks with the learned non_causal selector (``selector.SHIPPED``), not the rule."""
    refused_under_blind: str | None = None
    """Why a label-free protocol refuses it, as the user reads it (None: it reads no label)."""


ABLATIONS: dict[str, Ablation] = {
    a.name: a
    for a in (
        Ablation("full"),
        Ablation(
            "no_perturb",
            asks_perturbed=False,
            no_memory_as_perturbed=True,
            skipped="no_perturb ablation: s_pert = s_no",
        ),
        Ablation(
            "utility_only",
            asks_perturbed=False,
            tests_stability=False,
            skipped="utility_only ablation",
        ),
        Ablation("stability_only", tests_utility=False),
        Ablation(
            "non_causal",
            asks_no_memory=False,
            asks_with=False,
            asks_perturbed=False,
            tests_utility=False,
            tests_stability=False,
            skipped="non_causal ablation: no intervention",
        ),
        Ablation(
            "learned_non_causal",
            asks_no_memory=False,
            asks_with=False,
            asks_perturbed=False,
            tests_utility=False,
            tests_stability=False,
            learned=True,
            skipped="learned_non_causal ablation: no intervention",
        ),
        Ablation(
            "oracle",
            asks_with=False,
            asks_perturbed=False,
            tests_utility=False,
            tests_stability=False,
            by_label=True,
            skipped="oracle ablation: no intervention",
            refused_under_blind=(
                "The oracle ablation selects by label: it needs -T protocol=paper."
            ),
        ),
    )
}
"""CMI and its ablations by name. The paper's reference code has the first five;
``non_causal`` is the row the rule has to beat: the same proposal, risk filter and budget
with no intervention call, so the top-ranked candidates the filter keeps.
``learned_non_causal`` is the row the learned selector has to beat: the same learned ranking
without the features that read intervention answers."""

LEARNED_ABLATIONS = ("full", "learned_non_causal")
"""The ablations a learned selector ranks for; the others test the rule."""
