"""``cmi-inspect judge-audit``: how often the judge accepts answers known to be right or wrong."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from cmi_inspect.errors import UserError, sample_limit

if TYPE_CHECKING:
    from inspect_ai.model import Model

NAME = "judge-audit"
HELP = "how often the judge accepts answers known to be right or wrong"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="release", help="release (default) or xl")
    parser.add_argument("--data-file", help="a JSONL file in the release's schema instead")
    parser.add_argument("--limit", help="the first N examples, or examples FIRST-LAST (301-1176)")
    parser.add_argument(
        "--model-role",
        dest="model_roles",
        action="append",
        default=[],
        metavar="grader=MODEL[,MODEL...]",
        help="the judge to audit (several: a majority vote); default: the alias match",
    )
    parser.add_argument("--log-dir", default="logs/judge-audit", help="where the audit's log goes")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the result here")


def grader_roles(pairs: list[str]) -> dict[str, list[Model]]:
    """``--model-role ROLE=MODEL[,MODEL...]`` as models, each made now so that an unknown
    provider or a missing API key is one line naming it, not a traceback from the run."""
    from inspect_ai.model import get_model
    from rich.text import Text

    from cmi_inspect.errors import PrerequisiteError

    roles: dict[str, list[Model]] = {}
    for pair in pairs:
        role, sep, models = pair.partition("=")
        names = [m.strip() for m in models.split(",") if m.strip()]
        if not sep or not names:
            raise UserError(f"--model-role expects ROLE=MODEL[,MODEL...], got {pair!r}")
        try:
            roles[role] = [get_model(name, role=role) for name in names]
        except (ValueError, PrerequisiteError) as ex:
            text = Text.from_markup(str(getattr(ex, "message", ex))).plain
            why = " ".join(line.strip() for line in text.splitlines() if line.strip())
            raise UserError(f"--model-role {pair}: {why.removeprefix('ERROR: ')}") from None
    return roles


def run(args: argparse.Namespace) -> int:
    from inspect_ai import eval as inspect_eval

    from cmi_inspect.causal_locomo.judge_audit import audit_result, judge_calibration
    from cmi_inspect.paths import writable_dir
    from cmi_inspect.report.audits import judge_table

    if args.json is not None and (args.json.is_dir() or args.json.parent.is_file()):
        raise UserError(f"--json {args.json}: not a file that can be written; name a file.")
    task = judge_calibration(args.dataset, args.data_file, sample_limit("--limit", args.limit))
    log_dir = writable_dir(args.log_dir, "judge audit's log")
    roles = grader_roles(args.model_roles)
    graders = {role: models if len(models) > 1 else models[0] for role, models in roles.items()}
    [log] = inspect_eval(task, model="none/none", model_roles=graders or None, log_dir=str(log_dir))
    if log.status != "success":
        raise UserError(f"the audit did not finish ({log.status}); its log: {log.location}")
    result = audit_result(log)
    print(judge_table(result) + "\n\n" + json.dumps(result))
    if args.json:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        except OSError as ex:
            raise UserError(f"Cannot write --json {args.json}: {ex.strerror or ex}.") from None
    return 0
