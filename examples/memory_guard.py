"""MemoryGuard in front of a memory system of your own: plain Python, no model, no labels.

Run ``python examples/memory_guard.py``. The memories could come from any store (a vector
database's search, mem0's ``search`` results' texts); the guard needs only their texts, the
request and the conversation they were drawn from.
"""

from __future__ import annotations

from cmi_inspect import MemoryGuard, Session

HISTORY = [
    Session(
        "10:00 am on 3 March, 2022", [("Priya", "We adopted a greyhound today! His name is Comet.")]
    ),
    Session("9:00 am on 1 June, 2022", [("Priya", "Green tea again for me."), ("Sam", "Always.")]),
]
RETRIEVED = {
    "note-17": "Priya adopted the greyhound Comet on 3 March 2022.",
    "note-42": "Priya adopted the greyhound Comet on 9 May 2023.",  # planted: the date is wrong
    "note-08": "Priya drinks green tea.",
}


def main() -> list[str]:
    """Print each verdict and return the keys the guard keeps."""
    verdicts = MemoryGuard().check("When did Priya adopt Comet?", RETRIEVED, HISTORY)
    for v in verdicts:
        print(
            f"{v.key}: {'kept' if v.kept else 'dropped'} (support {v.support:.2f}) {v.reason or ''}"
        )
    return [v.key for v in verdicts if v.kept]


if __name__ == "__main__":
    main()
