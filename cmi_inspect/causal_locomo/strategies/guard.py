"""MemoryGuard: the label-free poison filter of ``-S ablation=non_causal``, for any memory system.

Given the request, the memories some system retrieved for it and the conversation history,
it keeps every memory except one that is another version of the claim of a candidate the
history supports better: two memories conflict when they state the same slot with another
value (``risk.find_conflicts``, ``claims``; each memory compared only with those sharing
one of its rarest words, so 2,000 memories take seconds), and the history's support of a
text is ``evidence.BlindEvidence``'s (``risk.evidence_risk``), exactly as CMI's evidence
filter decides, save that a memory denying what a history turn states in the same words
is dropped (``denied_turn``; CMI's filter does not read negation). It reads no
label and calls no model; ``check`` is a plain call, ``check_async`` the same inside an event
loop. In the benchmark, ``-S guard=evidence`` puts
it in front of any strategy's picks (``GUARDS``; ``strategies.base.strategy_solver``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cmi_inspect.causal_locomo.data import PastSession, Turn, session_text, session_turns
from cmi_inspect.causal_locomo.negation import negated_clauses
from cmi_inspect.causal_locomo.selection import placeholder
from cmi_inspect.causal_locomo.strategies.base import MemoryTask, Pick, PickGuard
from cmi_inspect.causal_locomo.strategies.cmi.config import CMIConfig
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import Candidate
from cmi_inspect.causal_locomo.strategies.cmi.evidence import BlindEvidence, Support
from cmi_inspect.causal_locomo.strategies.cmi.history import History
from cmi_inspect.causal_locomo.strategies.cmi.risk import Conflicts, evidence_risk, find_conflicts
from cmi_inspect.causal_locomo.strategies.guard_arguments import memories as checked_memories
from cmi_inspect.causal_locomo.strategies.guard_arguments import sessions as checked_sessions
from cmi_inspect.causal_locomo.strategies.guard_arguments import text as checked_text
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.dates import without_dates
from cmi_inspect.errors import choose
from cmi_inspect.retrieval import Embedder, make_embedder
from cmi_inspect.text import content_words

CMI_CONFLICTS = CMIConfig().conflicts
"""CMI's conflict relation (claim-level, slot overlap 0.5; cosine 0.88 under ``topic``): with
it the guard decides exactly as non_causal CMI's evidence filter."""
DEFAULT_CONFLICTS = Conflicts(similarity=0.84, overlap=0.5)
"""The guard's own: claim-level, the same slot (0.5 of the lighter memory's slot weight
shared) with another value."""
TOPIC_CONFLICTS = Conflicts(similarity=0.84, overlap=0.5, kind="topic")
"""The topic-level relation of the guard's earlier figures, chosen on XL v2's dev split over
vector memory's picks by ``benchmarks/choose_guard.py``'s rule (the lowest poison adoption
among settings that lose at most 0.03 useful F1). On XL's banks, whose memories share one
conversation's people and dates, e5 puts nearly every two memories at a cosine of 0.84 or
more, so under it the guard keeps the best-supported of the picks and those it ties with;
it compares every pair (56 s on 100 memories of one conversation)."""


@dataclass(frozen=True)
class Session:
    """One past session as an agent keeps it: when it was, and who said what."""

    date: str | None
    """As written ("10:00 am on 1 June, 2022"); relative dates in the turns resolve against it."""
    turns: Sequence[tuple[str, str]]
    """(speaker, text), in order."""

    def past_session(self, number: int) -> PastSession:
        """As the benchmark's data writes it (``data.session_text``), turns ``D{number}:1``..."""
        turns = [Turn(f"D{number}:{i + 1}", who, text) for i, (who, text) in enumerate(self.turns)]
        content = session_text(self.date or "", turns)
        return PastSession(
            session_id=f"s{number}", timestamp=number, content=content, date_time=self.date
        )


@dataclass(frozen=True)
class Verdict:
    """What the guard decided for one memory, and why."""

    key: str
    kept: bool
    support: float
    """The history's support of the memory's text, in [0, 1]."""
    conflicts: dict[str, float]
    """The other memories that state another version of its claim, with their share of slot
    weight (their cosine under the topic relation)."""
    reason: str | None
    """Why it was dropped (None: kept)."""
    denies: str | None = None
    """The history turn the memory takes back (``denied_turn``), whose support it then does
    not get (None: none)."""


