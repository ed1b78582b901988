"""Evidence from the agent's own history, and how well it supports an answer (label-free CMI).

The paper's CMI scores an intervention answer against the gold answer. An
agent has no gold answer, but it has its conversation history: this module
scores an answer by its agreement with the history instead. It reads only
what the blind protocol shows a strategy (the request, and the past sessions
with their dates), so ``BlindEvidence.from_task`` takes a ``BlindTask``, which
has nothing else.

Evidence is the few windows of consecutive turns most relevant to the
request (BM25 over the history's own windows, plus a bonus for a window
whose dates match a date the request names; only windows at least half as
relevant as the best), and the windows most relevant to each candidate
memory's text (so a memory's own source turns are there to check it), each
weighted by its relevance to the request. An answer is scored by what it
adds to its prompt:

- each of its own words (not in the request or the prompt's instructions,
  not a stop word, a date word or a word about the notes rather than the
  answer: "according", "mentioned", a memory's key) counts with its IDF in
  this history, and is found to the degree of the most relevant window that
  has it;
- each date it states explicitly counts as much as the history's rarest
  word, and is found to the degree it agrees with a date the evidence
  states, relative expressions ("yesterday", "last week") there resolved
  against their session's date (``cmi_inspect.dates``). A window that
  states no date vouches, at half weight, for its session's. An answer's
  own relative date ("Last week.") is vague: it earns nothing.

The score is the weighted share found, in [0, 1]; an answer that adds
nothing ("I don't know", the request repeated) scores 0.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache, lru_cache
from typing import Protocol

from pydantic import BaseModel

from cmi_inspect.causal_locomo.data import PastSession, Turn, session_turns
from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.causal_locomo.strategies.cmi import bm25
from cmi_inspect.dates import DaySpan, date_spans, session_date, without_dates
from cmi_inspect.text import content_words

WINDOW_TURNS = 3
"""Consecutive turns per evidence window: a statement and the replies around it."""
EVIDENCE_WINDOWS = 6
"""Most windows kept as the sample's evidence."""
COMPARABLE_RELEVANCE = 0.5
"""A window is evidence only if it is at least this relevant relative to the best one: a
word that merely occurs somewhere near the topic does not vouch for an answer."""
MEMORY_WINDOWS = 2
"""Windows retrieved by each candidate memory's text, added to the request's."""
MEMORY_WINDOW_RELEVANCE = 0.25
"""A window retrieved by a memory's text is evidence only if it is at least this relevant
to the request relative to the best window: a memory's own source turns check it only
where they are about what is asked, so an irrelevant memory does not vouch for itself."""
META_WORDS = frozenset(
    content_words(
        "according mentioned mention mentions said says say stated states state note notes "
        "memory memories information context based recall remember conversation provided "
        "specified unclear unknown probably possibly perhaps maybe likely think sure"
    )
)
"""Words an answer uses about its sources or its certainty, not about what is asked."""
KEY = re.compile(r"^m\d+$")
"""A memory's key as the prompt shows it ("m3")."""
SESSION_DATE_WEIGHT = 0.5
"""How much a window with no stated date vouches for its own session's date."""


@dataclass
class Window:
    """Consecutive turns of one session, as evidence."""

    turns: list[Turn]
    """What was said, without the speakers' names (a speaker is in every window: their name
    would vouch for any answer that names them)."""
    when: str
    """The session's ``date_time`` as written."""
    day: date | None
    """The session's day, against which the turns' relative dates resolve."""
    words: Counter[str] = field(default_factory=Counter)
    spans: list[tuple[DaySpan, float]] = field(default_factory=list)
    """Dates the turns state, each with how firmly (1 stated, SESSION_DATE_WEIGHT implied)."""
    relevance: float = 0.0

    def __post_init__(self) -> None:
        text = " ".join(t.text for t in self.turns)
        self.words = Counter(content_words(text))
        for turn in self.turns:
            self.spans += [(s, 1.0) for s in date_spans(turn.text, self.day)]
        if not self.spans and self.day is not None:
            self.spans.append((DaySpan(self.day, self.day, "session date"), SESSION_DATE_WEIGHT))

    def ref(self) -> str:
        first, last = self.turns[0].dia_id, self.turns[-1].dia_id
        refs = first if first == last else f"{first}-{last.split(':')[1]}"
        return f"{refs} ({self.when})"


