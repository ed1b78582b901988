"""A seeded sample of XL v4's false values, for a person to read.

For every answerable LoCoMo question (categories 1-4) whose evidence turn states its answer
word for word (``v3.slots.find_slot``, a word value, not a date), the sentence of the turn
that holds the value is said again with the value made false by ``v4.values.false_value``
(avoiding every answer of the conversation, as the builder does). Prints how many slots
there are, how many have a type and how many a false value, then ``--n`` triples drawn
with ``--seed``: the question, the evidence sentence, and the sentence with the false value
(its type in brackets). No model is called.

    python benchmarks/false_values_sample.py [--n 40] [--seed 0] [--no-sentence]
        [--locomo FILE]
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

from cmi_inspect.xl.locomo import example_contexts, load_locomo, locomo_path
from cmi_inspect.xl.phrasing import statements
from cmi_inspect.xl.v3.slots import find_slot
from cmi_inspect.xl.v4.values import ValuePool, false_value, value_type


@dataclass(frozen=True)
class Triple:
    """A question, the evidence sentence that states its value, and that sentence false."""

    example_id: str
    question: str
    kind: str
    true: str
    false: str | None


def _sentence(text: str, value: str) -> str | None:
    """The sentence of a turn's statements that holds the value, as its words stand."""
    sentences = re.split(r"(?<=[.!?])\s+", statements(text))
    return next((s for s in sentences if _find(s, value)), None)


def _find(text: str, value: str) -> re.Match[str] | None:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE)


def triples(locomo: Path, with_sentence: bool) -> list[Triple]:
    """Every word slot of LoCoMo's answerable questions, with its false sentence (None
    where the slot has no false value)."""
    convs = load_locomo(locomo)
    pool = ValuePool.from_conversations(convs)
    found = []
    for conv in convs:
        avoid = sorted({str(item.get("answer", "")) for item in conv.qa} - {""})
        for example_id, ctx, _ in example_contexts(conv):
            if ctx is None:
                continue
            slot = next(
                (s for t in ctx.evidence if (s := find_slot(replace(ctx, evidence=[t])))), None
            )
            sentence = _sentence(slot.turn.text, slot.value) if slot and not slot.dated else None
            if slot is None or sentence is None:
                continue
            kind = value_type(ctx.question, ctx.answer, slot.value)
            fake = false_value(pool, ctx.question, ctx.answer, slot.value,
                               random.Random(example_id), avoid,
                               sentence=sentence if with_sentence else None)  # fmt: skip
            false = None
            if fake is not None:
                place = _find(sentence, slot.value)
                assert place is not None
                false = f"{sentence[: place.start()]}{fake}{sentence[place.end() :]}"
            found.append(Triple(example_id, ctx.question, kind, sentence, false))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-sentence", action="store_true", help="leave the sentence out, as plan.py does"
    )
    parser.add_argument("--locomo", type=Path, default=None)
    args = parser.parse_args()
    every = triples(args.locomo or locomo_path(), not args.no_sentence)
    typed = [t for t in every if t.kind != "other"]
    made = [t for t in typed if t.false is not None]
    share = f"{len(made)} ({len(made) / len(typed):.1%} of the typed)"
    print(f"word slots {len(every)}, typed {len(typed)} ({len(typed) / len(every):.1%}),")
    print(f"with a false value {share}\n")
    for i, t in enumerate(random.Random(args.seed).sample(made, min(args.n, len(made))), 1):
        print(f"{i}. [{t.kind}] {t.question}\n   true:  {t.true}\n   false: {t.false}\n")


if __name__ == "__main__":
    main()
