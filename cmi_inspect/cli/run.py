"""``cmi-inspect run``: every strategy into one log folder with Inspect's eval_set (resumable)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cmi_inspect.errors import UserError, name_value_pairs, positive_int, sample_limit
from cmi_inspect.rows import DEFAULT_FAIL_ON_ERROR, DEFAULT_RETRY_ON_ERROR

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
    parser.add_argument(
        "--plan",
        type=Path,
        metavar="FILE",
        help="run a written plan's rows instead (docs/results/xl5-plan.json): each into a "
        "folder of its own, on the plan's examples, with its task arguments",
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
    passed_through(parser)


LOG_LEVELS = ("debug", "trace", "http", "info", "warning", "error", "critical", "notset")
DISPLAYS = ("full", "conversation", "rich", "plain", "log", "none")


def passed_through(parser: argparse.ArgumentParser) -> None:
    """Options ``inspect eval`` takes that reach every run as they are (``inspect_options``)."""
    group = parser.add_argument_group("passed to Inspect as inspect eval takes them")
    group.add_argument("--sample-id", help="comma-separated sample ids to run (and no others)")
    group.add_argument(
        "--fail-on-error",
        help=f"a run fails once this share (below 1) or number of its samples have failed "
        f"(default {DEFAULT_FAIL_ON_ERROR})",
    )
    group.add_argument(
        "--no-fail-on-error",
        dest="fail_on_error",
        action="store_const",
        const="never",
        help="a run never fails for failed samples (they are logged)",
    )
    group.add_argument(
        "--retry-on-error",
        help=f"times a failed sample is retried (default {DEFAULT_RETRY_ON_ERROR})",
    )
    group.add_argument("--token-limit", help="tokens a sample may use (default: no limit)")
    group.add_argument("--log-level", choices=LOG_LEVELS, help="Inspect's console log level")
    group.add_argument("--log-format", choices=("eval", "json"), help="the logs' file format")
    group.add_argument("--display", choices=DISPLAYS, help="how Inspect shows the run")


def inspect_options(args: argparse.Namespace) -> dict[str, Any]:
    """The passed-through options given, by ``eval_set``'s names, each checked (one line)."""
    options: dict[str, Any] = {
        "log_level": args.log_level,
        "log_format": args.log_format,
        "display": args.display,
    }
    if args.sample_id is not None:
        ids = [i.strip() for i in args.sample_id.split(",") if i.strip()]
        if not ids:
            raise UserError("--sample-id names no sample: give ids, comma-separated.")
        options["sample_id"] = ids
    if args.fail_on_error is not None:
        options["fail_on_error"] = failure_threshold(args.fail_on_error)
    if args.retry_on_error is not None:
        options["retry_on_error"] = positive_int("--retry-on-error", args.retry_on_error, 0)
    if args.token_limit is not None:
        options["token_limit"] = positive_int("--token-limit", args.token_limit)
    return {name: value for name, value in options.items() if value is not None}


def failure_threshold(text: str) -> float | int | bool:
    """``--fail-on-error``: a share of samples below 1, a number from 1, or never (False)."""
    if text == "never":
        return False
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value or (value >= 1 and not value.is_integer()):
        raise UserError(
            f"--fail-on-error must be a share of samples between 0 and 1 or a whole number of "
            f"samples, got {text!r}."
        )
    return value if value < 1 else int(value)


PLAN_REFUSES = ("strategies", "ablations", "guard", "limit", "task_args", "serve", "isolate",
                "sample_id", "epochs", "time_limit", "model_roles")  # fmt: skip
"""Options a plan fixes itself (its rows, examples and task arguments) or does not take."""


def planned(args: argparse.Namespace) -> list[str]:
    """``--plan``: the plan's rows, refusing in one line any option the plan fixes."""
    from cmi_inspect.plan import run_plan

    given = [name for name in PLAN_REFUSES if getattr(args, name, None) not in (None, False, [])]
    if given:
        flag = "-T" if given[0] == "task_args" else "--" + given[0].replace("_", "-")
        raise UserError(f"{flag} cannot go with --plan: the plan fixes its rows and examples.")
    return run_plan(
        args.log_dir, args.plan, model=args.model,
        model_args=name_value_pairs("-M", args.model_args), cache=args.cache,
        max_samples=args.max_samples, timeout=args.timeout, max_retries=args.max_retries,
        inspect_options=inspect_options(args),
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from dotenv import load_dotenv

    from cmi_inspect.causal_locomo.strategies import STRATEGIES
    from cmi_inspect.run import run_all
    from cmi_inspect.run_spec import RunSpec

    load_dotenv(Path.cwd() / ".env")  # the default model, as the inspect CLI reads it
    if args.plan is not None:
        left = planned(args)
    else:
        spec = RunSpec(
            log_dir=args.log_dir,
            strategies=args.strategies.split(",") if args.strategies else list(STRATEGIES),
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
            inspect_options=inspect_options(args),
        )
        left = run_all(spec)
    if left:
        print(
            f"cmi-inspect run: {len(left)} run(s) did not finish: {'; '.join(left)}. "
            "Run the same command again to resume them (finished samples are kept).",
            file=sys.stderr,
        )
        return 1
    print(f"cmi-inspect run: every run finished; their logs are in {args.log_dir}.")
    return 0
