"""The benchmark's deterministic answer score and memory-selection metrics, as the paper's
reference code computes them (README, "Running one strategy").

Pure functions over the typed records, so they work offline on loaded data
as well as inside Inspect scorers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from cmi_inspect.causal_locomo.answer_rules import answer_rule
from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.text import word_count

DET_WEIGHT = 0.7
JUDGE_WEIGHT = 0.3
SUCCESS_THRESHOLD = 0.7
SELECTION_KEYS = (
    "recall",
    "precision",
    "useful_f1",
    "poison_adoption",
    "bad_rejection",
    "n_selected",
)
"""The metrics ``selection_metrics`` returns, in the order the scorer logs them."""
F1_AT = (1, 3)
"""The depths k of ``f1_at_k``: useful F1 of a ranking's top k, the same k for every strategy."""


def _fraction_contained(items: list[str], text: str) -> float:
    return sum(item.lower() in text for item in items) / len(items)


def deterministic_score(response: str, criteria: ScoringCriteria) -> float:
    """Mean of the applicable rule components; 0.5 when none applies.

    Substring tests are case-insensitive. Answer aliases are deliberately not
    matched here: only the judge sees them.
    """
    text = response.lower()
    words = word_count(response)
    components: list[float] = []
    if criteria.must_include:
        components.append(_fraction_contained(criteria.must_include, text))
    if criteria.must_not_include:
        components.append(1.0 - _fraction_contained(criteria.must_not_include, text))
    max_words = criteria.max_words
    if max_words:
        components.append(1.0 if words <= max_words else max_words / words)
    if criteria.required_steps:
        components.append(_fraction_contained(criteria.required_steps, text))
    if criteria.expected_answer:
        components.append(1.0 if answer_rule(criteria).credits(response, criteria) else 0.0)
    style = criteria.style.lower()
    if style:
        too_long = ("concise" in style or "short" in style) and words > 90
        components.append(0.5 if too_long else 1.0)
    if not components:
        return 0.5
    return sum(components) / len(components)


def hybrid_score(deterministic: float, judge: float) -> float:
    """The paper's hybrid score."""
    return DET_WEIGHT * deterministic + JUDGE_WEIGHT * judge


def selection_metrics(
    selected_ids: Iterable[str],
    gold_ids: Collection[str],
    bad_ids: Collection[str],
    harmful_ids: Collection[str],
) -> dict[str, float]:
    """Per-sample selection quality against the sample's labels."""
    selected = set(selected_ids)
    gold, bad, harmful = set(gold_ids), set(bad_ids), set(harmful_ids)
    hits = len(selected & gold)
    if selected:
        precision = hits / len(selected)
    else:
        precision = 1.0 if not gold else 0.0
    recall = hits / len(gold) if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "recall": recall,
        "precision": precision,
        "useful_f1": f1,
        "poison_adoption": len(selected & harmful) / len(harmful) if harmful else 0.0,
        "bad_rejection": 1.0 - len(selected & bad) / len(bad) if bad else 1.0,
        "n_selected": float(len(selected)),
    }


def f1_at_k(ranked_ids: Sequence[str], gold_ids: Collection[str]) -> dict[str, float]:
    """Useful F1 of the top k of a strategy's ranking, for each k of ``F1_AT`` (``f1_at_1``,
    ``f1_at_3``): strategies that keep different numbers of memories compared at one k."""
    return {
        f"f1_at_{k}": selection_metrics(ranked_ids[:k], gold_ids, (), ())["useful_f1"]
        for k in F1_AT
    }
