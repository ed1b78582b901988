"""How often the task score credits an answer that denies or hedges the expected answer it
names, and refuses one that affirms it: measured on the labelled answers of
``datasets/fixtures/answer_readings.jsonl`` (``build_answer_readings.py``), its ``tune``,
``held_out`` and ``fresh`` parts apart, and of
``cmi_inspect/causal_locomo/annotations/answer_readings_audit.jsonl`` (issue 55: the forms
an outside audit found misread, and more of their kinds), its ``audit`` and
``audit_held_out`` parts apart, each by the answer rule its examples name. Under an
``abstains`` example (a question the conversation does not answer) an answer *affirms*
when it abstains and nothing else, and *hedges* when it offers a value beside a disclaimer.

Each answer is scored by the package's ``answer_score`` (the alias judge, no grader) under
both scorings:

- *false credit*: of the answers that deny or hedge, the share credited: under ``strict``,
  a success; under ``paper``, an alias-judge verdict of 1 (the paper's rules, 0.7 of the
  score, are containment rules that read no answer: they credit all of them alike);
- *false refusal*: of the answers that affirm, the share not credited so.

It also prints how the answers were read (``negation`` and ``hedge``: denies when negated,
else hedges when hedged, else affirms; under ``abstains``, affirms when the rule credits
the answer, else hedges) against their labels.

    python benchmarks/negation_rates.py [--file PATH ...] [--misread PART]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from cmi_inspect.causal_locomo.answer_rules import answer_rule
from cmi_inspect.causal_locomo.data import ScoringCriteria
from cmi_inspect.causal_locomo.scorers import AnswerScore, answer_score

ROOT = Path(__file__).resolve().parent.parent
FILE = ROOT / "datasets" / "fixtures" / "answer_readings.jsonl"
AUDIT_FILE = ROOT / "cmi_inspect" / "causal_locomo" / "annotations" / "answer_readings_audit.jsonl"
Reading = Literal["affirms", "denies", "hedges"]
READINGS: tuple[Reading, ...] = ("affirms", "denies", "hedges")
Part = Literal["tune", "held_out", "fresh", "audit", "audit_held_out"]
PARTS: tuple[Part, ...] = ("tune", "held_out", "fresh", "audit", "audit_held_out")


class LabelledAnswer(BaseModel, frozen=True):
    """One line of the labelled set."""

    example_id: str
    reading: Reading
    part: Part
    request: str
    answer: str
    scoring_criteria: ScoringCriteria
    gold_behavior: str


def load(*paths: Path) -> list[LabelledAnswer]:
    return [
        LabelledAnswer.model_validate_json(line)
        for path in paths
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def rule(item: LabelledAnswer) -> str:
    return item.scoring_criteria.answer_rule


def read_as(item: LabelledAnswer, scored: AnswerScore) -> Reading:
    """How the scorer read the answer: under ``abstains``, whether the rule credits it."""
    if rule(item) == "abstains":
        credited = answer_rule(item.scoring_criteria).credits(item.answer, item.scoring_criteria)
        return "affirms" if credited else "hedges"
    return "denies" if scored.negated.negated else "hedges" if scored.hedged.hedged else "affirms"


def credited(scored: AnswerScore, scoring: str) -> bool:
    return scored.success if scoring == "strict" else scored.verdict.score >= 1.0


async def score_all(items: list[LabelledAnswer]) -> dict[str, list[AnswerScore]]:
    """Each answer's score under each scoring, in the items' order."""
    return {
        scoring: [
            await answer_score(
                i.answer, i.request, i.gold_behavior, i.scoring_criteria, scoring=scoring
            )
            for i in items
        ]
        for scoring in ("paper", "strict")
    }


def rate(flags: list[bool]) -> str:
    return f"{sum(flags) / len(flags):.3f} ({sum(flags)}/{len(flags)})" if flags else "n/a"


def groups(items: list[LabelledAnswer]) -> list[tuple[Part, str]]:
    """Each part with each answer rule its answers name (``contains`` for a part with none)."""
    return [
        (part, name)
        for part in PARTS
        for name in sorted({rule(i) for i in items if i.part == part} or {"contains"}, key=_order)
    ]


def _order(name: str) -> tuple[bool, str]:
    return name != "contains", name  # the paper's rule first


def report(items: list[LabelledAnswer], scores: dict[str, list[AnswerScore]]) -> str:
    lines = [
        "| part | rule | scoring | false credit (denies) | false credit (hedges) "
        "| false refusal (affirms) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for part, name in groups(items):
        for scoring, scored in scores.items():
            by: dict[str, list[bool]] = {r: [] for r in READINGS}
            for item, s in zip(items, scored, strict=True):
                if (item.part, rule(item)) == (part, name):
                    by[item.reading].append(credited(s, scoring))
            refused = [not c for c in by["affirms"]]
            lines.append(
                f"| {part} | {name} | {scoring} | {rate(by['denies'])} | {rate(by['hedges'])} "
                f"| {rate(refused)} |"
            )
    lines += [
        "",
        "| part | rule | labelled | read as affirms | denies | hedges |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for part, name in groups(items):
        for reading in READINGS:
            read = Counter(
                read_as(item, s)
                for item, s in zip(items, scores["strict"], strict=True)
                if (item.part, rule(item), item.reading) == (part, name, reading)
            )
            lines.append(
                f"| {part} | {name} | {reading} | {read['affirms']} | {read['denies']} "
                f"| {read['hedges']} |"
            )
    return "\n".join(lines)


def misread(items: list[LabelledAnswer], scores: dict[str, list[AnswerScore]], part: str) -> str:
    """The answers of one part read otherwise than labelled (for tuning: ``tune`` only)."""
    return "\n".join(
        f"- {item.reading} read as {read_as(item, s)}: {item.answer}"
        for item, s in zip(items, scores["strict"], strict=True)
        if item.part == part and read_as(item, s) != item.reading
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, nargs="+", default=[FILE, AUDIT_FILE])
    parser.add_argument(
        "--misread", choices=PARTS, help="also list the answers of this part read otherwise"
    )
    args = parser.parse_args()
    items = load(*args.file)
    scores = asyncio.run(score_all(items))
    print(report(items, scores))
    if args.misread:
        print(f"\nMisread ({args.misread}):\n{misread(items, scores, args.misread)}")


if __name__ == "__main__":
    main()