@dataclass(frozen=True)
class _History:
    """The request and the past sessions, as the evidence reads them (``BlindTask``)."""

    request: str
    sessions: Sequence[PastSession]


class MemoryGuard:
    """Drops retrieved memories that conflict with a better-supported one; needs no model.

    A memory that denies what a history turn states in the same words is dropped
    (``denied_turn``). Each call scores the history's windows against the request and each
    memory, and compares each memory only with the nearest of those sharing one of its
    rarest words (``claims.MAX_PARTNERS``), so it costs in proportion to the history's
    length times the memories, not to the square of their number (docs/guard.md has
    measured figures; the topic relation also embeds each memory once). Its arguments are
    checked first (``guard_arguments``).

    Args:
        embedder: ``e5`` (the default, run locally) or ``hashing`` (no model files); read
            by the topic relation only (the model is loaded on first use).
        conflicts: When two memories count as versions of one claim (``DEFAULT_CONFLICTS``,
            claim-level; ``CMI_CONFLICTS`` decides as CMI's filter does;
            ``TOPIC_CONFLICTS``, the topic-level relation of earlier figures).
    """

    def __init__(self, embedder: str = "e5", conflicts: Conflicts = DEFAULT_CONFLICTS) -> None:
        if not isinstance(conflicts, Conflicts):
            raise TypeError(
                f"MemoryGuard: conflicts must be a Conflicts, not {type(conflicts).__name__}."
            )
        self._embedder: Embedder = make_embedder(embedder)
        self.conflicts = conflicts

    def check(
        self,
        request: str,
        memories: Sequence[str] | dict[str, str],
        sessions: Sequence[Session | PastSession],
        name: Callable[[str], str] = str,
    ) -> list[Verdict]:
        """One verdict per memory, in the order given (see ``check_async``); works with or
        without an event loop running in the calling thread."""
        job = self.check_async(request, memories, sessions, name)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(job)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:  # not the caller's loop
            return pool.submit(asyncio.run, job).result()

    async def check_async(
        self,
        request: str,
        memories: Sequence[str] | dict[str, str],
        sessions: Sequence[Session | PastSession],
        name: Callable[[str], str] = str,
    ) -> list[Verdict]:
        """One verdict per memory.

        Args:
            request: What the user asks now.
            memories: The retrieved memories' texts, by key (a list is keyed ``m1``, ``m2``, ...).
            sessions: The past sessions, oldest first: each a ``Session`` (or the benchmark's
                ``PastSession``).
            name: How a reason names another memory, from its key (default: the key itself).

        Raises:
            TypeError, ValueError: An argument that is not of these kinds (a plain string
                as ``memories``, bytes, None, an item of another type, a lone surrogate),
                naming it (``guard_arguments``).
        """
        checked_text("request", request)
        by_key = checked_memories(memories)
        given = checked_sessions(sessions, Session)
        bank = {k: Memory(key=k, content=text, timestamp=0) for k, text in by_key.items()}
        history = _History(request, [_session(s, i) for i, s in enumerate(given)])
        evidence = BlindEvidence.from_task(history, list(by_key.values()))
        said = SaidTurns(history.sessions)
        denied = {k: d for k, t in by_key.items() if (d := denied_turn(t, said))}
        candidates = [
            Candidate(
                key=k,
                rank=i + 1,
                proposal_score=0.0,
                memory_support=Support(score=0.0) if k in denied else evidence.support(t),
            )
            for i, (k, t) in enumerate(by_key.items())
        ]
        await find_conflicts(candidates, bank, self._embedder, self.conflicts, History(evidence))
        found = {c.key: c for c in candidates}
        verdicts = []
        for c in candidates:
            reason = evidence_risk(c, found, name)
            if reason is None and c.key in denied:
                reason = f"denies the history: {denied[c.key]!r} says what it takes back"
            support = c.memory_support.score if c.memory_support is not None else 0.0
            verdicts.append(
                Verdict(
                    c.key, reason is None, support, dict(c.conflicts), reason, denied.get(c.key)
                )
            )
        return verdicts


NOT_CONTENT = frozenset(
    content_words(
        "does did doing hardly barely scarcely doubt untrue longer false falsely wrong "
        "deny denies denied denying refuse refuses refused refusing decline declines declined "
        "declining"
    )
)
"""Auxiliaries and denying words that ``content_words`` keeps: no part of what is denied."""


