"""A smaller bank drawn from an example's, deterministically (``-T bank_size=N``).

XL v3's bank is its conversation's whole memory store, hundreds of memories. A bank of N
keeps every memory the example labels useful or harmful (k of them) and the N - k others
closest to the request: those that share the most content words with it (``text.
content_words``), the hardest negatives; ties go by a hash of the example's and the
memory's ids. The bank keeps its order. A bank of N < k keeps its k labelled memories.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.errors import positive_int
from cmi_inspect.text import content_words


@lru_cache(maxsize=1 << 16)
def _words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


def check_bank_size(size: object) -> int | None:
    """``-T bank_size`` as given: None, or a whole number of memories of at least 1."""
    return None if size is None else positive_int("-T bank_size", size)


def smaller_bank(record: ExampleRecord, size: int) -> ExampleRecord:
    """The record with a bank of ``size`` memories: every labelled one and the closest
    others to its request (see the module's docstring)."""
    bank = record.memory_bank
    if len(bank) <= size:
        return record
    labelled = {m.memory_id for m in bank if m.label != "irrelevant"}
    request = _words(record.current_task.instruction)

    def closeness(memory_id: str, content: str) -> tuple[int, str]:
        tie = hashlib.sha256(f"{record.example_id}/{memory_id}".encode()).hexdigest()
        return -len(request & _words(content)), tie

    others = sorted(
        (m for m in bank if m.memory_id not in labelled),
        key=lambda m: closeness(m.memory_id, m.content),
    )
    keep = labelled | {m.memory_id for m in others[: max(0, size - len(labelled))]}
    kept = [m for m in bank if m.memory_id in keep]
    return record.model_copy(
        update={
            "memory_bank": kept,
            "gold_memory_ids": [i for i in record.gold_memory_ids if i in keep],
            "bad_memory_ids": [i for i in record.bad_memory_ids if i in keep],
        }
    )
