"""``cmi-inspect run``: every strategy into one log folder with Inspect's eval_set (resumable)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cmi_inspect.errors import name_value_pairs, sample_limit

DEFAULT_TIMEOUT = 300
"""Seconds per model request: a slow local call fits, an unreachable endpoint does not hang."""
DEFAULT_RETRIES = 3

NAME = "run"
HELP = "run all strategies with Inspect's eval-set (resumable)"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_dir")
    parser.add_argument("--model", help="response model (default: INSPECT_EVAL_MODEL, see .env)")
    parser.add_argument("--limit", help="samples per strategy: N, or a range FIRST-LAST (301-1176)")
    parser.add_argument(
        "--strategies",
        help="comma-separated strategies: built-in ones (default: all seven) or installed ones",
    )
    parser.add_argument(
        "--ablations",
        action="store_true",
        help="also run CMI's ablations (under -T protocol=blind, the five that read no label)",
    )
    parser.add_argument(
        "--guard",
        action="store_true",
        help="also run each strategy with -S guard=evidence (its row: STRATEGY + guard)",
    )
    parser.add_argument("--max-samples", type=int, help="samples run concurrently per task")
    parser.add_argument(
        "--max-tasks",
        type=int,
        default=1,
        help="strategies run concurrently (default 1, so each one's wall-clock is its own)",
    )
    parser.add_argument(
        "-T",
        dest="task_args",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="task parameter, e.g. -T protocol=blind",
    )

    parser.add_argument(
        "-M",
        dest="model_args",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="model argument, e.g. -M n_ctx=8192 or -M extra_bufts=off",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=DEFAULT_TIMEOUT,
        help=f"seconds before a model request is abandoned (default {DEFAULT_TIMEOUT})",
    )
    parser.add_argument(
        "--time-limit",
        type=int,
        metavar="SECONDS",
        help="wall-clock seconds a sample may run, waits for the model included (default: no "
        "limit); one that runs longer stops and is scored with what it had",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_RETRIES,
        help=f"retries of a failed model request (default {DEFAULT_RETRIES})",
    )

    parser.add_argument(
        "--max-connections",
        type=int,
        help="concurrent requests to the model (default: the provider's; raise it for a "
        "server that batches, such as vLLM)",
    )
    parser.add_argument(
        "--serve",
        type=int,
        metavar="N",
        help="serve the embedded model in a process of its own with N slots for the run "
        "(its -M arguments go to the server)",
    )
    parser.add_argument(
        "--model-role",
        dest="model_roles",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help="a model role, as inspect eval takes it (grader=openai/gpt-5: the judge)",
    )
    parser.add_argument("--epochs", type=int, help="epochs of each sample (default 1)")
    parser.add_argument("--tags", help="comma-separated tags for every run's log")
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="run installed strategies' select in a sandbox (bubblewrap or unshare) that "
        "cannot read the data, the caches or the logs",
    )
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="send every model call (by default answers already computed are reused)",
    )


def run(args: argparse.Namespace) -> int:
    from dotenv import load_dotenv

    from cmi_inspect.run import run_all
    from cmi_inspect.strategies import STRATEGIES

    load_dotenv(Path.cwd() / ".env")  # the default model, as the inspect CLI reads it
    strategies = args.strategies.split(",") if args.strategies else tuple(STRATEGIES)
    left = run_all(
        args.log_dir,
        strategies=strategies,
        ablations=args.ablations,
        guard=args.guard,
        model=args.model,
        limit=sample_limit("--limit", args.limit),
        task_args=name_value_pairs("-T", args.task_args),
        model_args=name_value_pairs("-M", args.model_args),
        max_samples=args.max_samples,
        max_tasks=args.max_tasks,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache=args.cache,
        max_connections=args.max_connections,
        serve=args.serve,
        isolate=args.isolate,
        model_roles=name_value_pairs("--model-role", args.model_roles),
        epochs=args.epochs,
        tags=[t.strip() for t in (args.tags or "").split(",") if t.strip()],
        time_limit=args.time_limit,
    )
    if left:
        print(
            f"cmi-inspect run: {len(left)} run(s) did not finish: {'; '.join(left)}. "
            "Run the same command again to resume them (finished samples are kept).",
            file=sys.stderr,
        )
        return 1
    print(f"cmi-inspect run: every run finished; their logs are in {args.log_dir}.")
    return 0