class Support(BaseModel):
    """How well the evidence supports one text (an answer, or a memory), as the log shows it."""

    score: float
    words: float | None = None
    """IDF-weighted share of the text's own words found in the evidence (None: it has none)."""
    dates: float | None = None
    """Best agreement of a date it states with an evidence date (None: it states no date)."""
    found: list[str] = []
    """Its words and dates the evidence has."""
    missing: list[str] = []
    """Its words and dates the evidence lacks."""


class EvidenceWindow(BaseModel):
    """One evidence window as the log shows it."""

    ref: str
    relevance: float
    dates: list[str]
    text: str


def windows_of(sessions: Sequence[PastSession], size: int = WINDOW_TURNS) -> list[Window]:
    """Every run of ``size`` consecutive turns of each session (fewer if the session is
    shorter): fresh windows (their ``relevance`` is set per request) over each session's
    parsed words and dates, which are kept (``_session_windows``)."""
    return [copy.copy(w) for s in sessions for w in _session_windows(s.content, s.date_time, size)]


@lru_cache(maxsize=1024)
def _session_windows(content: str, date_time: str | None, size: int) -> tuple[Window, ...]:
    """One session's windows, parsed once: reading the turns' dates is most of the cost of the
    evidence, and the samples of one conversation share its sessions."""
    turns = session_turns(content)
    when, day = date_time or "", session_date(date_time)
    starts = range(max(len(turns) - size + 1, 1 if turns else 0))
    return tuple(Window(turns[start : start + size], when, day) for start in starts)


@lru_cache(maxsize=16_384)
def undated_words(text: str) -> tuple[str, ...]:
    """A text's content words, once each, its dates left out: what BM25 and the support of
    an answer read of it (read once per text: a store's memories are read several times)."""
    return tuple(dict.fromkeys(content_words(without_dates(text))))


@lru_cache(maxsize=16_384)
def stated_dates(text: str) -> tuple[DaySpan, ...]:
    """The dates a text states outright (``dates.date_spans`` with no session's day)."""
    return tuple(date_spans(text))


class BlindTask(Protocol):
    """What evidence may be built from: the request and the past sessions, which the blind
    protocol shows (a ``MemoryTask`` is one)."""

    @property
    def request(self) -> str: ...

    @property
    def sessions(self) -> Sequence[PastSession]: ...


@cache
def template_words() -> frozenset[str]:
    """The content words of the answer prompt's own instructions ("notes", "answer")."""
    return frozenset(content_words(memory_prompt("", [""])))


