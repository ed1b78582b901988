"""``cmi-inspect``: run every strategy into one log directory, and report on any log directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _task_args(pairs: list[str]) -> dict[str, str]:
    args = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"-T expects name=value, got {pair!r}")
        args[key] = value
    return args


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cmi-inspect", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run all strategies with Inspect's eval-set (resumable)")
    run.add_argument("log_dir")
    run.add_argument("--model", help="response model (default: INSPECT_EVAL_MODEL, see .env)")
    run.add_argument("--limit", type=int, help="samples per strategy")
    run.add_argument("--strategies", help="comma-separated subset of the seven strategies")
    run.add_argument("--ablations", action="store_true", help="also run CMI's four ablations")
    run.add_argument("--task-file", type=Path, default=Path("tasks/causal_locomo.py"))
    run.add_argument("--max-samples", type=int, help="samples run concurrently per task")
    run.add_argument(
        "--max-tasks",
        type=int,
        default=1,
        help="strategies run concurrently (default 1, so each one's wall-clock is its own)",
    )
    run.add_argument(
        "-T",
        dest="task_args",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="task parameter, e.g. -T protocol=blind",
    )

    report = commands.add_parser("report", help="tables and figures from a log directory")
    report.add_argument("log_dir")
    report.add_argument("--out", type=Path, help="also write report.md, report.json and PNGs here")

    args = parser.parse_args(argv)
    if args.command == "run":
        from dotenv import load_dotenv

        from cmi_inspect.run import run_all
        from cmi_inspect.strategies import STRATEGIES

        load_dotenv(Path.cwd() / ".env")  # the default model, as the inspect CLI reads it

        strategies = args.strategies.split(",") if args.strategies else tuple(STRATEGIES)
        ok = run_all(
            args.log_dir,
            task_file=args.task_file,
            strategies=strategies,
            ablations=args.ablations,
            model=args.model,
            limit=args.limit,
            task_args=_task_args(args.task_args),
            max_samples=args.max_samples,
            max_tasks=args.max_tasks,
        )
        return 0 if ok else 1
    from cmi_inspect.data import DataError
    from cmi_inspect.report import build_report

    try:
        print(build_report(args.log_dir, out=args.out))
    except DataError as ex:
        print(f"cmi-inspect report: {ex}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
