"""``cmi-inspect fit-selector``: CMI's learned selector fitted on the logs of CMI runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmi_inspect.errors import UserError

NAME = "fit-selector"
HELP = "fit CMI's learned selector on the logs of CMI runs (never on test)"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_dir", help="logs of CMI runs on training data (-T split=train)")
    parser.add_argument("--out", type=Path, required=True, help="the selector file to write (JSON)")
    parser.add_argument(
        "--dev",
        metavar="LOG_DIR",
        help="logs of CMI runs on development data, where the threshold is chosen (default: "
        "the training runs' held-out probabilities)",
    )
    parser.add_argument(
        "--cross-fit",
        action="store_true",
        help="one selector per conversation of the logs, fitted on all but it and the next "
        "one, its threshold chosen on the next one, for that conversation's samples alone "
        "(three conversations or more; no --dev)",
    )
    parser.add_argument(
        "--non-causal",
        action="store_true",
        help="without the features that read intervention answers (any response model)",
    )
    parser.add_argument(
        "--embedder",
        default="e5",
        help="the embedder of the cosine features: e5 (default, blind CMI's proposal) or hashing",
    )


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.causal_locomo.strategies.cmi.crossfit import cross_fit_from_logs
    from cmi_inspect.causal_locomo.strategies.cmi.fitting import fit_from_logs
    from cmi_inspect.causal_locomo.strategies.cmi.selector import LearnedSelector

    if args.out.is_dir() or args.out.parent.is_file():
        raise UserError(f"--out {args.out}: not a file that can be written; name a file.")
    if args.cross_fit and args.dev:
        raise UserError("--cross-fit chooses each fold's threshold on a conversation of the "
                        "logs themselves: drop --dev.")  # fmt: skip
    causal = not args.non_causal
    written: LearnedSelector
    if args.cross_fit:
        crossfitted = cross_fit_from_logs(args.log_dir, causal, args.embedder)
        report, written = crossfitted.report(), crossfitted.file
    else:
        fitted = fit_from_logs(args.log_dir, args.dev, causal, args.embedder)
        report, written = fitted.report(), fitted.selector
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        written.save(args.out)
    except OSError as ex:
        raise UserError(f"Cannot write --out {args.out}: {ex.strerror or ex}.") from None
    print(report + f"\n\nWritten: {args.out} (use it with -S selector={args.out})")
    return 0
