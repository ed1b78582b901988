"""Leave-one-in: eRAG's utility of each retrieved item, as a selector over CMI's candidates.

eRAG (Salemi and Zamani, 2024) judges a retrieved document by the answer given with it
alone. Here, over CMI's candidates (its proposal, the same retriever and k), the model
answers once with every candidate in its context, and each candidate's utility is that
answer's log-probability, by forced decoding, with the candidate alone in the context over
with no memory. It attributes the answer the memories produce together rather than the
no-memory answer, which a memory that helps makes less likely: the same answer as
``context_cite`` attributes, so the two differ in the attribution alone.
"""

from __future__ import annotations

from typing import Any

from cmi_inspect.causal_locomo.strategies.attribution import (
    AnswerLogprob,
    AttributionDetails,
    AttributionMemory,
    context,
)
from cmi_inspect.causal_locomo.view import Memory


class LeaveOneInDetails(AttributionDetails):
    """Leave-one-in's record: the attribution baseline's, and the no-memory log-probability."""

    logprob_none: float | None = None
    """The answer's log-probability with no memory, which each utility is over."""


class LeaveOneIn(AttributionMemory):
    """eRAG's leave-one-in utility over CMI's candidates: keep those that help alone.

    Each candidate's utility is the log-probability, by forced decoding, of the answer given
    with every candidate, with that candidate alone in the context over with no memory.
    Needs forced decoding (``gguf/`` models). ``threshold`` is not tuned: choose it on
    development data (XL's dev split).

    Args:
        k: Candidates proposed, by CMI's proposal (its retriever and weights).
        threshold: Kept: a candidate whose utility (nats) is above it; at least 0. Or a
            file of thresholds cross-fitted by conversation (``cmi-inspect fit-threshold``).
        embedder: The proposal's embedder (``e5``, ``hashing`` or ``openai``); default:
            CMI's under the protocol (``hashing`` under paper, ``e5`` under blind).
    """

    name = "leave_one_in"
    Details = LeaveOneInDetails

    def __init__(
        self, k: int = 3, threshold: float | str = 0.0, embedder: str | None = None
    ) -> None:
        super().__init__(k, threshold, embedder)

    async def attribute(
        self, request: str, memories: list[Memory], logprob: AnswerLogprob
    ) -> tuple[list[float], dict[str, Any]]:
        """Each candidate's gain, alone, over no memory."""
        none = await logprob(context(request, []))
        gains = [await logprob(context(request, [m])) - none for m in memories]
        return gains, {"logprob_none": none}
