"""Does an answer commit to the expected answer, or hedge: across several values of the
kind asked for, or by offering it without committing to it?

An answer listing fourteen dates contains the right one, so containment rules and an
alias match credit it: the LoCoMo judging failure this benchmark measures others by. The
kind of the expected answer (a date, a number, a name) is read from the answer key; the
response hedges when it names at least two more values of that kind than the key holds, or
one more with a disjunction ("7 May or 14 May"). One extra value without a disjunction is
context ("on 7 May 2023, a week after her birthday on 30 April"), not a hedge.

It also hedges when no mention of the answer is committed to and one is offered in doubt
(``uncertain``): its sentence holds a word of uncertainty ("maybe", "perhaps", "might
have", "I guess", "not sure", "I don't know", "either ... or"), a short sentence of doubt
stands next to it ("I don't know. Maybe 7 May 2023." "Was it 7 May 2023? I'm not sure."),
or it is asked back as a question ("7 May 2023?") that no "yes" answers, or it is
disclaimed: its sentence or one next to it says that the conversation does not tell, of it
and of nothing else (``disclaimer``: "7 May 2023, though the conversation does not say for
sure", "7 May 2023, but that isn't stated"; not "The conversation doesn't say the time, but
the date was 7 May 2023"). A mention that is denied (``negation``) is no commitment either.
"I think it was 7 May 2023" commits, and so does a doubt that is itself denied ("Not a
guess: 7 May 2023").

``ABSTENTION``, the words that say the conversation does not tell, is also what
``answer_rules``' ``abstains`` credits, when the response offers no value beside it
(``offered``): a value and a disclaimer are a hedge in every family.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from cmi_inspect.causal_locomo.negation import (
    CLAUSE_BREAK,
    NEGATOR,
    clause_before,
    denial,
    mentions,
    sentences,
)
from cmi_inspect.dates import MONTHS, WEEKDAYS, explicit_spans, without_dates
from cmi_inspect.text import NUMBER_WORDS

AnswerKind = Literal["date", "number", "name"]

DISJUNCTION = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably)\b", re.I)
UNCERTAIN = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|presumably|likely|might|could\s+(?:have|be)"
    r"|may\s+(?:have|be)|i\s+guess|i['’]d\s+guess|i\s+suppose|i\s+suspect|likeliest"
    r"|(?:my\s+|a\s+|best\s+|rough\s+)(?:guess|estimate)|if\s+i\s+had\s+to|not\s+unlikely"
    r"|there(?:['’]s|\s+is)\s+a\s+chance|(?:it['’]s|it\s+is)\s+possible|unsure|uncertain"
    r"|not\s+(?:\d+\s*%\s+|entirely\s+|quite\s+|totally\s+|completely\s+)?(?:sure|certain)"
    r"|no\s+idea|(?:do\s+not|don['’]t)\s+(?:know|remember|recall)"
    r"|(?:can['’]t|cannot|could\s+not|couldn['’]t)\s+(?:say|tell|recall|remember|confirm|be\s+sure)"
    r"|hard\s+to\s+(?:say|tell)|wouldn['’]t\s+swear|either\b[^.!?]*\bor)\b",
    re.I,
)
"""Words that offer what they go with in doubt."""
DENIED_DOUBT = re.compile(
    r"\b(?:not|no|never|without|\w+n['’]t)\s+(?:(?:call\s+it|calling\s+it|say|saying|just"
    r"|merely|even|a|an|my|mere|any)\s+){0,3}(?:guess(?:ing|work)?|maybe|perhaps|probably"
    r"|possibly|speculation|hunch|estimate|unsure|uncertain)\b",
    re.I,
)
"""A word of doubt that is itself denied ("Not a guess", "not probably", "I'm not unsure"):
the speaker commits."""
ABSTENTION = re.compile(
    r"\b(?:"
    r"(?:(?:is|was|are|were)\s+(?:not|never)|isn't|wasn't|aren't|weren't)\s+(?:\w+ly\s+)?"
    r"(?:mentioned|stated|said|specified|given|discussed|recorded|known|clear|provided|confirmed"
    r"|named)"
    r"|(?:does|did|do)\s*(?:not|n't)\s+(?:\w+ly\s+)?(?:say|mention|state|specify|tell|include"
    r"|indicate|confirm|give|spell)"
    r"|(?:doesn't|didn't|don't)\s+(?:\w+ly\s+)?(?:say|mention|state|specify|tell|include|indicate"
    r"|confirm|give|spell)"
    r"|never\s+(?:\w+ly\s+)?(?:mentioned|said|stated|specified|discussed|says|mentions|say"
    r"|mention|states|state|confirms?|confirmed|spells?|named)"
    r"|(?:nobody|no\s+one|nothing)\s+(?:(?:in|the|conversation|memories|memory|notes|chat"
    r"|records?|here|there|is|was|has|have|been|ever|really|actually)\s+){0,4}(?:says|said"
    r"|mentions|mentioned|states|stated|confirms|confirmed)"
    r"|no\s+(?:information|mention|record|details?|indication|evidence)"
    r"|not\s+(?:\w+ly\s+)?(?:mentioned|stated|specified|given|discussed|recorded|known"
    r"|confirmed|in\s+the)"
    r"|(?:does|do|did)(?:\s+not|n't)\s+(?:seem|appear)\s+to\s+(?:be\s+)?(?:mentioned|stated"
    r"|given|recorded|say|mention)"
    r"|(?:I|we)\s+(?:do\s+not|don't|cannot|can't|could\s+not|couldn't|did\s+not|didn't)"
    r"\s+(?:know|tell|say|find)"
    r"|(?:do|does|did)(?:\s+not|n't)\s+(?:have|contain|hold|include|provide|give|cover)\s+(?:any\s+"
    r"|enough\s+|the\s+|that\s+|this\s+|such\s+)?(?:information|details?|mention|record|answer)"
    r"|unclear"
    r"|(?:cannot|can't|unable\s+to)\s+(?:be\s+)?(?:determine[d]?|tell|answer|know|say|find"
    r"|confirm|verify|be\s+sure)"
    r"|silent\s+(?:on|about)|unconfirmed|but\s+not\s+(?:who|what|when|where|which|why|how"
    r"|whether)"
    r"|unknown|not\s+enough\s+information|there\s+is\s+nothing"
    r")\b",
    re.IGNORECASE,
)
"""What says that the conversation does not tell ("not mentioned", "does not say", "I don't
know", "nothing in the memories confirms"): an abstention, or a disclaimer of a value."""
GUESS = re.compile(
    r"\b(?:probably|maybe|perhaps|possibly|presumably|likely|likeliest|might|could\s+(?:be|have)"
    r"|may\s+(?:be|have)|must\s+have|i\s+(?:think|believe|guess|suppose|suspect|imagine|assume"
    r"|reckon)|i['’]d\s+(?:say|guess|bet|imagine|think)|(?:my|a|best|rough)\s+(?:guess|estimate)"
    r"|if\s+i\s+had\s+to|chances\s+are|odds\s+are|seems?|appears?|apparently|reportedly"
    r"|supposedly|suggests?|implies|hints?\s+at|points?\s+to|closest|nearest)\b",
    re.I,
)
"""Words that offer a value as a guess: a response that abstains and holds one in a clause
of its own offers a value (``offered``)."""
FRAME = frozenset(
    """a an the this that these those some any each every no none all both either neither another
    such i me my mine myself we us our you your he him his she her hers they them their it its
    there here one anyone anybody anything anywhere someone something nobody nothing everyone
    everything i'm i'd i've i'll it's that's there's he's she's they're we're what's isn't
    wasn't aren't weren't don't doesn't didn't can't cannot couldn't won't wouldn't shouldn't
    hasn't haven't hadn't mustn't is was are were be been being am do does did has have had can
    could will would shall should may might must not never only just even also too really
    actually quite very so then still yet ever at all though although however but and or nor if
    whether as than because since of in on at to for from by with about into over out up
    through sure certain certainly surely explicitly explicit directly direct outright clearly
    clear definitively definite definitely exactly exact precisely specifically specific
    officially confirmed confirm confirms fact many words way far tell see find afraid sorry
    unfortunately honestly conversation conversations memory memories note notes chat chats
    record records recorded transcript text context information detail details evidence mention
    mentions mentioned say says said state states stated tells told given give gives spell
    spells spelled answer question talk talks talked discuss discussed silent named unconfirmed
    unknown known probably maybe perhaps possibly presumably likely guess think believe suppose
    suspect imagine assume reckon seems seem appears appear apparently reportedly supposedly
    estimate best based according provided available present enough sufficient found contain
    contains contained include includes included cover covers covered access able unable
    apologize apologies regret unclear""".split()
)
"""Words that frame a statement (pronouns, auxiliaries, qualifiers, the conversation and
what it does or does not say) rather than state a value."""
WH = frozenset("who what when where which why how whom whose".split())
"""Question words: one the request does not ask is about something else ("The
conversation doesn't say where", asked when)."""
REPORT = re.compile(
    r"\b(?:mentions?|talks?\s+about|talked\s+about|speaks?\s+about|spoke\s+about|covers?"
    r"|discuss(?:es|ed)?|refers?\s+to|describes?)\b",
    re.I,
)
"""A clause that reports what the conversation covers ("The memories talk about Caroline's
race"): context for an abstention, not a value."""
QUALIFIED = re.compile(
    r"\b(?:for\s+sure|for\s+certain|explicitly|directly|exactly|outright|in\s+so\s+many\s+words"
    r"|clearly|definitively|specifically|precisely|conclusively|with\s+certainty)\b",
    re.I,
)
"""What makes a disclaimer concede that the conversation says something short of it
("does not say for sure"): what the response reports is then what it offers."""
SHORT_SENTENCE = 5
"""Most words of a sentence of doubt next to a mention that it reads into it ("I'm not
sure.", "Hard to say."): a longer one has a subject of its own."""
AFFIRMED_AFTER = re.compile(r"^\s*(?:yes|yeah|yep|indeed|correct|right)\b", re.I)
_SPELLED = [w for w in NUMBER_WORDS if " " not in w and len(w) > 2] + [  # not "a", "an"
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty", "hundred", "thousand",
]  # fmt: skip
_NUMBER = re.compile(r"\b(?:\d+(?:[.,]\d+)?|" + "|".join(_SPELLED) + r")\b", re.I)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s*|\n\s*)$")
_NOT_NAMES = {*MONTHS, *WEEKDAYS, "i"}


