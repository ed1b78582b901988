"""``cmi-inspect report``: the tables and figures of a log folder or of an export of one
(only verified runs ranked); ``--export`` writes that export."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmi_inspect.errors import UserError

NAME = "report"
HELP = "tables and figures from a log directory"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_dir", help="a log folder, or an export (FILE.json.gz) of one")
    parser.add_argument(
        "--export",
        type=Path,
        metavar="FILE",
        help="also write the runs' compact export here (FILE.json.gz), which report reads "
        "in place of the logs",
    )
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
    from cmi_inspect.report.export import SUFFIX, is_export, make_export, write_export

    source = Path(args.log_dir)
    if not source.is_dir() and not is_export(source):
        what = "is a file, not a log folder" if source.exists() else "does not exist"
        raise UserError(
            f"{args.log_dir} {what}: name the folder a run wrote its logs to, or an export "
            f"(*{SUFFIX})."
        )
    if args.export is not None:
        if not source.is_dir():
            raise UserError(f"--export: {args.log_dir} is an export already; name a log folder.")
        size = write_export(make_export(args.log_dir), args.export)
        print(f"cmi-inspect: wrote {args.export} ({size:,} bytes)")
    audit = judge_section(args.judge_audit) if args.judge_audit else None  # checked first
    text = build_report(args.log_dir, out=args.out, evaluation=args.evaluation_report)
    print(text + ("\n\n" + audit if audit else ""))
    return 0
