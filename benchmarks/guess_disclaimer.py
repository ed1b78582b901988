"""How often a guess offered beside a disclaimer is scored a success, per task family, on
XL's examples (issue 55: "X, though the conversation does not say for sure" must succeed
on neither answerable nor unanswerable questions, at most 2% of each family). Also the mean
score of an abstention against a wrong answer on the answerable examples.

Each answer is scored by the package's ``answer_score`` with no grader (the offline alias
judge) under ``paper`` and ``strict``. The guess is the gold answer on an answerable example
(the case that can farm credit) and the adversarial answer, else another example's answer,
on an unanswerable one.

    python benchmarks/guess_disclaimer.py
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict

from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import dataset_path
from cmi_inspect.causal_locomo.scorers import answer_score

FORMS = (
    "{x}, though the conversation does not say for sure.",
    "Probably {x}; it is not mentioned explicitly.",
    "{x}, but that isn't stated.",
    "I'd guess {x}, but the memories don't say.",
)
"""A guess beside a disclaimer, in the wordings the audit and scoring.md name."""
ABSTAIN = "The conversation does not say."


def _guess(record: ExampleRecord, other: str) -> str:
    criteria = record.scoring_criteria
    if criteria.answer_rule == "abstains":
        return criteria.adversarial_answer or other
    return criteria.expected_answer


async def rates(records: list[ExampleRecord], scoring: str) -> dict[str, tuple[int, int]]:
    """Family -> (guess-plus-disclaimer answers scored a success, answers)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, record in enumerate(records):
        other = records[(i + 1) % len(records)].scoring_criteria.expected_answer
        for form in FORMS:
            scored = await answer_score(
                form.format(x=_guess(record, other)),
                record.current_task.instruction,
                record.gold_behavior,
                record.scoring_criteria,
                scoring,
            )
            counts[record.task_family][0] += scored.success
            counts[record.task_family][1] += 1
    return {family: (c[0], c[1]) for family, c in sorted(counts.items())}


def wrong_answer(answerable: list[ExampleRecord], i: int) -> str:
    """A wrong answer of the kind example ``i`` asks for: the answer of the next example of
    its family (a date for a temporal question), else of the next example."""
    n = len(answerable)
    later = [answerable[(i + d) % n] for d in range(1, n)] or [answerable[i]]
    same = [r for r in later if r.task_family == answerable[i].task_family]
    return (same or later)[0].scoring_criteria.expected_answer


async def abstain_vs_wrong(records: list[ExampleRecord], scoring: str) -> tuple[float, float]:
    """Mean score, on answerable examples, of abstaining and of a wrong answer of the kind
    asked (``wrong_answer``)."""
    answerable = [r for r in records if r.scoring_criteria.answer_rule != "abstains"]
    abstain = wrong = 0.0
    for i, record in enumerate(answerable):
        other = wrong_answer(answerable, i)
        args = (record.current_task.instruction, record.gold_behavior, record.scoring_criteria)
        abstain += (await answer_score(ABSTAIN, *args, scoring)).total
        wrong += (await answer_score(other, *args, scoring)).total
    return abstain / len(answerable), wrong / len(answerable)


async def report() -> str:
    records = load_records(dataset_path("xl"))
    lines = [
        f"XL, {len(records)} examples, {len(FORMS)} wordings each",
        "",
        "| scoring | family | guess + disclaimer scored a success |",
        "|---|---|---|",
    ]
    for scoring in ("paper", "strict"):
        for family, (won, n) in (await rates(records, scoring)).items():
            lines.append(f"| {scoring} | {family} | {won}/{n} ({won / n:.3f}) |")
    head = "| scoring | abstain, mean score | a wrong answer of its family |"
    lines += ["", head, "|---|---|---|"]
    for scoring in ("paper", "strict"):
        abstain, wrong = await abstain_vs_wrong(records, scoring)
        lines.append(f"| {scoring} | {abstain:.3f} | {wrong:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    print(asyncio.run(report()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
