"""How an answer is credited: the rule its scoring criteria name (``answer_rule``).

``contains`` is the paper's: the deterministic score's answer component credits a response
that contains the expected answer (any case); the offline judge, one that contains the
expected answer or an alias. ``abstains`` is for a question the conversation does not
answer (XL v3's unanswerable family, LoCoMo's adversarial questions): both credit a
response that says so (``ABSTENTION``: "not mentioned", "does not say", "no information",
"I don't know", ...). Under either, a response that contains the adversarial answer gets
no credit from the judge, and ``must_not_include`` holds it for the deterministic score.
Only ``contains`` names a value, so only under it do the hedge and negation checks apply.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cmi_inspect.causal_locomo.data import DataError, ScoringCriteria

ABSTENTION = re.compile(
    r"\b(?:"
    r"(?:is|was|are|were|isn't|wasn't|aren't|weren't)\s+(?:not\s+|never\s+)?"
    r"(?:mentioned|stated|said|specified|given|discussed|recorded|known|clear|provided)"
    r"|(?:does|did|do)\s*(?:not|n't)\s+(?:say|mention|state|specify|tell|include|indicate)"
    r"|(?:doesn't|didn't|don't)\s+(?:say|mention|state|specify|tell|include|indicate)"
    r"|never\s+(?:mentioned|said|stated|specified|discussed|says|mentions)"
    r"|no\s+(?:information|mention|record|details?|indication|evidence)"
    r"|not\s+(?:mentioned|stated|specified|given|discussed|recorded|known|in\s+the)"
    r"|(?:I|we)\s+(?:do\s+not|don't|cannot|can't)\s+(?:know|tell|say|find)"
    r"|(?:cannot|can't|unable\s+to)\s+(?:be\s+)?(?:determine[d]?|tell|answer|know|say|find)"
    r"|unknown|not\s+enough\s+information|there\s+is\s+nothing"
    r")\b",
    re.IGNORECASE,
)
"""What says that the conversation does not tell."""


def abstains(response: str) -> bool:
    """True when the response says that the conversation does not tell."""
    return ABSTENTION.search(response.replace("\u2019", "'")) is not None


def _contains(response: str, criteria: ScoringCriteria) -> bool:
    return bool(criteria.expected_answer) and criteria.expected_answer.lower() in response.lower()


def _alias(response: str, criteria: ScoringCriteria) -> str | None:
    text = response.lower()
    answers = [criteria.expected_answer, *criteria.answer_aliases]
    return next((a for a in answers if a and a.lower() in text), None)


def _abstention(response: str, criteria: ScoringCriteria) -> str | None:
    found = ABSTENTION.search(response.replace("\u2019", "'"))
    return found[0] if found else None


@dataclass(frozen=True)
class AnswerRule:
    """One way of crediting an answer."""

    name: str
    credits: Callable[[str, ScoringCriteria], bool]
    """The deterministic score's answer component: 1 when this holds, else 0."""
    matches: Callable[[str, ScoringCriteria], str | None]
    """What the offline judge matched in the response (None: nothing)."""
    names_a_value: bool
    """The answer is a value, so a hedge across values or a denial of it can be read."""


ANSWER_RULES: dict[str, AnswerRule] = {
    "contains": AnswerRule("contains", _contains, _alias, names_a_value=True),
    "abstains": AnswerRule("abstains", lambda r, c: abstains(r), _abstention, names_a_value=False),
}


def answer_rule(criteria: ScoringCriteria) -> AnswerRule:
    """The rule the criteria name; an unknown one is a data error naming the rules."""
    rule = ANSWER_RULES.get(criteria.answer_rule)
    if rule is None:
        raise DataError(
            f"Unknown answer_rule {criteria.answer_rule!r} in the scoring criteria; "
            f"choose from {', '.join(ANSWER_RULES)}."
        )
    return rule
