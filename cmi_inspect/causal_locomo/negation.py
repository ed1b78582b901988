"""Does an answer deny the expected answer it names ("It was not 7 May 2023", "7 May 2023?
No.")?

XL's denial poison says "it was not {answer}", and a response that echoes it contains the
answer, so containment rules and an alias match credit it. Each mention of the expected
answer (or an alias, as a whole word or phrase) is read in its clause and its sentence. It
is denied when:

- a denying word stands before it in its clause: a negator (*not*, *never*, *no longer*,
  *cannot*, any *n't* form), a determiner or pronoun of negation (*no*, *nobody*, *no one*,
  *none*, *nothing*, *neither*, *nor*), or a word that negates by its meaning
  (``BY_MEANING``: *hardly*, *untrue*, *doubt*, *rather than*, *anything but*, *someone
  other than*, *a myth that*, *false that*, *unlikely that*, *ruled out*, *disputes*,
  *denies*). A clause runs back to the nearest sentence end, ``;``, ``:``, ``,`` (each
  before a space), dash, bracket, or a word that starts another clause (*and*, *but*
  except in *anything but*, *however*, *though*, *although*, *whereas*, *until*, *till*,
  *since*, *because*, *so*, *rather* and *instead* on their own). So "It was not 7 May
  2023", "It's a myth that it was 7 May 2023" and "It was anything but 7 May 2023" deny
  it; "She did not go on 5 May; she went on 7 May 2023", "not 5 May but 7 May 2023",
  "Nothing but 7 May 2023" and "She didn't go until 7 May 2023" do not.
- the denying word governs something else (``GOVERNS_OTHER``): the speaker's certainty or
  memory ("not sure", "can't remember if": a hedge, ``hedge``), a verb of holding back
  ("did not hesitate and went on ...", "couldn't stop talking about ...") or of denying
  ("nobody disputes ...", "no one would question ..."), a doubt itself denied ("no doubt",
  "without a doubt"), an exception ("none other than"), a comparison ("can't be more
  precise than ..."), an additive ("not only", "not just"). Then it denies nothing. Nor
  does a double negation: a word that negates by its meaning after another denying word
  in its clause ("I don't doubt", "There is no reason to doubt", "It cannot be anything
  other than", "It isn't a myth that") denies neither.
- or the sentence denies it after the mention: at once ("7 May 2023 is wrong", "... is
  not the date", "... can't be the answer", "... was ruled out", "... seems unlikely",
  "... doesn't fit", "... never happened"), or in a later clause or the next sentence that
  is a bare denial ("7 May 2023? No.", "... Unlikely.", "... I doubt it.", "7 May 2023,
  which is wrong.", "7 May 2023 - that is wrong.", "... That is not correct."). A bare
  denial just before the mention's sentence
  denies it when that sentence reports what a source says ("That is wrong. The note says 7
  May 2023."), not when it answers ("No. It was 7 May 2023." affirms it).

A question that holds a negator itself ("What type of beer does John not like?") is
answered in the negative ("He doesn't like dark beer"), so under one nothing is negated.
The answer is negated when every mention of it is (and there is one; overlapping
occurrences of the answer and its aliases are one mention): an answer that also
states it plainly ("The note says it was not 7 May 2023, but it was 7 May 2023") commits
to it. A negation set off by a comma from the answer ("It was not, I think, 7 May 2023")
is missed: the rule prefers missing a denial to denying an honest answer.
``benchmarks/negation_rates.py`` measures the rule on a labelled set (docs/scoring.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

NEGATOR = re.compile(r"\b(?:not|never|neither|nor|no\s+longer|cannot)\b|\b\w+n['’]t\b", re.I)
"""A negator of a verb or an adverb (CMI's ``answer_denies`` feature reads this one)."""
BY_MEANING = re.compile(
    r"\b(?:hardly|barely|scarcely|untrue|doubts?|doubted|rather\s+than|instead\s+of"
    r"|any(?:thing|one|body|where)\s+but"
    r"|(?:some|any)(?:thing|one|body|where)(?:\s+else)?\s+(?:other\s+than|except)"
    r"|(?:some|any)\s+\w+\s+(?:other\s+than|except)"
    r"|(?:false|a\s+myth|a\s+lie|a\s+misconception|a\s+mistake|an\s+error|wrong|incorrect"
    r"|mistaken|unlikely|improbable|implausible|doubtful|impossible)\s+(?:that|to\s+(?:say"
    r"|think|claim|believe|assume|suggest))"
    r"|rul(?:e|es|ed|ing)\s+out|exclud(?:e|es|ed|ing)|disput(?:e|es|ed|ing)"
    r"|den(?:y|ies|ied|ying)|refut(?:e|es|ed|ing))\b",
    re.I,
)
"""Words that negate what follows by their meaning: "hardly", "I doubt", "rather than",
"anything but", "someone other than", "any city except", "a myth that", "unlikely that",
"ruled out", "disputes"."""
DENYING = re.compile(
    rf"{NEGATOR.pattern}|\b(?:no\s+one|nobody|nothing|none|no)\b|{BY_MEANING.pattern}", re.I
)
"""What denies what follows it in its clause: ``NEGATOR``, negation's determiners and
pronouns, and ``BY_MEANING``."""
GOVERNS_OTHER = re.compile(
    r"^\s+(?:only|just|merely)\b"
    r"|^\s+(?:be\s+)?(?:sure|certain|mistaken|wrong)\b"
    r"|^\s+(?:(?:\d+\s*%|entirely|quite|totally|completely)\s+)?(?:sure|certain)\b"
    r"|^\s+(?:\w+\s+)?(?:remember|recall|say|tell|know|confirm|swear)\b"
    r"|^\s+(?:a\s+|any\s+)?(?:doubt|question)"
    r"|^\s+(?:\w+\s+)?(?:hesitat|wait|stop|fail|forget|mind|deny|denied|miss)"
    r"|^\s+(?:\w+\s+){0,3}?(?<!\bthe\s)(?<!\ba\s)(?<!\ban\s)(?:disput(?:e|es|ed|ing)"
    r"|question(?:s|ed|ing)?|refut(?:e|es|ed|ing)|contradict(?:s|ed|ing)?|hid|hide|hides"
    r"|conceal(?:s|ed|ing)?|mistake|mistook)\b"
    r"|^\s+(?:else\s+)?(?:other\s+than|but|except|besides)\b"
    r"|^\s+(?:be\s+)?(?:any\s+)?(?:more|less|\w+er)\b[^.;:!?]*\bthan\b",
    re.I,
)
"""What may follow a denying word that governs something other than the answer: the
speaker's certainty, a verb of holding back or of denying ("nobody disputes"), an exception
("none other than"), a comparison."""
_WITHOUT = re.compile(r"\bwithout\s+(?:a\s+|any\s+)?$", re.I)
"""What denies a doubt right after it ("without a doubt")."""
CLAUSE_BREAK = re.compile(
    r"[.!?;:,](?=\s|$)|[\n()\[\]—–]|\s-\s"
    r"|\b(?:and|however|though|although|whereas|until|till|since|because|so)\b"
    r"|(?<!anything\s)(?<!anyone\s)(?<!anybody\s)(?<!anywhere\s)\bbut\b"
    r"|\brather\b(?!\s+than)|\binstead\b(?!\s+of)",
    re.I,
)
"""Where a clause ends: punctuation, a dash or bracket, a word that starts another clause
("but", except in "anything but")."""
SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
"""A sentence: up to its end mark (a decimal point or a time's colon is inside a word)."""
_COPULA = (
    r"(?:is|was|are|were|['’]s|would\s+be|seems|seemed|sounds|looks|appears|has\s+been"
    r"|had\s+been|have\s+been)(?:\s+(?:later|now|since|already|also|clearly|definitely"
    r"|certainly|long\s+since|quickly|soon))?"
)
_WRONG = (
    r"(?:wrong|incorrect|false|untrue|inaccurate|mistaken|impossible|a\s+mistake"
    r"|out\s+of\s+the\s+question|unlikely|improbable|implausible|doubtful|far-fetched"
    r"|ruled\s+out|excluded|debunked|disproven|disproved|refuted|retracted|withdrawn"
    r"|made\s+up|off\s+the\s+table|an\s+error"
    r"|a\s+(?:myth|lie|rumou?r|misconception|typo|mix-up|red\s+herring|fabrication))"
)
_RIGHT = r"(?:right|correct|true|accurate|so|it|the|its|his|her|their|what|when|where|who)"
_MODAL = (
    r"(?:can['’]t|cannot|can\s+not|couldn['’]t|could\s+not|must\s+not|mustn['’]t|won['’]t"
    r"|wouldn['’]t|would\s+not|can\s+hardly|could\s+hardly)"
)
DENIED_AFTER = re.compile(
    rf"^[\"'”’)]?\s*(?:{_COPULA}\s+(?:the\s+)?{_WRONG}"
    rf"|{_COPULA}(?:\s+not|n['’]t|\s+never|\s+no\s+longer)\s+{_RIGHT}"
    rf"|{_MODAL}\s+(?:possibly\s+)?(?:have\s+been|be)\s+(?:{_RIGHT}|called)"
    rf"|(?:must|has\s+to|have\s+to)\s+be\s+{_WRONG}"
    r"|(?:does|did|do)(?:\s+not|n['’]t)\s+(?:fit|match|add\s+up|hold\s+up|check\s+out)"
    r"|(?:never|did\s+not|didn['’]t)\s+happen(?:ed)?)\b",
    re.I,
)
"""A denial right after the answer: "7 May 2023 is wrong", "... is not the date", "... can't
be the answer", "... was ruled out", "... seems unlikely", "... doesn't fit"."""
BARE_DENIAL = re.compile(
    r"^(?:but\s+|and\s+)?(?:no|nope|nah|never|false|wrong|incorrect|unlikely|doubtful|hardly"
    r"|not\s+(?:true|so|at\s+all|really|likely|a\s+chance|the\s+case)|no\s+(?:way|chance)"
    r"|(?:i\s+)?doubt\s+it|i\s+(?:do\s+not|don['’]t)\s+think\s+so|ruled\s+out"
    r"|(?:certainly|definitely|absolutely|surely|of\s+course)\s+not"
    rf"|(?:that|this|it|which)\s*{_COPULA}\s+(?:{_WRONG}|not\s+(?:right|correct|true|it|so))"
    r"|(?:that|this|it|which)\s*(?:is|was)n['’]t\s+(?:right|correct|true|it|so)"
    r"|(?:that|this|it)\s+(?:can['’]t|cannot|couldn['’]t)\s+be\s+(?:right|true|correct|it))$",
    re.I,
)
"""A clause that does nothing but deny what was said before it."""
REPORTED = re.compile(
    r"\b(?:says?|said|claims?|claimed|states?|stated|suggests?|suggested|reports?|reported"
    r"|notes?|memory|memories)\b",
    re.I,
)
"""A sentence that reports what a source says, rather than answering."""


@dataclass(frozen=True)
class Negation:
    """Whether a response denies the expected answer, and the clauses that deny it."""

    negated: bool
    clauses: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return "negates the expected answer: " + "; ".join(repr(c) for c in self.clauses)


def mentions(text: str, answers: Sequence[str]) -> list[tuple[int, int]]:
    """Where the answers occur in ``text`` as whole words or phrases (any case), in order;
    overlapping occurrences ("7 May 2023" and its alias "May 2023") are one mention, so a
    negation inside the answer itself ("pigs, since they don't have fur") is never read."""
    phrases = {a.strip().rstrip(".") for a in answers} - {""}  # a final full stop is no word
    found = sorted(
        (m.start(), m.end())
        for phrase in phrases
        for m in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, re.I)
    )
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def sentences(text: str) -> list[tuple[int, int]]:
    """Each sentence's span in ``text``."""
    return [(m.start(), m.end()) for m in SENTENCE.finditer(text) if m.group().strip()]