@dataclass(frozen=True)
class Hedge:
    """Whether a response hedged, the values of the answer's kind it named, and the
    sentences that offered the answer in doubt."""

    hedged: bool
    kind: AnswerKind | None = None
    values: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    """The sentences that offered it in doubt, when no mention committed to it."""

    def describe(self) -> str:
        if self.doubts:
            return "offers the expected answer in doubt: " + "; ".join(map(repr, self.doubts))
        return f"hedged across {len(self.values)} {self.kind}s: {', '.join(self.values)}"


def answer_kind(expected: str) -> AnswerKind | None:
    """The kind of value an expected answer is, or None when it is none of them."""
    if explicit_spans(expected):
        return "date"
    if _NUMBER.search(expected):
        return "number"
    if len(expected.split()) <= 5 and names(expected, set(), in_sentences=False):
        return "name"
    return None


def names(text: str, exclude: set[str], in_sentences: bool = True) -> list[str]:
    """Capitalised words, months and days left out; with ``in_sentences`` (a response, not
    an answer key) not a sentence's first word, which any word may be."""
    found = [
        m.group(0)
        for m in _NAME.finditer(text)
        if not (in_sentences and _SENTENCE_START.search(text[max(0, m.start() - 3) : m.start()]))
    ]
    return [n for n in found if n.lower() not in _NOT_NAMES and n.lower() not in exclude]


