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
    from cmi_inspect.strategies.cmi.fitting import fit_from_logs

    if args.out.is_dir() or args.out.parent.is_file():
        raise UserError(f"--out {args.out}: not a file that can be written; name a file.")
    fitted = fit_from_logs(args.log_dir, args.dev, not args.non_causal, args.embedder)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        fitted.selector.save(args.out)
    except OSError as ex:
        raise UserError(f"Cannot write --out {args.out}: {ex.strerror or ex}.") from None
    print(fitted.report() + f"\n\nWritten: {args.out} (use it with -S selector={args.out})")
    return 0
