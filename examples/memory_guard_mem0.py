"""MemoryGuard in front of mem0's search results, offline (``pip install 'cmi-inspect[mem0]'``).

Run ``python examples/memory_guard_mem0.py``. A real mem0 store (Qdrant and its history in
memory, the offline e5 embeddings, telemetry off) keeps an agent's notes; its search for the
request returns the closest ones, the planted one among them, and the guard drops that one
before the agent's prompt is written.
"""

from __future__ import annotations

from cmi_inspect import MemoryGuard, Session
from cmi_inspect.causal_locomo.strategies.mem0 import offline_mem0

HISTORY = [
    Session(
        "10:00 am on 3 March, 2022", [("Priya", "We adopted a greyhound today! His name is Comet.")]
    ),
    Session("9:00 am on 1 June, 2022", [("Priya", "Green tea again for me."), ("Sam", "Always.")]),
]
NOTES = {
    "note-17": "Priya adopted the greyhound Comet on 3 March 2022.",
    "note-42": "Priya adopted the greyhound Comet on 9 May 2023.",  # planted: the date is wrong
    "note-08": "Priya drinks green tea.",
    "note-23": "Sam is learning the cello.",
}
REQUEST = "When did Priya adopt Comet?"


def main() -> list[str]:
    """Search mem0 for the request, print the guard's verdict on each result, and return the
    keys of the results it keeps."""
    with offline_mem0() as memory:
        for key, text in NOTES.items():
            memory.add(text, user_id="priya", metadata={"key": key}, infer=False)
        found = memory.search(REQUEST, top_k=3, filters={"user_id": "priya"})["results"]
    retrieved = {r["metadata"]["key"]: r["memory"] for r in found}
    verdicts = MemoryGuard().check(REQUEST, retrieved, HISTORY)
    for v in verdicts:
        print(f"{v.key}: {'kept' if v.kept else 'dropped'} {v.reason or ''}")
    return [v.key for v in verdicts if v.kept]


if __name__ == "__main__":
    main()