def values(text: str, kind: AnswerKind, exclude: set[str], in_sentences: bool = True) -> list[str]:
    """The distinct values of ``kind`` in ``text``, in order."""
    if kind == "date":
        found = [span.describe() for span in explicit_spans(text)]
    elif kind == "number":
        found = [m.group(0).lower() for m in _NUMBER.finditer(without_dates(text))]
    else:
        found = names(text, exclude, in_sentences)
    return list(dict.fromkeys(found))


def doubtful(text: str) -> bool:
    """Whether ``text`` holds a word of doubt (``UNCERTAIN``) that is not itself denied."""
    return UNCERTAIN.search(DENIED_DOUBT.sub(" ", text)) is not None


def content(text: str, request: str = "") -> list[str]:
    """The words of ``text`` that state something: not ``FRAME``, not the request's (a word
    and its inflection, "move" and "moved", are one), and no question word (``WH``) unless
    there is a request that does not ask it."""
    asked = re.findall(r"[a-z0-9']+", request.lower().replace("’", "'"))
    frame = FRAME if asked else FRAME | WH
    return [
        word
        for word in re.findall(r"[a-z0-9']+", text.lower().replace("’", "'"))
        if word.strip("'") not in frame and not any(_inflects(word, a) for a in asked)
    ]


def _inflects(word: str, other: str) -> bool:
    return word == other or (min(len(word), len(other)) >= 4 and word[:4] == other[:4])


def abstention(text: str) -> str | None:
    """The first ``ABSTENTION`` in ``text`` that no negator before it in its clause denies
    ("It's not unknown" says it is known)."""
    return next(
        (
            found[0]
            for found in ABSTENTION.finditer(text)
            if not NEGATOR.search(clause_before(text, found.start()))
        ),
        None,
    )


def disclaimer(clause: str, request: str = "") -> str | None:
    """``clause`` when it says that the conversation does not tell what was asked, and
    nothing else: an ``ABSTENTION`` no negator denies ("It's not unknown") with no word of
    its own ("though the conversation does not say for sure", "that isn't stated"; not "it
    doesn't say the time", "the memories don't say otherwise")."""
    for found in ABSTENTION.finditer(clause):
        if NEGATOR.search(clause[: found.start()]):
            continue
        if not content(clause[: found.start()] + " " + clause[found.end() :], request):
            return clause.strip()
    return None


