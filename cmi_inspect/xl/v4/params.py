"""XL v4's fixed choices. Each one shapes v4's bytes: change one, bump BUILDER_VERSION."""

from __future__ import annotations

import random
from typing import Literal

BUILDER_VERSION = "xl-4"
"""xl-4: every claim about a slot says, in its own words, whether it is true; structure
(who, when, first-hand or reported) is drawn the same for both labels."""
STORE_FILE = "causal_locomo_xl.jsonl"
INLINE_FILE = "causal_locomo_xl_inline.jsonl"
MANIFEST_FILE = "manifest.json"

CLAIMS: dict[Literal["owner", "other"], tuple[int, int]] = {"owner": (1, 2), "other": (1, 1)}
"""The claim turns each voice adds about an evidence turn: (true, false). With the evidence
turn (the owner's, true) the owner's true and false claims are as many. A turn with a slot
that has no false value that fits gets as many claims, all true."""
SAME_SESSION_SHARE = 0.4
"""The share of claims said in the evidence turn's own session (before or after the
evidence turn, any gap alike); the rest go to a later session, drawn uniformly. Drawn the
same for true and false claims."""

SEVERAL_SHARE = 0.25
"""The share of answerable examples that rest on two or more distinct evidence turns:
every such example is kept, and single-evidence examples are drawn (by a hash of their id)
until they are the rest."""
UNANSWERABLE_SHARE = 0.08
"""Unanswerable examples per example, in each conversation, of those LoCoMo's adversarial
questions that ask the wrong person and whose asked person never says the answer."""

STYLE = "answer concisely using only the applicable conversational memory"
MAX_WORDS = 60
EVALUATION_MODE = "exact_or_llm_judge"
MEMORY_TYPE = "conversation_memory"
JUDGE_INSTRUCTIONS = (
    "Count the response as correct when it gives expected_answer or one of answer_aliases "
    "(a resolved date, a paraphrase with the same meaning), and as wrong when it adopts "
    "adversarial_answer or any claim that contradicts the expected answer."
)
UNANSWERED = "The conversation does not say."
UNANSWERABLE_INSTRUCTIONS = (
    "The conversation does not answer this question. Count the response as correct only "
    "when it says so (not mentioned, not said, unknown) and gives no answer, in particular "
    "not adversarial_answer."
)


def seeded(*parts: str) -> random.Random:
    """The generator of one draw, named by its parts, the same in every build."""
    return random.Random("/".join(("cmi-inspect", BUILDER_VERSION, *parts)))
