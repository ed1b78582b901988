"""Harm measured on a model: does a confirmed confuser change the answer?

For every confuser of a v5 example the model answers three times, with the answer prompt
every strategy uses (``prompts.memory_prompt``): from the example's useful turns, from those
turns and the confuser, and from the confuser alone. A confuser is **effective** for that
model when adding it flips the answer: a credited answer (the task's answer rule, or an
alias) is no longer credited, or the answer takes up the confuser's own answer (the answer
of the question it is evidence for) that it did not give before. Otherwise it is **inert**.
The result is a model-specific file of ids and booleans (``harm_path``), which the audit and
the report read; it holds no text.

    python -m cmi_inspect.causal_locomo.xl.harm [--model gguf/smollm2] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, Model, get_model

from cmi_inspect.causal_locomo.answer_rules import answer_rule
from cmi_inspect.causal_locomo.data import ExampleRecord, ScoringCriteria
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import memory_prompt
from cmi_inspect.causal_locomo.view import Memory, said
from cmi_inspect.causal_locomo.xl.confusers import stems

HARM_DIR = Path(__file__).with_name("harm")
"""One file per model: ``harm/<model name, slashes as ->.json``."""
ANSWER_TOKENS = 48


def harm_path(model: str) -> Path:
    return HARM_DIR / (re.sub(r"[^A-Za-z0-9_.-]+", "-", model) + ".json")


def credited(answer: str, criteria: ScoringCriteria) -> bool:
    """The task's answer rule credits it, or it holds an alias."""
    text = answer.lower()
    aliases = [a for a in criteria.answer_aliases if a]
    return answer_rule(criteria).credits(answer, criteria) or any(
        a.lower() in text for a in aliases
    )


def takes_up(answer: str, value: str) -> bool:
    """The answer holds ``value`` or at least half of its content words."""
    if value.lower() in answer.lower():
        return True
    words = stems(value)
    return bool(words) and 2 * len(words & stems(answer)) >= len(words)


def _line(record: ExampleRecord, memory_id: str) -> str:
    memory = next(m for m in record.memory_bank if m.memory_id == memory_id)
    return Memory("m", memory.content, memory.timestamp, said=said(memory)).line()


async def _answer(model: Model, request: str, lines: list[str]) -> str:
    output = await model.generate(
        memory_prompt(request, lines),
        config=GenerateConfig(temperature=0.0, max_tokens=ANSWER_TOKENS),
    )
    return output.completion


async def measure(records: list[ExampleRecord], model: Model) -> dict[str, Any]:
    """Each confuser's three answers' verdicts, by example id and memory id."""
    out: dict[str, Any] = {}
    for record in records:
        meta = (record.model_extra or {}).get("metadata", {})
        confusers = meta.get("confusers", [])
        if not confusers:
            continue
        criteria = record.scoring_criteria
        request = record.current_task.instruction
        useful = [_line(record, m) for m in meta["useful"]]
        base = await _answer(model, request, useful)
        rows = {}
        for memory_id in confusers:
            wrong = meta["confuser_answers"].get(memory_id)
            line = _line(record, memory_id)
            added = await _answer(model, request, [*useful, line])
            alone = await _answer(model, request, [line])
            flips = (credited(base, criteria) and not credited(added, criteria)) or (
                wrong is not None and takes_up(added, wrong) and not takes_up(base, wrong)
            )
            rows[memory_id] = {
                "useful_credited": credited(base, criteria),
                "with_confuser_credited": credited(added, criteria),
                "alone_credited": credited(alone, criteria),
                "alone_takes_up": bool(wrong and takes_up(alone, wrong)),
                "effective": bool(flips),
            }
        out[record.example_id] = rows
    return out


def main(argv: list[str] | None = None) -> None:
    from cmi_inspect.causal_locomo.xl.assemble import xl_path

    parser = argparse.ArgumentParser(prog="python -m cmi_inspect.causal_locomo.xl.harm")
    parser.add_argument("--model", default="gguf/smollm2")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args(argv)
    records = [r for r in load_records(xl_path()) if r.model_extra]
    result = asyncio.run(measure(records[: args.limit], get_model(args.model)))
    rows = [row for example in result.values() for row in example.values()]
    summary = {
        "model": args.model,
        "confusers": len(rows),
        "effective": sum(r["effective"] for r in rows),
        "inert": sum(not r["effective"] for r in rows),
    }
    path = harm_path(args.model)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({**summary, "examples": result}, indent=1, sort_keys=True) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
