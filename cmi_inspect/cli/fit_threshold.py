"""``cmi-inspect fit-threshold``: an attribution baseline's threshold cross-fitted by
conversation from the logs of its runs (``strategies.attribution_fit``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmi_inspect.errors import UserError

NAME = "fit-threshold"
HELP = "choose context_cite's or leave_one_in's threshold by cross-fitting on their logs"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_dir", help="logs of context_cite or leave_one_in runs")
    parser.add_argument("--strategy", required=True, help="context_cite or leave_one_in")
    parser.add_argument("--out", type=Path, required=True, help="the threshold file (JSON)")


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.causal_locomo.strategies.attribution_fit import fit_thresholds

    if args.out.is_dir() or args.out.parent.is_file():
        raise UserError(f"--out {args.out}: not a file that can be written; name a file.")
    fitted = fit_thresholds(args.log_dir, args.strategy)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        fitted.save(args.out)
    except OSError as ex:
        raise UserError(f"Cannot write --out {args.out}: {ex.strerror or ex}.") from None
    for fold in fitted.folds:
        print(f"{fold.held_out}: threshold {fold.threshold} (on the others: {fold.objective:.3f})")
    print(f"\nWritten: {args.out} (use it with -S threshold={args.out})")
    return 0
