"""What a memory strategy may see of a sample, under each protocol (``protocol.PROTOCOLS``).

``paper`` shows what the reference run showed (id, content, scope, label). A label-free
protocol (``blind``) shows content and timestamp only, under an opaque key, in an order
that carries no label; only scorers map keys back to memory ids. It also removes the
release's label artefacts (``blinding``): the answer sentence that useful memories end
with, and dates that only harmful memories have.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from cmi_inspect.causal_locomo.blinding import blind_timestamps, strip_answer_suffix
from cmi_inspect.causal_locomo.data import MemoryRecord
from cmi_inspect.causal_locomo.prompts import memory_line
from cmi_inspect.causal_locomo.protocol import PROTOCOLS, ProtocolName


@dataclass(frozen=True)
class Memory:
    """A memory as the protocol shows it to a strategy; ``key`` is the id it is shown under."""

    key: str
    content: str
    timestamp: int
    scope: str | None = None
    label: str | None = None
    said: str | None = None
    """Who said it and when (``Caroline, 8 May 2023``), for a memory that is a turn (XL)."""

    def line(self) -> str:
        """The memory as one line of a prompt."""
        return memory_line(self.key, self.content, self.scope, self.label, self.said)


def said(memory: MemoryRecord) -> str | None:
    """A turn's speaker and day as its prompt line shows them, when the memory has them."""
    parts = [p for p in (memory.speaker, memory.said_on) if p]
    return ", ".join(parts) or None


def blind_keys(example_id: str, bank: Sequence[MemoryRecord]) -> dict[str, str]:
    """Memory id -> ``m1``, ``m2``, ... in an order drawn from a hash of the ids.

    Ids such as ``harm_00`` name the answer key, so a strategy never sees them;
    numbering the hash order makes every key of a bank distinct by construction.
    """

    def draw(m: MemoryRecord) -> str:
        return hashlib.sha256(f"{example_id}/{m.memory_id}".encode()).hexdigest()

    return {m.memory_id: f"m{i}" for i, m in enumerate(sorted(bank, key=draw), start=1)}


def memory_view(
    example_id: str,
    bank: Sequence[MemoryRecord],
    protocol: ProtocolName,
    session_timestamps: Sequence[int] = (),
    keep_dates: bool = False,
) -> list[Memory]:
    """The sample's memory bank as the given protocol lets a strategy see it.

    ``session_timestamps`` (of the example's past sessions) bound the dates the
    blind view shows; ``keep_dates`` (a record ``dated_by_source``) shows every memory's
    own date (``blinding.blind_timestamps``).
    """
    if not PROTOCOLS[protocol].label_free:
        return [
            Memory(m.memory_id, m.content, m.timestamp, m.scope, m.label, said(m)) for m in bank
        ]
    keys = blind_keys(example_id, bank)
    dates = blind_timestamps(example_id, bank, session_timestamps, keep_dates)
    view = [
        Memory(
            keys[m.memory_id],
            strip_answer_suffix(m.content),
            dates[m.memory_id],
            said=said(m),
        )
        for m in bank
    ]
    return sorted(view, key=lambda m: int(m.key[1:]))


def key_to_memory_id(
    example_id: str, bank: Sequence[MemoryRecord], protocol: ProtocolName
) -> dict[str, str]:
    """Map the keys a strategy saw back to memory ids (for scorers only)."""
    if not PROTOCOLS[protocol].label_free:
        return {m.memory_id: m.memory_id for m in bank}
    return {key: memory_id for memory_id, key in blind_keys(example_id, bank).items()}