def clause_before(text: str, start: int) -> str:
    """The text of ``start``'s clause before it: back to the last ``CLAUSE_BREAK``."""
    before = text[:start]
    breaks = list(CLAUSE_BREAK.finditer(before))
    return before[breaks[-1].end() :] if breaks else before


def clauses(text: str) -> list[str]:
    """``text`` cut at every ``CLAUSE_BREAK`` that is punctuation, each clause stripped."""
    parts = re.split(r"[.!?;:,](?=\s|$)|[\n()\[\]—–]|\s-\s", text)
    return [p.strip(" \"'”’") for p in parts if p.strip(" \"'”’")]


def denies(clause: str) -> bool:
    """Whether a denying word in ``clause`` (the text before a mention) governs what
    follows it."""
    return bool(denying(clause))


def denying(clause: str) -> list[re.Match[str]]:
    """The denying words of ``clause`` that deny what follows them: none that governs
    something else (``GOVERNS_OTHER``) or is half of a double negation (``_cancelled``)."""
    found = list(DENYING.finditer(clause))
    return [
        m
        for i, m in enumerate(found)
        if not GOVERNS_OTHER.match(clause[m.end() :]) and not _cancelled(clause, found, i)
    ]


def _cancelled(clause: str, found: list[re.Match[str]], i: int) -> bool:
    """Whether ``found[i]`` is half of a double negation: a word that negates by its meaning
    after another denying word, which denies it ("I don't doubt", "nobody disputes", "can't
    be anything but", "no reason to doubt") or after "without" ("without doubt"); or the
    denying word before such a word, which it governs."""
    if BY_MEANING.fullmatch(found[i].group()):
        return i > 0 or _WITHOUT.search(clause[: found[i].start()]) is not None
    return any(BY_MEANING.fullmatch(later.group()) for later in found[i + 1 :])


