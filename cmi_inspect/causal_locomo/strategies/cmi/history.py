"""The agent's own history as CMI reads it for one sample.

A scorer or risk filter that checks texts against the history (``reads_history``) gets
the sample's ``BlindEvidence``, built from the blind ``MemoryTask`` alone; when none of
the chosen ones does, the history is not read and nothing of it is logged.
"""

from __future__ import annotations

from collections.abc import Sequence

from cmi_inspect.causal_locomo.strategies.base import MemoryTask
from cmi_inspect.causal_locomo.strategies.cmi.evidence import BlindEvidence, EvidenceWindow, Support


class History:
    """The sample's evidence from its past sessions, or nothing when no choice reads it."""

    def __init__(self, evidence: BlindEvidence | None) -> None:
        self._evidence = evidence

    @classmethod
    def of(cls, task: MemoryTask, read: bool, memories: Sequence[str] = ()) -> History:
        """The task's history, read only when ``read``, with evidence for the request and
        for each of ``memories`` (the candidates' texts)."""
        return cls(BlindEvidence.from_task(task, memories) if read else None)

    @property
    def evidence(self) -> BlindEvidence:
        """The evidence, for a scorer or filter that declared ``reads_history``."""
        if self._evidence is None:
            raise AssertionError("the history was not read: declare reads_history")
        return self._evidence

    def support(self, text: str | None) -> Support | None:
        """How far the history supports ``text`` (None when it was not read or no text)."""
        if self._evidence is None or text is None:
            return None
        return self._evidence.support(text)

    def log(self) -> list[EvidenceWindow]:
        """The evidence windows as the log shows them (none when it was not read)."""
        return self._evidence.log() if self._evidence is not None else []
