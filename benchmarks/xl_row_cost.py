"""Benchmark: what each row costs a sample on XL v5, at the store, as ratios in one run.

Runs each row (a strategy, its ``-S`` arguments, and ``bank_size`` when given) on the first
N examples of one conversation, blind, with the embedded model, unscored (``score=False``:
no result is computed, so it can run before a pre-registration), one row after another in
one process. Each row runs twice: its conversation's first question alone, then the other
N - 1 together (``-M parallel`` and ``max_samples`` as the run's defaults), so that what a
row makes once per conversation (a summary, reflections, a history's KV state) shows in the
first and not in the rest. It prints per row the seconds of the first question, the seconds
a sample of the rest, and that against vector memory's; issue 62's targets are CMI <= 2.0x,
full history <= 3x, summary and reflection <= 2x (after the first question), and CMI at the
store <= 1.5x CMI at ``bank_size=8``.

    CMI_DATA_DIR=../shared/data python benchmarks/xl_row_cost.py --n 6
    python benchmarks/xl_row_cost.py --rows vector_memory,cmi,cmi:bank_size=8 --n 4
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from typing import Any

from inspect_ai import eval as inspect_eval

from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.xl.assemble import xl_path

DEFAULT_ROWS = (
    "vector_memory,cmi,cmi:bank_size=8,full_history,summary_memory,reflection_memory,"
    "no_memory,graph_memory,context_cite,leave_one_in"
)


def parse_row(text: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """``name[:arg=value,...]``: the strategy, its -S arguments, its task arguments."""
    name, _, rest = text.partition(":")
    args: dict[str, Any] = {}
    task: dict[str, Any] = {}
    for pair in filter(None, rest.split(";")):
        key, _, value = pair.partition("=")
        parsed = json.loads(value) if value[:1].isdigit() or value in ("true", "false") else value
        (task if key == "bank_size" else args)[key] = parsed
    return name, args, task


def first_examples(conversation: str, n: int) -> list[str]:
    """The first ``n`` example ids of the conversation, in the data file's order."""
    ids = [r.example_id for r in load_records(xl_path()) if r.model_extra]
    return [i for i in ids if i.startswith(f"{conversation}_")][:n]


def timed(row: str, ids: list[str], log_dir: str) -> float:
    name, args, task_args = parse_row(row)
    task = causal_locomo(dataset="xl", protocol="blind", strategy=name, strategy_args=args,
                         **task_args)  # fmt: skip
    start = time.perf_counter()
    [log] = inspect_eval(task, model="gguf/smollm2", sample_id=ids, score=False,
                         log_dir=log_dir, display="none")  # fmt: skip
    seconds = time.perf_counter() - start
    if log.status != "success":
        raise SystemExit(f"{row}: the run ended {log.status} ({log.error})")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=DEFAULT_ROWS, help="rows, comma-separated "
                        "(name:arg=value;arg=value)")  # fmt: skip
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--n", type=int, default=6, help="examples of the conversation")
    args = parser.parse_args()
    ids = first_examples(args.conversation, args.n)
    print(f"{len(ids)} examples of {args.conversation}: {', '.join(ids)}")
    results: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as log_dir:
        timed("no_memory", ids[:1], log_dir)  # the model loaded before any row is timed
        for row in args.rows.split(","):
            first = timed(row, ids[:1], log_dir)
            rest = timed(row, ids[1:], log_dir) / max(len(ids) - 1, 1)
            results[row] = (first, rest)
            print(f"{row}: first question {first:.1f} s, then {rest:.1f} s a sample", flush=True)
    base = results.get("vector_memory", (float("nan"), float("nan")))[1]
    print("\n| row | first question (s) | a later sample (s) | x vector memory |")
    print("| --- | --- | --- | --- |")
    for row, (first, rest) in results.items():
        print(f"| {row} | {first:.1f} | {rest:.1f} | {rest / base:.2f} |")


if __name__ == "__main__":
    main()
