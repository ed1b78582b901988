"""How an answer is credited: the rule its scoring criteria name (``answer_rule``).

``contains`` is the paper's: the deterministic score's answer component credits a response
that contains the expected answer (any case); the offline judge, one that contains the
expected answer or an alias. ``abstains`` is for a question the conversation does not
answer (XL v3's unanswerable family, LoCoMo's adversarial questions): both credit a
response that says so (``hedge.ABSTENTION``: "not mentioned", "does not say", "no
information", "I don't know", ...) and offers no value beside it: a value and a disclaimer
("Lyon, though the conversation does not say for sure", "Probably Lyon; it is not
mentioned") are a hedge under either rule (``hedge.offered``, ``hedge.disclaimer``). Under
either, a response that contains the adversarial answer gets no credit from the judge, and
``must_not_include`` holds it for the deterministic score. Only ``contains`` names a value,
so only under it do the hedge and negation checks of ``hedge`` and ``negation`` apply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cmi_inspect.causal_locomo.data import DataError, ScoringCriteria
from cmi_inspect.causal_locomo.hedge import abstention, offered


def abstains(response: str) -> bool:
    """True when the response says that the conversation does not tell (``hedge.abstention``)
    and offers no value beside it (``hedge.offered``): "Lyon, though the conversation does
    not say" is a hedge, not an abstention."""
    text = response.replace("\u2019", "'")
    return abstention(text) is not None and offered(text) is None


def _contains(response: str, criteria: ScoringCriteria) -> bool:
    return bool(criteria.expected_answer) and criteria.expected_answer.lower() in response.lower()


def _alias(response: str, criteria: ScoringCriteria) -> str | None:
    text = response.lower()
    answers = [criteria.expected_answer, *criteria.answer_aliases]
    return next((a for a in answers if a and a.lower() in text), None)


def _abstention(response: str, criteria: ScoringCriteria) -> str | None:
    return abstention(response.replace("\u2019", "'")) if abstains(response) else None


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
