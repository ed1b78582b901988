"""``cmi-inspect report``: the tables and figures of a log folder (only verified runs ranked)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmi_inspect.errors import UserError

NAME = "report"
HELP = "tables and figures from a log directory"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_dir")
    parser.add_argument("--out", type=Path, help="also write report.md, report.json and PNGs here")
    parser.add_argument(
        "--judge-audit", type=Path, metavar="FILE", help="a judge-audit --json file to show"
    )
    parser.add_argument(
        "--evaluation-report",
        action="store_true",
        help="print the register's evaluation report (each run beside the paper's figure, "
        "with commands, dates and versions) instead of the tables",
    )


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.report import build_report
    from cmi_inspect.report.audits import judge_section

    if not Path(args.log_dir).is_dir():
        what = "is a file, not a log folder" if Path(args.log_dir).exists() else "does not exist"
        raise UserError(f"{args.log_dir} {what}: name the folder a run wrote its logs to.")
    audit = judge_section(args.judge_audit) if args.judge_audit else None  # checked first
    text = build_report(args.log_dir, out=args.out, evaluation=args.evaluation_report)
    print(text + ("\n\n" + audit if audit else ""))
    return 0
