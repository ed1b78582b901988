"""Which memories a sample exposed: those whose text stood in what the response model read.

A strategy declares its picks, but what the benchmark measures is what reached the model.
A memory is *exposed* when its text, as the strategy was shown it, stands in the input of
the response-model call that produced the scored answer (compared after ``normal``: case,
Unicode forms, punctuation and spacing aside, at word boundaries), or in the input of an
earlier call of the sample whose answer stands in that input (text derived by the model, a
summary say, carries what it was made from). The scored selection is what a strategy
declared and what it exposed: a strategy is charged for both, and a difference is named.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from inspect_ai.event import Event, ModelEvent

DERIVED_MIN_WORDS = 6
"""An earlier answer counts as carried into a prompt only from this many words: a short one
("7 May 2023") can stand in a prompt by coincidence."""

_NON_WORD = re.compile(r"[\W_]+")


def normal(text: str) -> str:
    """``text`` as exposure compares it: NFKC, case-folded, every run of characters other
    than letters and digits one space, with a space at each end (so that a match is at word
    boundaries)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return f" {_NON_WORD.sub(' ', folded).strip()} "


@dataclass(frozen=True)
class Call:
    """One model call of a sample: what it read, what it answered, under which role."""

    prompt: str
    completion: str
    role: str | None = None
    """The model role (None: the response model)."""


def call_text(messages: Iterable[object]) -> str:
    """A call's input as one text: its messages' texts, one per line."""
    return "\n".join(str(getattr(m, "text", "")) for m in messages)


def calls_of(events: Iterable[Event]) -> list[Call]:
    """The completed model calls among ``events``, in order."""
    return [
        Call(call_text(e.input), e.output.completion, e.role)
        for e in events
        if isinstance(e, ModelEvent) and e.error is None and not e.pending
    ]


def stands_in(text: str, normal_prompt: str) -> bool:
    """Whether ``text`` (non-empty once normalised) stands in an already normalised prompt."""
    needle = normal(text)
    return needle.strip() != "" and needle in normal_prompt


def exposed(
    memories: Mapping[str, str], prompt: str, calls: Sequence[Call] = (), request: str = ""
) -> list[str]:
    """The keys, in ``memories``' order, of the memories (key -> text as shown) that stand
    in ``prompt``, directly or through an earlier call whose answer stands in it.

    An answer counts as carried only where it stands in what is left of the prompt once
    the memories found there and the ``request`` are taken out: an answer that repeats a
    memory shown, or the question, stands in the prompt by coincidence, not derivation."""
    found: set[str] = set()
    pending = list(calls)
    unread = [normal(prompt)]
    while unread:
        text = unread.pop()
        direct = [k for k, t in memories.items() if stands_in(t, text)]
        found.update(direct)
        for said in [*(memories[k] for k in direct), request]:
            if said.strip():
                text = text.replace(normal(said), " ")
        carried = [
            c
            for c in pending
            if len(c.completion.split()) >= DERIVED_MIN_WORDS and stands_in(c.completion, text)
        ]
        pending = [c for c in pending if c not in carried]
        unread += [normal(c.prompt) for c in carried]
    return [k for k in memories if k in found]


def answering_call(calls: Sequence[Call], prompt: str, completion: str) -> Call | None:
    """The last response-model call that read exactly ``prompt`` and answered
    ``completion``: the call a scored answer must come from (None: no such call)."""
    return next(
        (
            c
            for c in reversed(calls)
            if c.role is None and c.prompt == prompt and c.completion == completion
        ),
        None,
    )


@dataclass(frozen=True)
class Exposure:
    """A sample's declared picks beside what it exposed."""

    declared: list[str]
    exposed: list[str]

    @property
    def undeclared(self) -> list[str]:
        """Exposed, not declared: the model read them, the strategy did not say so."""
        return [k for k in self.exposed if k not in self.declared]

    @property
    def unshown(self) -> list[str]:
        """Declared, not in the prompt as shown: derived text (a summary, a reflection, the
        history) or bookkeeping; still scored as selected."""
        return [k for k in self.declared if k not in self.exposed]

    @property
    def scored(self) -> list[str]:
        """What the selection metrics count: the declared picks, then the undeclared ones."""
        return [*self.declared, *self.undeclared]
