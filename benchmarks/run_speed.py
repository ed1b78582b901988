"""Benchmark: what ``cmi-inspect run`` costs, strategy by strategy, from a cold cache.

Runs the seven strategies with an empty model-call cache (``cmi-inspect run``'s default
settings), then CMI's ablations on top of it, into a temporary log directory, and
prints per run: wall-clock, model calls, calls answered from the cache, and prompt
tokens; then the totals. ``--no-cache`` runs both passes without the cache, for the
comparison.

    python benchmarks/run_speed.py                 # the 87 examples, embedded model
    python benchmarks/run_speed.py --limit 10 --model fixed_latency/0.1
    python benchmarks/run_speed.py --keep-logs logs/run-speed   # keep the logs to compare
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

from inspect_ai.hooks import Hooks, TaskEnd, TaskStart, hooks
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from cmi_inspect.local_model import reuse_totals
from cmi_inspect.report.runs import cache_hits, model_calls, strategy_label, token_usage
from cmi_inspect.run import run_all
from cmi_inspect.strategies import STRATEGIES

EVALUATED: dict[str, int] = {}
"""Prompt tokens the local engines evaluated during each task, by eval id."""


@hooks(name="run_speed_evaluated_tokens", description="Prompt tokens evaluated per task")
class EvaluatedTokens(Hooks):
    """Reads the local engines' counters at each task's start and end (tasks run one at a time)."""

    def __init__(self) -> None:
        self.at_start: dict[str, int] = {}

    async def on_task_start(self, data: TaskStart) -> None:
        self.at_start[data.eval_id] = reuse_totals().evaluated_tokens

    async def on_task_end(self, data: TaskEnd) -> None:
        start = self.at_start.pop(data.eval_id, 0)
        EVALUATED[data.eval_id] = reuse_totals().evaluated_tokens - start


def wall_clock(log: EvalLog) -> float:
    started, completed = log.stats.started_at, log.stats.completed_at
    if not (started and completed):
        return float("nan")
    return (datetime.fromisoformat(completed) - datetime.fromisoformat(started)).total_seconds()


def rows(log_dir: str) -> list[dict[str, float | str]]:
    out: list[dict[str, float | str]] = []
    for info in list_eval_logs(log_dir):
        log = read_eval_log(info.name)
        samples = log.samples or []
        out.append(
            {
                "run": strategy_label(log),
                "seconds": wall_clock(log),
                "calls": sum(model_calls(s) for s in samples),
                "cached": sum(cache_hits(s) for s in samples),
                "input_tokens": sum(token_usage(s)[0] for s in samples),
                "evaluated": EVALUATED.get(log.eval.eval_id, 0),
            }
        )
    return sorted(out, key=lambda r: -float(r["seconds"]))


def timed_pass(log_dir: str, ablations: bool, args: argparse.Namespace) -> float:
    """Seconds for one ``run_all``: the seven strategies, or CMI and its ablations."""
    start = time.perf_counter()
    left = run_all(
        log_dir,
        strategies=["cmi"] if ablations else list(STRATEGIES),
        ablations=ablations,
        model=args.model,
        limit=args.limit,
        cache=args.cache,
    )
    if left:
        raise SystemExit(f"runs in {log_dir} did not succeed: {'; '.join(left)}")
    return time.perf_counter() - start


def print_rows(title: str, total: float, table: list[dict[str, float | str]]) -> None:
    print(f"\n{title}: {total / 60:.1f} min wall-clock in all")
    print("| run | wall-clock (s) | calls | cached calls | input tokens | tokens evaluated |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in table:
        print(
            f"| {r['run']} | {float(r['seconds']):.0f} | {r['calls']} | {r['cached']} "
            f"| {r['input_tokens']} | {r['evaluated']} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, help="samples per strategy (default: all 87)")
    parser.add_argument("--model", default="gguf/smollm2", help="response model")
    parser.add_argument("--no-cache", dest="cache", action="store_false")
    parser.add_argument(
        "--keep-logs", metavar="DIR", help="write the logs under DIR instead of a temporary folder"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["INSPECT_CACHE_DIR"] = str(Path(tmp) / "cache")  # a cold cache
        logs = Path(args.keep_logs or tmp)
        strategies = timed_pass(str(logs / "strategies"), False, args)
        print_rows("seven strategies", strategies, rows(str(logs / "strategies")))
        ablations = timed_pass(str(logs / "ablations"), True, args)
        table = [r for r in rows(str(logs / "ablations")) if r["run"] != "cmi"]
        print_rows("CMI's ablations on top", ablations, table)


if __name__ == "__main__":
    main()
