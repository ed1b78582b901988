"""CMI's defaults under each protocol: one typed profile per protocol, read by
``config.settings`` alone.

``paper`` is the reference: interventions scored against the gold answer, memories
labelled harmful dropped, the hashing embedder and the hybrid proposal. ``blind`` is
label-free: interventions scored by the agent's own history and graded by the model's
likelihood of the answers, a memory that conflicts with a better-supported one dropped,
e5 and a proposal without recency. Neither fixes how many memories are kept: that is the
rule's or the learned selector's to decide (``config.settings``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cmi_inspect.causal_locomo.protocol import ProtocolName

PresetName = Literal["rule", "learned"]
"""CMI's presets (``config.PRESETS``): what decides which candidates it keeps."""


@dataclass(frozen=True)
class ProposalWeights:
    """The proposal score's weights: embedding cosine (mapped to [0, 1]), min-max recency of
    the memory's timestamp, and token Jaccard with the request."""

    name: str
    """How the log names the proposal."""
    cosine: float
    recency: float
    jaccard: float


HYBRID = ProposalWeights("hybrid", cosine=0.7, recency=0.2, jaccard=0.1)
"""The reference's proposal (the paper's CMI code)."""
RELEVANCE = ProposalWeights("relevance", cosine=0.7, recency=0.0, jaccard=0.1)
"""The label-free proposal: a memory's date says nothing about its effect, and in the
release recency is what promoted the poison."""


@dataclass(frozen=True)
class Profile:
    """What CMI runs under one protocol unless a choice is named: the preset it runs by
    default, and the settings of the rule preset (which the learned one keeps in part)."""

    protocol: ProtocolName
    intervention: str
    """The intervention scorer (``scorers.INTERVENTION_SCORERS``)."""
    risk_filter: str
    """The risk filter (``risk.RISK_FILTERS``)."""
    embedder: str
    """The proposal's embedder: ``hashing`` keeps the reproduction's exact selections (and
    speed); e5's relevance separates useful from irrelevant memories far better than
    character n-grams do."""
    proposal: ProposalWeights
    effect: str
    """How intervention answers become a memory's effect (``effect.EFFECTS``)."""
    tau_u: float
    """Utility a kept memory must exceed."""
    tau_s: float
    """Stability a kept memory must reach (-1: any; stabilities lie in [-1, 1])."""
    prefer: str
    """Which passing candidates fill the budget first (``rules.PREFER``)."""
    preset: PresetName = "rule"
    """What decides by default: ``rule`` (the thresholds above) or ``learned`` (the shipped
    learned selector, which ranks the candidates itself)."""


PROFILES: dict[ProtocolName, Profile] = {
    p.protocol: p
    for p in (
        Profile(
            "paper",
            "gold",
            "label",
            "hashing",
            HYBRID,
            "answer",
            0.0,
            0.0,
            "utility",
        ),
        # thresholds chosen on the development sets (benchmarks/tune_cmi.py, docs/RESULTS.md)
        # with a budget of one: every candidate whose graded effect raises the answer's
        # expected score by more than 0.05, best-ranked first; stability is logged, never vetoes
        Profile(
            "blind",
            "evidence",
            "evidence",
            "e5",
            RELEVANCE,
            "graded",
            0.05,
            -1.0,
            "proposal",
            "learned",
        ),
    )
}
