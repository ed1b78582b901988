"""``cmi-inspect``: run every strategy into one log directory, report on it, verify and
compare runs, audit a data set's label artefacts and its judge, fit CMI's selector, and
build Causal-LoCoMo-XL. One module per sub-command (``NAME``, ``HELP``, ``arguments``,
``run``), listed in ``COMMANDS``."""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from cmi_inspect.cli import (
    audit,
    build_xl,
    compare,
    fit_selector,
    fit_threshold,
    judge_audit,
    report,
    run,
    verify,
)
from cmi_inspect.errors import UserError

COMMANDS: dict[str, ModuleType] = {
    m.NAME: m
    for m in (
        run,
        report,
        verify,
        audit,
        judge_audit,
        compare,
        fit_selector,
        fit_threshold,
        build_xl,
    )
}
"""Each sub-command's module, by the name users type."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cmi-inspect", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        module.arguments(commands.add_parser(name, help=module.HELP))
    args = parser.parse_args(argv)
    try:
        return int(COMMANDS[args.command].run(args))
    except UserError as ex:
        print(f"cmi-inspect {args.command}: {ex}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"cmi-inspect {args.command}: interrupted; run the same command again to "
            "resume (finished samples are kept).",
            file=sys.stderr,
        )
        return 130
