"""``cmi-inspect compare``: two runs on the same samples, paired differences with intervals."""

from __future__ import annotations

import argparse

NAME = "compare"
HELP = "two runs on the same samples: paired differences with intervals"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_a", help="a run's .eval log")
    parser.add_argument("log_b", help="the run it is compared with, on the same samples")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")


def run(args: argparse.Namespace) -> int:
    from cmi_inspect.report.paired import compare

    print(compare(args.log_a, args.log_b, args.resamples))
    return 0
