"""A sample's memory selection as the log records it, sealed when it is recorded.

The strategy solver writes ``MemorySelection`` once its picks are checked, and seals it:
the record's sha256 goes into the sample's transcript (an ``InfoEvent`` from ``SEAL``), so
the log holds what was recorded when it was. The scorers, and ``cmi-inspect verify`` from
the log alone, refuse a sample whose record no longer matches its seal. The strategy's own
account of its choice (``explain``) is rendered when the record is made, with each memory
written as a placeholder (``⟨key⟩``) that the scorer, which alone knows the labels, fills
with the memory's id and label: the scorer needs no strategy's code to explain its sample.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspect_ai.event import Event, InfoEvent
from inspect_ai.log import transcript
from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field

from cmi_inspect.causal_locomo.exposure import Exposure, calls_of, exposed

SEAL = "cmi_inspect/selection"
"""The ``InfoEvent`` source of a selection's seal."""
RANKING_DEPTH = 10
"""The most keys of a strategy's ranking a record keeps (F1@k reads the top 1 and 3)."""


class SelectionSealError(RuntimeError):
    """A sample's selection or scored answer is not what its strategy solver recorded: not
    scored."""


class GuardRecord(BaseModel):
    """What a guard (``-S guard=NAME``) did to one sample's picks."""

    guard: str
    checked: list[str]
    """The picks it was shown (the strategy's, then any it exposed undeclared), in order."""
    dropped: dict[str, str]
    """The picks it dropped, each with why (another memory named by ``placeholder``)."""
    seconds: float
    """Wall-clock from its call to its verdict (no model call); among concurrent samples it
    includes waiting for theirs (``benchmarks/guard_cost.py`` measures the guard alone)."""


class MemorySelection(StoreModel):
    """The strategy's choice for one sample, as scorers and the log read it."""

    strategy: str = ""
    selected: list[str] = Field(default_factory=list)
    """The picks the strategy declared, in its order."""
    scores: list[float | None] = Field(default_factory=list)
    exposed: list[str] = Field(default_factory=list)
    """The memories whose text stood in the prompt it answered from (``exposure``)."""
    prompt_sha256: str = ""
    """The sha256 of that prompt: the scored answer must come from a call that read it."""
    details: dict[str, Any] = Field(default_factory=dict)
    explanation: str = ""
    """The strategy's ``explain`` of ``details``, memories as ``placeholder(key)``."""
    guard: GuardRecord | None = None
    """Set when a guard filtered the strategy's picks."""
    ranking: list[str] | None = None
    """The strategy's ranking of the bank, best first, its top ``RANKING_DEPTH`` (None: it
    does not rank); F1@k reads its top k (``measures.f1_at_k``)."""
    isolation: str = ""
    """The sandbox its ``select`` ran in (``strategies.isolation``): ``bwrap``, ``unshare``,
    ``none`` (asked for, not available here: it ran unisolated), '' (not asked for)."""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def record_digest(record: MemorySelection) -> str:
    """The sha256 of a selection record's fields, in a canonical JSON form."""
    # a record without a ranking digests as before rankings were recorded, so older logs verify
    unranked = {"ranking"} if record.ranking is None else set()
    fields = record.model_dump(mode="json", exclude={"store", "instance", *unranked})
    return digest(json.dumps(fields, sort_keys=True, ensure_ascii=False))


def seal(record: MemorySelection) -> None:
    """Write the record's digest into the sample's transcript."""
    transcript().info({"selection_sha256": record_digest(record)}, source=SEAL)


def sealed_digest(events: Iterable[Event]) -> str | None:
    """The digest of the last seal among a sample's events (None: never sealed)."""
    seals = [e for e in events if isinstance(e, InfoEvent) and e.source == SEAL]
    if not seals or not isinstance(seals[-1].data, dict):
        return None
    found = seals[-1].data.get("selection_sha256")
    return str(found) if found else None


def check_seal(record: MemorySelection, events: Iterable[Event]) -> None:
    """Refuse a record that differs from its seal, or that has content but no seal."""
    sealed = sealed_digest(events)
    named = f"strategy {record.strategy or 'none recorded'!r}"
    if sealed is None:
        if record.strategy or record.selected or record.prompt_sha256:
            raise SelectionSealError(
                f"The selection of {named} was written without its seal: not scored."
            )
        return
    if record_digest(record) != sealed:
        raise SelectionSealError(
            f"The selection {named} recorded was changed after it was sealed: not scored."
        )


_PLACEHOLDER = re.compile(r"⟨([^⟨⟩]+)⟩")


def placeholder(key: str) -> str:
    """How ``explain`` is given a memory's name while labels are unknown."""
    return f"⟨{key}⟩"


def placeholders(keys: Iterable[str]) -> dict[str, str]:
    return {k: placeholder(k) for k in keys}


def fill(explanation: str, names: Mapping[str, str]) -> str:
    """An explanation with each placeholder of a known key replaced by its name."""
    return _PLACEHOLDER.sub(lambda m: names.get(m[1], m[0]), explanation)


def examine(
    record: MemorySelection,
    events: Sequence[Event],
    answer: str,
    shown: Mapping[str, str],
    request: str = "",
) -> Exposure:
    """What a sample declared and exposed, once its record is checked against its seal and
    its answer against the calls that were made: the answer must be the last response-model
    call's that read the recorded prompt (with no record, any response-model call's), an
    empty one (a sample stopped before it answered) exposes nothing. ``shown``: key -> text
    of the memories as the strategy was shown them; ``request``, the sample's question."""
    check_seal(record, events)
    calls = calls_of(events)
    made = [c for c in calls if c.role is None and c.completion == answer]
    if record.prompt_sha256:
        made = [c for c in made if digest(c.prompt) == record.prompt_sha256]
    if not made:
        if answer.strip():
            raise SelectionSealError(
                f"The answer scored for strategy {record.strategy or 'none recorded'!r} is "
                "no response-model call's answer to the prompt it recorded: not scored."
            )
        return Exposure(record.selected, [])
    return Exposure(record.selected, exposed(shown, made[-1].prompt, calls, request))
