"""Causal Memory Intervention: keep a memory only if it improves the answer, stably.

Per sample: propose K candidates with a weighted score (``proposal``), answer with no
memory, with each candidate and with a perturbed copy of it, score every answer with the
intervention scorer (``scorers``), and select by utility and stability (``rules``),
dropping what the risk filter (``risk``) flags; ``loop`` runs it, ``diagnostics`` is its
log record and ``explain`` renders that record.

What decides is one of two presets (``config.PRESETS``): the rule (thresholds and a risk
filter) or a learned selector (``selector``); every choice left unnamed follows the preset,
then the protocol's profile (``profiles``), resolved in ``config.settings`` alone. Under
``paper`` (the reference): answers are scored against the gold answer and memories
labelled harmful are dropped. Under ``blind`` (label-free):
answers are scored by their agreement with evidence from the agent's own history, a
candidate that conflicts with one the history supports better is dropped, and the
proposal has no recency term (recency is what promoted poison).
"""

from cmi_inspect.causal_locomo.strategies.cmi.ablations import ABLATIONS, Ablation
from cmi_inspect.causal_locomo.strategies.cmi.config import (
    PRESETS,
    CMIConfig,
    Preset,
    Settings,
    injected_scorer,
    settings,
)
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import (
    Candidate,
    CMIDiagnostics,
    logged_diagnostics,
)
from cmi_inspect.causal_locomo.strategies.cmi.interventions import (
    INTERVENTION_SCORERS,
    InterventionScorer,
    answer_key_scorer,
    gold_answer_scorer,
)
from cmi_inspect.causal_locomo.strategies.cmi.loop import CMI
from cmi_inspect.causal_locomo.strategies.cmi.profiles import PROFILES, Profile, ProposalWeights
from cmi_inspect.causal_locomo.strategies.cmi.proposal import proposal_scores
from cmi_inspect.causal_locomo.strategies.cmi.risk import RISK_FILTERS, RiskFilter, evidence_risk
from cmi_inspect.causal_locomo.strategies.cmi.rules import (
    PREFER,
    Choices,
    Decision,
    decide,
    rule_rejection,
)

__all__ = [
    "ABLATIONS",
    "CMI",
    "INTERVENTION_SCORERS",
    "PREFER",
    "PRESETS",
    "PROFILES",
    "RISK_FILTERS",
    "Ablation",
    "CMIConfig",
    "Choices",
    "CMIDiagnostics",
    "Candidate",
    "Decision",
    "Preset",
    "InterventionScorer",
    "Profile",
    "ProposalWeights",
    "RiskFilter",
    "Settings",
    "answer_key_scorer",
    "decide",
    "evidence_risk",
    "gold_answer_scorer",
    "injected_scorer",
    "logged_diagnostics",
    "proposal_scores",
    "rule_rejection",
    "settings",
]