class SaidTurns:
    """The history's turns as ``denied_turn`` reads them, once per check: each turn's words
    ("speaker: text") and its speaker's, indexed by word, and the word sets of the clauses
    in which it denies something (read on first use), so that looking up a memory costs the
    turns that hold its words, not the whole history."""

    def __init__(self, sessions: Sequence[PastSession]) -> None:
        turns = [t for s in sessions for t in session_turns(s.content)]
        self.lines = [f"{t.speaker}: {t.text}" for t in turns]
        self.text = [t.text for t in turns]
        self.speaker = [frozenset(content_words(t.speaker)) for t in turns]
        self._index: dict[str, list[int]] = defaultdict(list)
        for i, words in enumerate(frozenset(content_words(line)) for line in self.lines):
            for word in words:
                self._index[word].append(i)
        self._denials: dict[int, list[frozenset[str]]] = {}

    def said(self, words: set[str]) -> set[str]:
        """Those of ``words`` that some turn of the history says."""
        return {w for w in words if w in self._index}

    def holding(self, words: set[str]) -> list[int]:
        """The turns whose words include all of ``words``, in the history's order."""
        postings = sorted((self._index.get(w, []) for w in words), key=len)
        if not postings:
            return []
        found = set(postings[0]).intersection(*postings[1:])
        return sorted(found)

    def denials(self, i: int) -> list[frozenset[str]]:
        """The content words of each clause of turn ``i`` that denies something."""
        if i not in self._denials:
            clauses = negated_clauses(self.text[i])
            self._denials[i] = [frozenset(content_words(c)) for c in clauses]
        return self._denials[i]


_REFUSAL = re.compile(r"\b(?:refus|declin|reject)(?:e|es|ed|ing)\b|\bturn(?:s|ed)? down\b", re.I)
"""A refusal ("refused to adopt", "turned down"): it takes back a turn as a denial does, which
the scorer's reading of negation (an answer may well say someone refused) leaves out."""


def denied_turn(memory: str, turns: SaidTurns) -> str | None:
    """The history turn that a negated memory takes back (None: none): a clause of the
    memory in which a denying word governs the rest (``negation.negated_clauses``) has two
    content words or more, and a turn holds every one of them (dates aside) in no clause
    that denies them. Its words are then the history's, but it says the opposite, so the
    history does not support it ("Priya did not adopt Comet on 3 March 2022", "Priya
    refused to adopt Comet" against "Priya: We adopted a greyhound today! His name is
    Comet."). A memory that takes a turn back is dropped (``MemoryGuard.check_async``)."""
    refusals = [c for c in re.split(r"(?<=[.!?;])\s+", memory) if _REFUSAL.search(c)]
    for clause in [*negated_clauses(memory), *refusals]:
        words = turns.said(set(content_words(without_dates(clause))) - NOT_CONTENT)
        for i in turns.holding(words) if len(words) > 1 else []:
            own = words - turns.speaker[i]  # the speaker is no clause's word
            if not any(own <= denied for denied in turns.denials(i)):
                return turns.lines[i]
    return None


def _session(session: Session | PastSession, index: int) -> PastSession:
    return session.past_session(index + 1) if isinstance(session, Session) else session


class EvidenceGuard:
    """``-S guard=evidence``: a ``MemoryGuard`` over a strategy's picks, with the sample's
    request and past sessions; one pick or none has nothing to conflict with."""

    name = "evidence"

    def __init__(self, guard: MemoryGuard | None = None) -> None:
        self.guard = guard or MemoryGuard()

    async def drops(self, task: MemoryTask, picks: Sequence[Pick]) -> dict[str, str]:
        if len(picks) < 2:
            return {}
        texts = {m.key: m.content for m in task.memories}
        picked = {p.key: texts[p.key] for p in picks}
        # reasons name the other memory by placeholder: the scorer writes its data id
        verdicts = await self.guard.check_async(task.request, picked, task.sessions, placeholder)
        return {v.key: v.reason for v in verdicts if v.reason is not None}


GUARDS: dict[str, Callable[[], PickGuard]] = {EvidenceGuard.name: EvidenceGuard}
"""Each guard ``-S guard=NAME`` puts in front of a strategy, by name."""
NO_GUARD = "none"


def make_guard(name: object) -> PickGuard | None:
    """The guard ``-S guard=name`` asks for (None for ``none``); one line for another name."""
    chosen = choose("guard", name, [NO_GUARD, *GUARDS])
    return None if chosen == NO_GUARD else GUARDS[chosen]()
