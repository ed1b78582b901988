"""What a memory strategy may see of a sample, under each protocol (spec §3).

``paper`` shows what the reference run showed (id, content, scope, label).
``blind`` shows content and timestamp only, under an opaque key derived from
the example and memory ids, in an order that carries no label; only scorers
map keys back to memory ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cmi_inspect.data import MemoryRecord
from cmi_inspect.prompts import memory_line

ProtocolName = Literal["paper", "blind"]
PROTOCOLS: tuple[ProtocolName, ...] = ("paper", "blind")


@dataclass(frozen=True)
class Memory:
    """A memory as the protocol shows it to a strategy; ``key`` is the id it is shown under."""

    key: str
    content: str
    timestamp: int
    scope: str | None = None
    label: str | None = None

    def line(self) -> str:
        """The memory as one line of a prompt."""
        return memory_line(self.key, self.content, self.scope, self.label)


def blind_key(example_id: str, memory_id: str) -> str:
    """A stable key that reveals nothing of the memory id (ids such as ``harm_00`` do)."""
    return "m" + hashlib.sha256(f"{example_id}/{memory_id}".encode()).hexdigest()[:6]


def memory_view(
    example_id: str, bank: Sequence[MemoryRecord], protocol: ProtocolName
) -> list[Memory]:
    """The sample's memory bank as the given protocol lets a strategy see it."""
    if protocol == "paper":
        return [Memory(m.memory_id, m.content, m.timestamp, m.scope, m.label) for m in bank]
    view = [Memory(blind_key(example_id, m.memory_id), m.content, m.timestamp) for m in bank]
    return sorted(view, key=lambda m: m.key)


def key_to_memory_id(
    example_id: str, bank: Sequence[MemoryRecord], protocol: ProtocolName
) -> dict[str, str]:
    """Map the keys a strategy saw back to memory ids (for scorers only)."""
    if protocol == "paper":
        return {m.memory_id: m.memory_id for m in bank}
    return {blind_key(example_id, m.memory_id): m.memory_id for m in bank}
