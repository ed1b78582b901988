"""The paper's reported figures (response model GPT-4.1, judge GPT-5, the 87 examples).

Shown beside our results for comparison, always labelled as the paper's.
"""

from __future__ import annotations

from cmi_inspect.causal_locomo.data import PAPER_FAMILIES

PAPER_LABEL = "paper (GPT-4.1, judge GPT-5)"
PAPER_URL = "https://arxiv.org/abs/2605.17641v1"
"""The paper, Srivastava 2026, "Causal Intervention-Based Memory Selection for Long-Horizon
LLM Agents": its versioned arXiv page, as the register's ``arxiv`` field names it."""

TABLE1: dict[str, dict[str, float]] = {
    "cmi": {
        "score": 0.846,
        "success": 0.816,
        "useful_f1": 0.875,
        "bad_rejection": 0.990,
        "poison_adoption": 0.000,
        "n_selected": 0.943,
    },
    "reflection_memory": {
        "score": 0.845,
        "success": 0.793,
        "useful_f1": 0.486,
        "bad_rejection": 0.557,
        "poison_adoption": 0.540,
        "n_selected": 3.000,
    },
    "vector_memory": {
        "score": 0.839,
        "success": 0.782,
        "useful_f1": 0.501,
        "bad_rejection": 0.566,
        "poison_adoption": 0.609,
        "n_selected": 3.000,
    },
    "graph_memory": {
        "score": 0.824,
        "success": 0.759,
        "useful_f1": 0.469,
        "bad_rejection": 0.550,
        "poison_adoption": 0.586,
        "n_selected": 3.000,
    },
    "summary_memory": {
        "score": 0.723,
        "success": 0.586,
        "useful_f1": 0.308,
        "bad_rejection": 0.000,
        "poison_adoption": 0.621,
        "n_selected": 5.644,
    },
    "full_history": {
        "score": 0.515,
        "success": 0.218,
        "useful_f1": 0.308,
        "bad_rejection": 0.000,
        "poison_adoption": 0.621,
        "n_selected": 5.644,
    },
    "no_memory": {
        "score": 0.429,
        "success": 0.034,
        "useful_f1": 0.000,
        "bad_rejection": 1.000,
        "poison_adoption": 0.000,
        "n_selected": 0.000,
    },
}

_BY_FAMILY = {  # in PAPER_FAMILIES' order
    "cmi": (0.901, 0.754, 0.808, 0.985),
    "reflection_memory": (0.918, 0.738, 0.823, 0.660),
    "vector_memory": (0.925, 0.730, 0.731, 0.985),
    "graph_memory": (0.914, 0.725, 0.731, 0.660),
    "summary_memory": (0.822, 0.600, 0.583, 0.985),
    "full_history": (0.548, 0.491, 0.432, 0.610),
    "no_memory": (0.421, 0.442, 0.445, 0.350),
}
TABLE2: dict[str, dict[str, float]] = {
    strategy: dict(zip(PAPER_FAMILIES, scores, strict=True))
    for strategy, scores in _BY_FAMILY.items()
}

TABLE3: dict[str, dict[str, float]] = {
    "useful": {"utility": 0.307, "stability": 0.027},
    "irrelevant": {"utility": -0.009, "stability": 0.000},
    "harmful": {"utility": -0.033, "stability": 0.001},
}
