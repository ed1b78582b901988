"""Benchmark: what ``cmi-inspect run`` costs, strategy by strategy, from a cold cache.

Runs the seven strategies with an empty model-call cache (``cmi-inspect run``'s default
settings), then CMI's ablations on top of it, into a temporary log directory, and
prints per run: wall-clock, model calls, calls answered from the cache, and prompt
tokens; then the totals. ``--no-cache`` runs both passes without the cache, for the
comparison.

``--parallel auto,1`` runs the seven strategies once per value of ``-M parallel``, each
from a cold cache of its own, then prints the floor of the first: its distinct-prefix
prompt tokens at the measured prompt speed plus its completion tokens at the measured
decode speed of as many sequences as it has slots in one batch (every row batched, exact
or not: no batching beats it), and each pass's wall-clock against it.

    python benchmarks/run_speed.py                 # the 87 examples, embedded model
    python benchmarks/run_speed.py --limit 10 --model fixed_latency/0.1
    python benchmarks/run_speed.py --keep-logs logs/run-speed   # keep the logs to compare
    python benchmarks/run_speed.py --parallel 4,1 --no-ablations --keep-logs logs/speed22
    python benchmarks/run_speed.py --parallel auto,1 --no-ablations --keep-logs logs/speed38
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
from inspect_ai.model import get_model
from prefix_floor import trie_size

from cmi_inspect.causal_locomo.strategies import STRATEGIES
from cmi_inspect.local_model import GGUFModel, as_chat, reuse_totals
from cmi_inspect.local_model.sequences import Sequences
from cmi_inspect.report.runs import strategy_label
from cmi_inspect.report.sample_cost import cache_hits, model_calls, strategy_calls, token_usage
from cmi_inspect.run import run_all
from cmi_inspect.run_spec import RunSpec

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


def timed_pass(
    log_dir: str, ablations: bool, args: argparse.Namespace, model_args: dict[str, str]
) -> float:
    """Seconds for one ``run_all``: the seven strategies, or CMI and its ablations."""
    start = time.perf_counter()
    spec = RunSpec(
        log_dir=log_dir,
        strategies=["cmi"] if ablations else list(STRATEGIES),
        ablations=ablations,
        model=args.model,
        limit=args.limit,
        cache=args.cache,
        model_args=model_args,
    )
    left = run_all(spec)
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


def speeds(api: GGUFModel, n: int, prompt_length: int, steps: int = 64) -> tuple[float, float]:
    """Prompt tokens a second (one ``prompt_length``-token prompt, decoded as every prompt
    is) and reply tokens a second with ``n`` sequences decoded in one batch, measured on
    a multi-sequence context of the model (``sequences.Sequences``)."""
    llm = api.engine.llm
    sequences = Sequences(llm, n, api.engine_config.n_ctx)
    try:
        words = llm.tokenize(" ".join(["memory"] * (prompt_length + 8)))
        start = time.perf_counter()
        nexts = [sequences.prompt(seq, words[seq : seq + prompt_length], 0) for seq in range(n)]
        prompt_speed = n * prompt_length / (time.perf_counter() - start)
        start = time.perf_counter()
        for step in range(steps):
            nexts = sequences.step([(seq, nexts[seq], prompt_length + step) for seq in range(n)])
        return prompt_speed, n * steps / (time.perf_counter() - start)
    finally:
        sequences.close()


def floor(log_dir: str, model: str, option: str) -> tuple[float, str]:
    """Seconds no prefix reuse and batching can beat for the logged run (``-M parallel=``
    ``option``), and how they add up."""
    api = get_model(model, memoize=False, prefix_cache_mb=0, parallel=option).api
    assert isinstance(api, GGUFModel)
    parallel = api.engine_config.parallel
    prompts: list[list[int]] = []
    replies = 0
    for info in list_eval_logs(log_dir):
        log = read_eval_log(info.name, resolve_attachments=True)
        for sample in log.samples or []:
            for event in strategy_calls(sample):
                if event.cache != "read":
                    prompts.append(api.engine.prompt_ids(as_chat(event.input)))
                    replies += event.output.usage.output_tokens if event.output.usage else 0
    distinct = trie_size(prompts)
    mean_length = round(sum(map(len, prompts)) / max(1, len(prompts)))
    prompt_speed, decode_speed = speeds(api, parallel, mean_length)
    seconds = distinct / prompt_speed + replies / decode_speed
    how = (
        f"{distinct} distinct-prefix prompt tokens at {prompt_speed:.0f}/s (a {mean_length}-token "
        f"prompt, the mean) + {replies} reply tokens at {decode_speed:.0f}/s ({parallel} "
        f"sequence(s) a batch) = {seconds:.0f} s"
    )
    return seconds, how


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
    parser.add_argument(
        "-M", dest="model_args", action="append", default=[], metavar="K=V", help="model argument"
    )
    parser.add_argument(
        "--parallel", help="comma-separated -M parallel values, one pass each (e.g. auto,1)"
    )
    parser.add_argument("--no-ablations", dest="ablations", action="store_false")
    args = parser.parse_args()
    model_args = dict(pair.split("=", 1) for pair in args.model_args)
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(args.keep_logs or tmp)
        if args.parallel:
            passes = args.parallel.split(",")
            seconds: dict[str, float] = {}
            for n in passes:
                os.environ["INSPECT_CACHE_DIR"] = str(Path(tmp) / f"cache-{n}")  # cold, each
                folder = str(logs / f"parallel-{n}" / "strategies")
                seconds[n] = timed_pass(folder, False, args, {**model_args, "parallel": n})
                print_rows(f"seven strategies, -M parallel={n}", seconds[n], rows(folder))
            first = passes[0]
            bound, how = floor(str(logs / f"parallel-{first}" / "strategies"), args.model, first)
            print(f"\nfloor of parallel={first}: {how}")
            for n in passes:
                print(
                    f"parallel={n}: {seconds[n]:.0f} s, {seconds[n] / bound:.2f}x the floor, "
                    f"{seconds[n] / seconds[passes[-1]]:.2f} of parallel={passes[-1]}"
                )
            return
        os.environ["INSPECT_CACHE_DIR"] = str(Path(tmp) / "cache")  # a cold cache
        strategies = timed_pass(str(logs / "strategies"), False, args, model_args)
        print_rows("seven strategies", strategies, rows(str(logs / "strategies")))
        if args.ablations:
            ablations = timed_pass(str(logs / "ablations"), True, args, model_args)
            table = [r for r in rows(str(logs / "ablations")) if r["run"] != "cmi"]
            print_rows("CMI's ablations on top", ablations, table)


if __name__ == "__main__":
    main()
