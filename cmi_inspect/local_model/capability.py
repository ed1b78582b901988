"""What a model's provider offers beyond Inspect's ``ModelAPI``, asked for by type.

``ContinuationLogprobs``: the log-probability of given replies (forced decoding, nothing
generated). ``gguf/`` offers it; Inspect's providers, ``openai-api/`` included (and so a
model served by ``engine_server``), do not. Code that wants it calls
``continuation_scorer`` rather than probing a provider's attributes.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from inspect_ai.model import ChatMessage, Model

FORCED_DECODING = "forced_decoding"
"""The name of a sample transcript's record of one forced decoding (an ``InfoEvent`` whose
data holds its prompt's and its continuations' tokens): ``report.runs`` counts each as a
call of the run, and its tokens as prompt tokens."""


@runtime_checkable
class ContinuationLogprobs(Protocol):
    """A provider that scores replies by forced decoding."""

    async def continuation_logprobs(
        self, input: list[ChatMessage], continuations: list[str]
    ) -> list[list[float]]:
        """Per token, the log-probability of each continuation as the model's whole reply
        to ``input``, its end-of-turn token included."""
        ...


def continuation_scorer(model: Model) -> ContinuationLogprobs | None:
    """The model's provider, where it scores replies by forced decoding; None elsewhere."""
    api = model.api
    return api if isinstance(api, ContinuationLogprobs) else None
