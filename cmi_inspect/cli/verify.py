"""``cmi-inspect verify``: every log of a folder re-scored in a clean process."""

from __future__ import annotations

import argparse

NAME = "verify"
HELP = "re-score every log of a folder in a clean process; exit 1 if any differ"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_dir")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.report.verify import verify_folder

    return verify_folder(args.log_dir, args.json)