class BlindEvidence:
    """The evidence for one request from the agent's own history, and the scorer built on it."""

    def __init__(
        self,
        request: str,
        sessions: Sequence[PastSession],
        top: int = EVIDENCE_WINDOWS,
        memories: Sequence[str] = (),
        memory_relevance: float = MEMORY_WINDOW_RELEVANCE,
    ) -> None:
        self.request = request
        self.given_words = set(content_words(request)) | template_words()
        """Words an answer may take from its prompt rather than from a memory or the history:
        the request's, and the instructions' ("The answer is ..."). They say nothing."""
        all_windows = windows_of(sessions)
        self.documents = len(all_windows)
        """The history's windows, the documents word rarity is counted over."""
        self.document_frequency = bm25.document_frequency([w.words for w in all_windows])
        """In how many of them each word stands."""
        self.idf = bm25.inverse_frequency(self.document_frequency, self.documents)
        self._rarest = max(self.idf.values(), default=1.0)
        self.windows = _most_relevant(request, all_windows, self.idf, top)
        best = self.windows[0].relevance if self.windows else 0.0
        postings = bm25.Postings([w.words for w in all_windows], self.idf)
        for text in memories:
            ranked = (all_windows[i] for i in postings.ranked(undated_words(text)))
            for window in _disjoint(ranked, MEMORY_WINDOWS):
                relevant = window.relevance > 0 and window.relevance >= memory_relevance * best
                if relevant and all(window is not w for w in self.windows):
                    self.windows.append(window)
        self.words: dict[str, float] = {}
        """Each evidence word, with the relative relevance of the best window that has it."""
        for window in self.windows:
            share = window.relevance / best if best > 0 else 1.0
            for word in window.words:
                self.words[word] = max(self.words.get(word, 0.0), share)
        days = [d for d in (session_date(s.date_time) for s in sessions) if d is not None]
        self.now = max(days, default=None)
        """The latest session's day: the present, for the request's "last year"."""
        self.asked = date_spans(request, self.now)
        self._date_weight = self._rarest
        """A date counts as much as the history's rarest word: it is as specific."""

    @classmethod
    def from_task(cls, task: BlindTask, memories: Sequence[str] = ()) -> BlindEvidence:
        """Evidence from the request, the past sessions and the candidate memories' texts:
        nothing else of the sample."""
        return cls(task.request, task.sessions, memories=memories)

    def support(self, text: str) -> Support:
        """How well the evidence supports ``text`` (see the module's docstring)."""
        words = [
            w
            for w in undated_words(text)
            if w not in self.given_words and w not in META_WORDS and not KEY.match(w)
        ]
        spans = {s.text: s for s in stated_dates(text) if not self._asked(s)}
        credit = {w: (self.words.get(w, 0.0), self._weight(w)) for w in words}
        dates = {text: self._date_agreement(s) for text, s in spans.items()}
        credit |= {text: (agreement, self._date_weight) for text, agreement in dates.items()}
        total = sum(weight for _, weight in credit.values())
        return Support(
            score=sum(c * weight for c, weight in credit.values()) / total if total else 0.0,
            words=sum(credit[w][0] * credit[w][1] for w in words) / sum(credit[w][1] for w in words)
            if words
            else None,
            dates=max(dates.values()) if dates else None,
            found=[item for item, (c, _) in credit.items() if c > 0],
            missing=[item for item, (c, _) in credit.items() if c == 0],
        )

    async def score(self, answer: str) -> float:
        """The answer scorer CMI's interventions use under the label-free protocol."""
        return self.support(answer).score

    def log(self) -> list[EvidenceWindow]:
        return [
            EvidenceWindow(
                ref=w.ref(),
                relevance=round(w.relevance, 3),
                dates=[f"{s.text} = {s.describe()}" for s, _ in w.spans],
                text=" / ".join(f"{t.speaker}: {t.text}" for t in w.turns),
            )
            for w in self.windows
        ]

    def _weight(self, word: str) -> float:
        """A word's IDF in this history; a word the history never uses weighs most."""
        return self.idf.get(word, self._rarest)

    def _asked(self, span: DaySpan) -> bool:
        """Whether the request names this date (an answer that repeats it says nothing new)."""
        return any(span.same_days(a) for a in self.asked)

    def _date_agreement(self, span: DaySpan) -> float:
        """How far the evidence bears out a date: the best, over evidence dates, of their
        agreement (``DaySpan.agreement``) times the window's relative relevance and the
        date's firmness. "20 January" gains little from "this month", nothing from "yesterday"
        said on 20 January."""
        top = self.windows[0].relevance if self.windows else 0.0
        best = 0.0
        for window in self.windows:
            share = window.relevance / top if top > 0 else 1.0
            for evidence, firmness in window.spans:
                best = max(best, span.agreement(evidence) * share * firmness)
        return best


def _most_relevant(
    request: str, windows: list[Window], idf: dict[str, float], top: int
) -> list[Window]:
    """The ``top`` windows by BM25 to the request, no two sharing a turn, none much less
    relevant than the best; every window's ``relevance`` is set to its BM25 to the request.

    A window whose dates overlap a date the request names ("on May 3, 2023")
    gains the weight of the request's rarest word: it is about the right time.
    """
    # in a fixed order, so that the sums below repeat bit for bit whatever the hash seed
    query = list(dict.fromkeys(content_words(without_dates(request))))
    asked = date_spans(request)
    average = bm25.average_length([w.words for w in windows])
    rarest = max((idf.get(q, 0.0) for q in query), default=0.0)
    for w in windows:
        w.relevance = bm25.score(query, w.words, idf, average)
        if any(a.overlaps(s) for a in asked for s, firmness in w.spans if firmness == 1.0):
            w.relevance += rarest
    best = max((w.relevance for w in windows), default=0.0)
    ranked = sorted(windows, key=lambda w: -w.relevance)
    return _disjoint(
        [w for w in ranked if w.relevance > 0 and w.relevance >= COMPARABLE_RELEVANCE * best], top
    )


def _disjoint(ranked: Iterable[Window], top: int) -> list[Window]:
    """The first ``top`` of ``ranked`` that share no turn with an earlier one."""
    chosen: list[Window] = []
    used: set[str] = set()
    for w in ranked:
        if len(chosen) == top:
            break
        refs = {t.dia_id for t in w.turns}
        if not refs & used:
            chosen.append(w)
            used |= refs
    return chosen
