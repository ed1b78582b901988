"""A LoCoMo answer as XL reads it: its stems, its aliases, and the other answers
that would read as it."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from cmi_inspect.dates import counted_back, date_mentions, date_spellings
from cmi_inspect.text import XL_STEMS, content_words, tokens


@lru_cache(maxsize=1 << 16)
def stems(text: str) -> frozenset[str]:
    """The text's content words as XL compares them (``text.XL_STEMS``)."""
    return frozenset(content_words(text, XL_STEMS))


def answer_aliases(answer: str) -> list[str]:
    """The answer with each full date in its usual spellings, and a weekday resolved
    ("the Friday before 14 July 2023")."""
    aliases = [answer]
    for mention in date_mentions(answer):
        if mention.span.days() != 1:
            continue
        day = mention.span.first
        aliases += [
            answer[: mention.start] + s + answer[mention.end :] for s in date_spellings(day)
        ]
        offset = counted_back(answer, mention)
        if offset is not None and offset.kind() == "weekday":
            aliases += date_spellings(offset.span(day).first)
    return list(dict.fromkeys(a for a in aliases if a))


def same_value(value: str, answer: str) -> bool:
    """True when a false value would read as the answer itself."""

    def norm(text: str) -> str:
        return " ".join(tokens(text, split_apostrophes=True))

    return any(norm(value) in norm(a) or norm(a) in norm(value) for a in answer_aliases(answer))


def must_not_include(adversarials: Iterable[str | None], answer: str) -> list[str]:
    """The false values, except any the right answer (or an alias) already contains."""
    return list(dict.fromkeys(a for a in adversarials if a and not same_value(a, answer)))
