"""``cmi-inspect``: run every strategy into one log directory, report on it, audit a data
set's label artefacts, and build Causal-LoCoMo-XL."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cmi_inspect.errors import UserError, name_value_pairs, positive_int, sample_limit

if TYPE_CHECKING:
    from inspect_ai.model import Model

DEFAULT_TIMEOUT = 300
"""Seconds per model request: a slow local call fits, an unreachable endpoint does not hang."""
DEFAULT_RETRIES = 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cmi-inspect", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run all strategies with Inspect's eval-set (resumable)")
    run.add_argument("log_dir")
    run.add_argument("--model", help="response model (default: INSPECT_EVAL_MODEL, see .env)")
    run.add_argument("--limit", help="samples per strategy: N, or a range FIRST-LAST (301-1176)")
    run.add_argument(
        "--strategies",
        help="comma-separated strategies: built-in ones (default: all seven) or installed ones",
    )
    run.add_argument(
        "--ablations",
        action="store_true",
        help="also run CMI's ablations (under -T protocol=blind, the five that read no label)",
    )
    run.add_argument(
        "--guard",
        action="store_true",
        help="also run each strategy with -S guard=evidence (its row: STRATEGY + guard)",
    )
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
        "--time-limit",
        type=int,
        metavar="SECONDS",
        help="wall-clock seconds a sample may run, waits for the model included (default: no "
        "limit); one that runs longer stops and is scored with what it had",
    )
    run.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_RETRIES,
        help=f"retries of a failed model request (default {DEFAULT_RETRIES})",
    )

    run.add_argument(
        "--max-connections",
        type=int,
        help="concurrent requests to the model (default: the provider's; raise it for a "
        "server that batches, such as vLLM)",
    )
    run.add_argument(
        "--serve",
        type=int,
        metavar="N",
        help="serve the embedded model in a process of its own with N slots for the run "
        "(its -M arguments go to the server)",
    )
    run.add_argument(
        "--model-role",
        dest="model_roles",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help="a model role, as inspect eval takes it (grader=openai/gpt-5: the judge)",
    )
    run.add_argument("--epochs", type=int, help="epochs of each sample (default 1)")
    run.add_argument("--tags", help="comma-separated tags for every run's log")
    run.add_argument(
        "--isolate",
        action="store_true",
        help="run installed strategies' select in a sandbox (bubblewrap or unshare) that "
        "cannot read the data, the caches or the logs",
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
    report.add_argument(
        "--judge-audit", type=Path, metavar="FILE", help="a judge-audit --json file to show"
    )
    report.add_argument(
        "--evaluation-report",
        action="store_true",
        help="print the register's evaluation report (each run beside the paper's figure, "
        "with commands, dates and versions) instead of the tables",
    )

    verify = commands.add_parser(
        "verify", help="re-score every log of a folder in a clean process; exit 1 if any differ"
    )
    verify.add_argument("log_dir")
    verify.add_argument("--json", action="store_true", help="print the checks as JSON")

    audit = commands.add_parser("audit", help="how well surface artefacts give labels away")
    audit.add_argument("--dataset", default="release", help="release (default) or xl")
    audit.add_argument("--data-file", help="a JSONL file in the release's schema instead")
    audit.add_argument("--protocol", default="blind", help="the view: blind (default) or paper")
    audit.add_argument("--json", action="store_true", help="print the AUCs as one JSON object")
    audit.add_argument(
        "--conflicts",
        action="store_true",
        help="also the share of bank pairs CMI's conflict relation flags, by label pair (runs e5)",
    )

    judges = commands.add_parser(
        "judge-audit", help="how often the judge accepts answers known to be right or wrong"
    )
    judges.add_argument("--dataset", default="release", help="release (default) or xl")
    judges.add_argument("--data-file", help="a JSONL file in the release's schema instead")
    judges.add_argument("--limit", help="the first N examples, or examples FIRST-LAST (301-1176)")
    judges.add_argument(
        "--model-role",
        dest="model_roles",
        action="append",
        default=[],
        metavar="grader=MODEL[,MODEL...]",
        help="the judge to audit (several: a majority vote); default: the alias match",
    )
    judges.add_argument("--log-dir", default="logs/judge-audit", help="where the audit's log goes")
    judges.add_argument("--json", type=Path, metavar="FILE", help="also write the result here")

    pair = commands.add_parser(
        "compare", help="two runs on the same samples: paired differences with intervals"
    )
    pair.add_argument("log_a", help="a run's .eval log")
    pair.add_argument("log_b", help="the run it is compared with, on the same samples")
    pair.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")

    fit = commands.add_parser(
        "fit-selector", help="fit CMI's learned selector on the logs of CMI runs (never on test)"
    )
    fit.add_argument("log_dir", help="logs of CMI runs on training data (-T split=train)")
    fit.add_argument("--out", type=Path, required=True, help="the selector file to write (JSON)")
    fit.add_argument(
        "--dev",
        metavar="LOG_DIR",
        help="logs of CMI runs on development data, where the threshold is chosen (default: "
        "the training runs' held-out probabilities)",
    )
    fit.add_argument(
        "--non-causal",
        action="store_true",
        help="without the features that read intervention answers (any response model)",
    )
    fit.add_argument(
        "--embedder",
        default="e5",
        help="the embedder of the cosine features: e5 (default, blind CMI's proposal) or hashing",
    )

    build = commands.add_parser("build-xl", help="build Causal-LoCoMo-XL from LoCoMo")
    build.add_argument("out_dir", type=Path)

    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
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


def _run(args: argparse.Namespace) -> int:
    from dotenv import load_dotenv

    from cmi_inspect.run import run_all
    from cmi_inspect.strategies import STRATEGIES

    load_dotenv(Path.cwd() / ".env")  # the default model, as the inspect CLI reads it
    strategies = args.strategies.split(",") if args.strategies else tuple(STRATEGIES)
    print(f"cmi-inspect run: {cache_note(args.cache)}", file=sys.stderr)
    left = run_all(
        args.log_dir,
        strategies=strategies,
        ablations=args.ablations,
        guard=args.guard,
        model=args.model,
        limit=sample_limit("--limit", args.limit),
        task_args=name_value_pairs("-T", args.task_args),
        model_args=name_value_pairs("-M", args.model_args),
        max_samples=args.max_samples,
        max_tasks=args.max_tasks,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache=args.cache,
        max_connections=args.max_connections,
        serve=None if args.serve is None else positive_int("--serve", args.serve),
        isolate=args.isolate,
        model_roles=name_value_pairs("--model-role", args.model_roles),
        epochs=None if args.epochs is None else positive_int("--epochs", args.epochs),
        tags=[t.strip() for t in (args.tags or "").split(",") if t.strip()],
        time_limit=None
        if args.time_limit is None
        else positive_int("--time-limit", args.time_limit),
    )
    if left:
        print(
            f"cmi-inspect run: {len(left)} run(s) did not finish: {'; '.join(left)}. "
            "Run the same command again to resume them (finished samples are kept).",
            file=sys.stderr,
        )
        return 1
    print(f"cmi-inspect run: every run finished; their logs are in {args.log_dir}.")
    return 0


def cache_note(cache: bool) -> str:
    """Which model-call cache a run reads and writes, and where it lives."""
    from inspect_ai.model import cache_path

    if not cache:
        return "--no-cache: every model call is sent (nothing is read from the cache)"
    return (
        f"model calls go through Inspect's model-call cache in {cache_path()} (shared by every "
        "run on this machine; --no-cache to time a first run)"
    )


def _report(args: argparse.Namespace) -> int:
    from cmi_inspect.report import build_report
    from cmi_inspect.report.audits import judge_section

    if not Path(args.log_dir).is_dir():
        what = "is a file, not a log folder" if Path(args.log_dir).exists() else "does not exist"
        raise UserError(f"{args.log_dir} {what}: name the folder a run wrote its logs to.")
    audit = judge_section(args.judge_audit) if args.judge_audit else None  # checked first
    text = build_report(args.log_dir, out=args.out, evaluation=args.evaluation_report)
    print(text + ("\n\n" + audit if audit else ""))
    return 0


def _verify(args: argparse.Namespace) -> int:
    from cmi_inspect.report.verify import verify_folder

    return verify_folder(args.log_dir, args.json)


def _grader_roles(pairs: list[str]) -> dict[str, list[Model]]:
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


def _judge_audit(args: argparse.Namespace) -> int:
    from inspect_ai import eval as inspect_eval

    from cmi_inspect.causal_locomo.judge_audit import audit_result, judge_calibration
    from cmi_inspect.paths import writable_dir
    from cmi_inspect.report.audits import judge_table

    if args.json is not None and (args.json.is_dir() or args.json.parent.is_file()):
        raise UserError(f"--json {args.json}: not a file that can be written; name a file.")
    task = judge_calibration(args.dataset, args.data_file, sample_limit("--limit", args.limit))
    log_dir = writable_dir(args.log_dir, "judge audit's log")
    roles = _grader_roles(args.model_roles)
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


def _audit(args: argparse.Namespace) -> int:
    from cmi_inspect.causal_locomo.audit import audit, audit_items
    from cmi_inspect.causal_locomo.data import load_records
    from cmi_inspect.causal_locomo.dataset import dataset_path
    from cmi_inspect.causal_locomo.protocol import named_protocol
    from cmi_inspect.report.audits import artefact_table

    protocol = named_protocol(args.protocol).name
    path = Path(args.data_file) if args.data_file else dataset_path(args.dataset)
    items = audit_items(load_records(path), protocol)
    result: dict[str, Any] = audit(items)
    title = f"{path.name}, {protocol} view"
    text = artefact_table(result, title)
    if args.conflicts:
        from cmi_inspect.strategies.cmi.conflict_audit import conflict_shares, conflict_table

        result["conflicts"] = conflict_shares(items)
        text += "\n" + conflict_table(result["conflicts"])
    print(json.dumps(result) if args.json else text)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from cmi_inspect.report.paired import compare

    print(compare(args.log_a, args.log_b, args.resamples))
    return 0


def _fit_selector(args: argparse.Namespace) -> int:
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
    "verify": _verify,
    "audit": _audit,
    "build-xl": _build_xl,
    "judge-audit": _judge_audit,
    "compare": _compare,
    "fit-selector": _fit_selector,
}


if __name__ == "__main__":
    sys.exit(main())