def disclaimers(text: str, request: str = "") -> list[str]:
    """The clauses of ``text`` that disclaim what was asked (``disclaimer``)."""
    return [d for c in CLAUSE_BREAK.split(text) if (d := disclaimer(c, request)) is not None]


def in_doubt(text: str, request: str = "") -> bool:
    """Whether ``text`` offers what it says in doubt or disclaims it."""
    return doubtful(text) or bool(disclaimers(text, request))


def uncertain(response: str, start: int, end: int, request: str = "") -> str | None:
    """The sentences that offer the mention at ``start:end`` in doubt or disclaim it (None:
    none does): its own (all it spans) or one next to them."""
    spans = sentences(response)
    at = next((i for i, (s, e) in enumerate(spans) if s <= start < e), None)
    if at is None:
        return None
    last = next((i for i, (s, e) in enumerate(spans) if s < end <= e), at)
    own = response[spans[at][0] : spans[last][1]].strip()
    if in_doubt(own, request):
        return own
    for i in (at - 1, last + 1):
        if 0 <= i < len(spans):
            near = response[slice(*spans[i])].strip()
            short = len(near.split()) <= SHORT_SENTENCE and doubtful(near)
            if (short or disclaimers(near, request)) and not mentions(near, [response[start:end]]):
                return f"{near} {own}" if i < at else f"{own} {near}"
    answered = last + 1 < len(spans) and AFFIRMED_AFTER.match(response[slice(*spans[last + 1])])
    if own.endswith("?") and not answered:
        return own
    return None


def doubts(response: str, answers: Sequence[str], request: str = "") -> list[str]:
    """The sentences offering the answer in doubt, when no mention of it commits to it (a
    denied mention is no commitment either); empty when one does, or none is offered."""
    found: list[str] = []
    for start, end in mentions(response, answers):
        if denial(response, start, end) is not None:
            continue
        doubt = uncertain(response, start, end, request)
        if doubt is None:
            return []
        found.append(doubt)
    return found


def offered(response: str) -> str | None:
    """The clause that offers a value beside a disclaimer, read where no expected answer is
    named (an ``abstains`` example): any clause with a word of its own that does not
    disclaim, in a sentence that guesses ("The conversation suggests Lyon"), or that does
    not only report what the conversation covers ("The memories talk about the race"), or
    reports it beside a disclaimer that concedes something (``QUALIFIED``: "It mentions
    Lyon, though it does not say for sure"). The disclaimer may be of anything ("Lyon,
    though the conversation does not say more"): a response that states a value does not
    abstain, even one that states the question's premise ("Ines moved, but the
    conversation doesn't say where")."""
    text = DENIED_DOUBT.sub(" ", response.replace("’", "'"))
    conceded = any(QUALIFIED.search(d) for d in disclaimers(text))
    for start, end in sentences(text):
        sentence = text[start:end]
        guessed = GUESS.search(sentence) is not None
        disclaimed = [m.span() for m in ABSTENTION.finditer(sentence)]
        for s, e in _clause_spans(sentence):
            clause = sentence[s:e]
            if any(a < e and s < b for a, b in disclaimed) or not content(clause):
                continue  # a clause of a disclaimer ("but not who went") or of no value
            if guessed or conceded or not REPORT.search(clause):
                return clause.strip()
    return None


def _clause_spans(text: str) -> list[tuple[int, int]]:
    """Each clause's span in ``text``, cut at every ``CLAUSE_BREAK``."""
    cuts = [0, *(i for m in CLAUSE_BREAK.finditer(text) for i in m.span()), len(text)]
    return list(zip(cuts[::2], cuts[1::2], strict=True))


def hedge(response: str, expected: str, request: str = "", answers: Sequence[str] = ()) -> Hedge:
    """Whether ``response`` names more values of the expected answer's kind than it may, or
    offers the answer (``expected`` and ``answers``, its aliases) only in doubt."""
    doubted = doubts(response, [expected, *answers], request)
    kind = answer_kind(expected)
    if kind is None:
        return Hedge(bool(doubted), doubts=doubted)
    asked = {w.lower() for w in names(request, set())}
    allowed = max(1, len(values(expected, kind, asked, in_sentences=False)))
    named = values(response, kind, asked)
    extra = len(named) - allowed
    spread = extra >= 2 or (extra >= 1 and bool(DISJUNCTION.search(response)))
    return Hedge(spread or bool(doubted), kind, named, [] if spread else doubted)
