"""``cmi-inspect``: run every strategy into one log directory, report on it, audit a data
set's label artefacts, and build Causal-LoCoMo-XL."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from cmi_inspect.errors import UserError

DEFAULT_TIMEOUT = 300
"""Seconds per model request: a slow local call fits, an unreachable endpoint does not hang."""
DEFAULT_RETRIES = 3


def _pairs(flag: str, pairs: list[str]) -> dict[str, str]:
    """``-T`` / ``-M`` arguments as a dict, one line for one without ``=``."""
    args = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise UserError(f"{flag} expects name=value, got {pair!r}")
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

    run.add_argument(
        "-M",
        dest="model_args",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="model argument, e.g. -M n_ctx=8192 or -M extra_bufts=off",
    )
    run.add_argument(
        "--timeout",
        type=int,
        default=DEFAULT_TIMEOUT,
        help=f"seconds before a model request is abandoned (default {DEFAULT_TIMEOUT})",
    )
    run.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_RETRIES,
        help=f"retries of a failed model request (default {DEFAULT_RETRIES})",
    )

    run.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="send every model call (by default answers already computed are reused)",
    )

    report = commands.add_parser("report", help="tables and figures from a log directory")
    report.add_argument("log_dir")
    report.add_argument("--out", type=Path, help="also write report.md, report.json and PNGs here")

    audit = commands.add_parser("audit", help="how well surface artefacts give labels away")
    audit.add_argument("--dataset", default="release", help="release (default) or xl")
    audit.add_argument("--data-file", help="a JSONL file in the release's schema instead")
    audit.add_argument("--protocol", default="blind", help="the view: blind (default) or paper")
    audit.add_argument("--json", action="store_true", help="print the AUCs as one JSON object")

    build = commands.add_parser("build-xl", help="build Causal-LoCoMo-XL from LoCoMo")
    build.add_argument("out_dir", type=Path)

    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UserError as ex:
        print(f"cmi-inspect {args.command}: {ex}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"cmi-inspect {args.command}: interrupted; run the same command again to "
              "resume (finished samples are kept).", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    from dotenv import load_dotenv

    from cmi_inspect.run import run_all
    from cmi_inspect.strategies import STRATEGIES

    load_dotenv(Path.cwd() / ".env")  # the default model, as the inspect CLI reads it
    strategies = args.strategies.split(",") if args.strategies else tuple(STRATEGIES)
    left = run_all(
        args.log_dir,
        strategies=strategies,
        ablations=args.ablations,
        model=args.model,
        limit=args.limit,
        task_args=_pairs("-T", args.task_args),
        model_args=_pairs("-M", args.model_args),
        max_samples=args.max_samples,
        max_tasks=args.max_tasks,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache=args.cache,
    )
    if left:
        print(
            f"cmi-inspect run: {len(left)} run(s) did not finish: {'; '.join(left)}. "
            "Run the same command again to resume them (finished samples are kept).",
            file=sys.stderr,
        )
        return 1
    return 0


def _report(args: argparse.Namespace) -> int:
    from cmi_inspect.report import build_report

    if not Path(args.log_dir).is_dir():
        what = "is a file, not a log folder" if Path(args.log_dir).exists() else "does not exist"
        raise UserError(f"{args.log_dir} {what}: name the folder a run wrote its logs to.")
    print(build_report(args.log_dir, out=args.out))
    return 0


def _audit(args: argparse.Namespace) -> int:
    from cmi_inspect.audit import audit, audit_items, format_audit
    from cmi_inspect.data import load_records
    from cmi_inspect.dataset import dataset_path
    from cmi_inspect.errors import choose
    from cmi_inspect.view import PROTOCOLS

    protocol = next(p for p in PROTOCOLS if p == choose("protocol", args.protocol, PROTOCOLS))
    path = Path(args.data_file) if args.data_file else dataset_path(args.dataset)
    result = audit(audit_items(load_records(path), protocol))
    title = f"{path.name}, {protocol} view"
    print(json.dumps(result) if args.json else format_audit(result, title))
    return 0


def _build_xl(args: argparse.Namespace) -> int:
    from cmi_inspect.paths import writable_dir
    from cmi_inspect.xl import build_xl, locomo_path

    writable_dir(args.out_dir, "XL build")  # before the build, not after it
    manifest = build_xl(locomo_path(), args.out_dir)
    print(json.dumps(manifest, indent=2))
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": _run,
    "report": _report,
    "audit": _audit,
    "build-xl": _build_xl,
}


if __name__ == "__main__":
    sys.exit(main())
