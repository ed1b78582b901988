"""How a v4 claim turn says whether its statement is true: a sentence after the statement,
in a pair of mirrored wordings (the same words, rearranged), one for a true statement and
one for a false one.

The statement is a sentence of the evidence turn, its value true or false; the sentence
after it (a game of two truths and a lie, a dream, a joke, a scene of fiction, a rumour,
a check with the owner) is what decides. Both wordings of a pair are drawn alike for both
labels, so their words, length and negators say nothing a reader does not have to read.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

Voice = Literal["owner", "other"]


@dataclass(frozen=True)
class Frame:
    """A pair of mirrored sentences said after a claim: ``true`` after a true one."""

    name: str
    voice: Voice
    """Who says it: the slot's owner (the claim in the first person) or the other speaker
    (the claim said back to the owner, "you ...")."""
    true: str
    false: str

    def says(self, truthful: bool) -> str:
        return self.true if truthful else self.false


FRAMES: tuple[Frame, ...] = (
    Frame("game", "owner",
          "That was the true one in our game of two truths and a lie.",
          "That was the lie in our game of two truths and a lie."),
    Frame("dream", "owner",
          "I did not dream that, it really happened.",
          "I dreamt that, it did not really happen."),
    Frame("joke", "owner",
          "That is not a joke, it is the plain truth.",
          "That is just a joke, it is not the truth."),
    Frame("novel", "owner",
          "That is what happened to me, not a scene from my novel.",
          "That is a scene from my novel, not what happened to me."),
    Frame("game", "other",
          "That was the true one in your game of two truths and a lie.",
          "That was the lie in your game of two truths and a lie."),
    Frame("rumour", "other",
          "You told me that yourself, it was not a rumour.",
          "That was a rumour, you did not tell me that."),
    Frame("checked", "other",
          "I checked with you, and you said that was true.",
          "I checked with you, and you said that was made up."),
    Frame("joke", "other",
          "You were not joking, that is the plain truth.",
          "You were joking, that is not the truth."),
)  # fmt: skip
"""Every frame a claim is said in: four in each voice."""


def draw_frame(voice: Voice, rng: random.Random) -> Frame:
    """A frame of ``voice``, drawn uniformly whatever the claim's truth."""
    return rng.choice([f for f in FRAMES if f.voice == voice])


def read_frame(text: str) -> tuple[Frame, bool] | None:
    """The frame a turn's text ends with, and whether it says the claim is true: how a
    reader (the oracle) decides a claim from its words alone."""
    for frame in FRAMES:
        for truthful in (True, False):
            if text.rstrip().endswith(frame.says(truthful)):
                return frame, truthful
    return None
