"""The benchmark's one tokenisation rule, and the content words read with it.

Scoring, retrieval, the evidence scorer and the XL builder all split text with ``tokens``.
Content words are tokens with number words as digits, stop words dropped and a stemmer
applied; the evidence scorer and the XL builder read them by different ``WordRule``s
(``SCORING`` and ``XL_STEMS``), since XL's bytes and the scorer's results depend on each.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z0-9']+")

NUMBER_WORDS = {
    word: str(n)
    for n, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
"""Number words as digits, so "three years" meets "3 years"."""


def tokens(text: str, split_apostrophes: bool = False) -> list[str]:
    """Lower-cased word tokens (``[A-Za-z0-9']+``); with ``split_apostrophes``, an apostrophe
    splits its token ("don't" -> "don", "t")."""
    found = [t.lower() for t in _WORD.findall(text)]
    if split_apostrophes:
        return [part for token in found for part in token.split("'") if part]
    return found


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def fold_forms(token: str) -> str:
    """Fold possessives, plurals and common verb endings, so "painted" meets "painting"."""
    token = token.removesuffix("'s").strip("'")
    for suffix, replacement, shortest in (
        ("ies", "y", 5),
        ("ing", "", 6),
        ("ed", "", 5),
        ("s", "", 4),
    ):
        if token.endswith(suffix) and len(token) >= shortest and not token.endswith("ss"):
            token = token[: -len(suffix)] + replacement
            break
    return token[:-1] if len(token) >= 4 and token.endswith("e") else token


def five_letter_stem(token: str) -> str:
    """A plural 's' cut, then the first five letters: crude, but it never changes."""
    return (token[:-1] if len(token) > 3 and token.endswith("s") else token)[:5]


@dataclass(frozen=True)
class WordRule:
    """How the content words of a text are read from its tokens."""

    stop_words: frozenset[str]
    stem: Callable[[str], str]
    split_apostrophes: bool = False
    """Whether an apostrophe splits a token (``tokens``)."""
    shortest: int = 1
    """Stems shorter than this are dropped (a number never is)."""


ENGLISH_STOP_WORDS = frozenset(
    (
        "a about above across after afterwards again against all almost alone along already "
        "also although always am among amongst amoungst amount an and another any anyhow anyone "
        "anything anyway anywhere are around as at back be became because become becomes "
        "becoming been before beforehand behind being below beside besides between beyond bill "
        "both bottom but by call can cannot cant co con could couldnt cry de describe detail do "
        "done down due during each eg eight either eleven else elsewhere empty enough etc even "
        "ever every everyone everything everywhere except few fifteen fifty fill find fire "
        "first five for former formerly forty found four from front full further get give go "
        "had has hasnt have he hence her here hereafter hereby herein hereupon hers herself him "
        "himself his how however hundred i ie if in inc indeed interest into is it its itself "
        "keep last latter latterly least less ltd made many may me meanwhile might mill mine "
        "more moreover most mostly move much must my myself name namely neither never "
        "nevertheless next nine no nobody none noone nor not nothing now nowhere of off often "
        "on once one only onto or other others otherwise our ours ourselves out over own part "
        "per perhaps please put rather re same see seem seemed seeming seems serious several "
        "she should show side since sincere six sixty so some somehow someone something "
        "sometime sometimes somewhere still such system take ten than that the their them "
        "themselves then thence there thereafter thereby therefore therein thereupon these they "
        "thick thin third this those though three through throughout thru thus to together too "
        "top toward towards twelve twenty two un under until up upon us very via was we well "
        "were what whatever when whence whenever where whereafter whereas whereby wherein "
        "whereupon wherever whether which while whither who whoever whole whom whose why will "
        "with within without would yet you your yours yourself yourselves"
    ).split()
)
"""scikit-learn's English stop words (``sklearn.feature_extraction.text``), the same 318
words, written here so that reading content words needs no scikit-learn."""

SCORING = WordRule(ENGLISH_STOP_WORDS, fold_forms, shortest=2)
"""The evidence scorer's: scikit-learn's English stop words, word forms folded."""

XL_STEMS = WordRule(
    frozenset(
        "a an the and or of to in on at for with by from is was are were be been it its this "
        "that as his her their he she they them i you we my your our me us not no yes likely "
        "would could should will about into than then so also some any do does did has have "
        "had".split()
    ),
    five_letter_stem,
    split_apostrophes=True,
)
"""The XL builder's: a short stop list and five-letter stems, fixed by its builder version."""


def content_words(text: str, rule: WordRule = SCORING) -> list[str]:
    """The words of ``text`` that carry content, in order, read by ``rule``."""
    numbered = (NUMBER_WORDS.get(w, w) for w in tokens(text, rule.split_apostrophes))
    stems = (rule.stem(w) for w in numbered if w not in rule.stop_words)
    return [s for s in stems if len(s) >= rule.shortest or s.isdigit()]


def word_overlap(a: str, b: str) -> float:
    """Share of the shorter text's content words that the other has too: high for a
    one-value edit ("... with his sister Ola" / "... with his neighbour Marek")."""
    words_a, words_b = set(content_words(a)), set(content_words(b))
    if not words_a or not words_b:
        return 0.0
    return len(words_a & words_b) / min(len(words_a), len(words_b))