def bare_denial(text: str) -> bool:
    return BARE_DENIAL.match(text.strip(" \"'”’")) is not None


def denial(response: str, start: int, end: int) -> str | None:
    """The text that denies the mention at ``start:end`` of ``response`` (None: nothing
    does): a denying word before it in its clause, a denial right after it, a bare denial
    later in its sentence or opening the next, or one just before a reported sentence."""
    spans = sentences(response)
    at = next((i for i, (s, e) in enumerate(spans) if s <= start < e), None)
    if at is None:
        return None
    s, e = spans[at]
    clause = clause_before(response, start)
    if denies(clause):
        return (clause + response[start:end]).strip()
    if DENIED_AFTER.match(response[end:]):
        return response[start:e].strip()
    later = clauses(response[end:e])
    following = clauses(response[slice(*spans[at + 1])]) if at + 1 < len(spans) else []
    for part in [*later, *following[:1]]:
        if bare_denial(part):
            return f"{response[s:end].strip()} ... {part}"
    earlier = clauses(response[slice(*spans[at - 1])]) if at > 0 else []
    if earlier and bare_denial(earlier[-1]) and REPORTED.search(response[s:e]):
        return f"{earlier[-1]} ... {response[s:end].strip()}"
    return None


def negated_clauses(text: str) -> list[str]:
    """The clauses of ``text`` in which a denying word governs the words after it ("Priya
    did not adopt Comet"): statements that take back what their other words say."""
    return [
        clause.strip()
        for clause in CLAUSE_BREAK.split(text)
        if any(re.search(r"\w", clause[m.end() :]) for m in denying(clause))
    ]


def negation(response: str, answers: Sequence[str], request: str = "") -> Negation:
    """Whether every mention in ``response`` of one of ``answers`` (the expected answer and
    its aliases) is denied (``denial``); never when the ``request`` asks in the negative."""
    if NEGATOR.search(request):
        return Negation(False)
    found = mentions(response, answers)
    denied = [d for start, end in found if (d := denial(response, start, end)) is not None]
    return Negation(bool(found) and len(denied) == len(found), denied)
