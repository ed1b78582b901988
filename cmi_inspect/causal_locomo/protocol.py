"""The benchmark's protocols: every fact that tells ``paper`` and ``blind`` apart, in one place.

A protocol says what a strategy may read of a sample (``view.memory_view`` shows what
``label_free`` allows), how the task score counts success unless ``-T scoring=`` says
otherwise, and whether a choice that reads the answer key may run. ``Protocol.refuse`` is
the one rule for that last fact: every check calls it, before a run (a task given its
strategy), per sample (every strategy solver, CMI's choices) and where the gold answer is
read (CMI's gold scorer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cmi_inspect.errors import UserError, choose

ProtocolName = Literal["paper", "blind"]


class BlindProtocolError(UserError):
    """A label- or gold-reading choice was asked to run under a label-free protocol (one line)."""


@dataclass(frozen=True)
class Protocol:
    """What one protocol lets a strategy read, and how its runs are scored by default."""

    name: ProtocolName
    label_free: bool
    """Nothing of the answer key reaches a strategy: it sees each memory's content and
    timestamp under an opaque key, the release's label artefacts removed, and a choice that
    reads labels or the gold answer is refused. Otherwise it sees what the reference run
    showed: each memory's id, content, scope and label."""
    scoring: str
    """How the task score counts success by default (``scorers.SCORINGS``)."""

    def permits(self, refusal: str | None) -> bool:
        """Whether a choice may run here; ``refusal``: why a label-free protocol refuses it,
        as the user reads it (None: it reads nothing a protocol hides)."""
        return refusal is None or not self.label_free

    def refuse(self, refusal: str | None) -> None:
        """Raise ``refusal`` as one line unless ``permits``."""
        if not self.permits(refusal):
            raise BlindProtocolError(str(refusal))


PROTOCOLS: dict[ProtocolName, Protocol] = {
    p.name: p
    for p in (
        Protocol("paper", label_free=False, scoring="paper"),
        # a hedge across several values is no success: a label-free run is scored as strictly
        # as it is read
        Protocol("blind", label_free=True, scoring="strict"),
    )
}
"""``-T protocol=``: the protocols by name, the reference's first."""


def named_protocol(name: object) -> Protocol:
    """The protocol called ``name``; one line naming the protocols for any other."""
    chosen = choose("protocol", name, tuple(PROTOCOLS))
    return next(p for p in PROTOCOLS.values() if p.name == chosen)


def logged_protocol(name: object) -> Protocol | None:
    """The protocol a log names, None for a name no protocol has (an edited task's)."""
    return next((p for p in PROTOCOLS.values() if p.name == name), None)
