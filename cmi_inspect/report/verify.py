"""Re-score every sample of a log from the log alone, in a process no plugin has touched.

A third-party strategy runs in the process that scores it: it can patch the scorers, read
the answer key or rewrite what was recorded, and the log would say what it was made to say.
``cmi-inspect verify`` (and ``cmi-inspect report``, which ranks only what verifies) re-scores
in a fresh Python process (``verify_clean``) that imports no third-party strategy and runs
no ``.pth`` file or ``PYTHON*`` setting of the environment (``python -I -S``): each
sample's answer and selection are checked against the calls its log records, its exposure
recomputed from the prompt the answering call read, both scores recomputed from the data
file the run named (its sha256 checked; the record the log holds is not trusted) and
compared with the logged ones. A run verifies when every scored sample re-scores to the
same figures. (``inspect score`` re-scores a log from the records it holds, anywhere.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import site
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import ChatMessage, Model, ModelOutput, get_model

from cmi_inspect.causal_locomo.causal_locomo import TASK_VERSION
from cmi_inspect.causal_locomo.data import sha256_of
from cmi_inspect.causal_locomo.dataset import data_file_record, shown_texts
from cmi_inspect.causal_locomo.exposure import call_text
from cmi_inspect.causal_locomo.measures import f1_at_k, selection_metrics
from cmi_inspect.causal_locomo.scorers import answer_score
from cmi_inspect.causal_locomo.selection import MemorySelection, examine
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.errors import UserError

TOLERANCE = 1e-9
TASK_KEYS = ("score", "deterministic", "judge", "success", "hedged", "negated")
SELECTION_PREFIX = "selection:"


@dataclass
class LogCheck:
    """One log's verification."""

    log: str
    task: str = ""
    verified: bool = False
    scored: int = 0
    """Samples re-scored (samples that failed in the run are not scored, here or there)."""
    problems: list[str] = field(default_factory=list)
    """One line per sample (or for the log) that did not re-score to its logged figures."""
    rescored: dict[str, float] = field(default_factory=dict)
    """The mean of each re-scored value over the samples (``score``, ``selection:useful_f1``)."""


def scorer_options(log: EvalLog, name: str) -> dict[str, Any]:
    found = next((s for s in log.eval.scorers or [] if s.name.split("/")[-1] == name), None)
    if found is None:
        raise UserError(f"the log has no {name} scorer")
    return dict(found.options or {})


class UnrecordedVerdict(RuntimeError):
    """The judge's prompt has no recorded grader reply in the sample's log."""


def replayed_graders(log: EvalLog, sample: EvalSample) -> Model | list[Model] | None:
    """The run's grader role, each grader answering from its calls recorded in the sample's
    log (None: the alias match judged): the verdict is re-read from the reply the grader
    gave, not asked again (an API grader may be unreachable, a scripted one gone)."""
    role = (log.eval.model_roles or {}).get("grader")
    if role is None:
        return None
    configs = role if isinstance(role, list) else [role]
    recorded = [e for e in sample.events if isinstance(e, ModelEvent) and e.role == "grader"]

    def replay(name: str) -> Model:
        replies = {call_text(e.input): e.output for e in recorded if e.model == name}

        async def answer(input: list[ChatMessage], *_: object) -> ModelOutput:
            reply = replies.get(call_text(input))
            if reply is None:
                raise UnrecordedVerdict(f"no reply of grader {name} to the judge's prompt")
            return reply

        return get_model("mockllm/model", custom_outputs=answer, memoize=False)

    models = [replay(c.model) for c in configs]
    return models if isinstance(role, list) else models[0]


async def rescore(
    sample: EvalSample, scoring: str, grader: Model | list[Model] | None
) -> dict[str, float]:
    """A sample's task and selection figures, from its log entry and the data file alone."""
    meta = data_file_record(sample)
    record = sample.store_as(MemorySelection)
    answer = sample.output.completion
    request = str(sample.input)
    shown = shown_texts(meta)
    seen = examine(record, sample.events, answer, shown, request)
    scored = await answer_score(
        answer,
        request,
        meta.gold_behavior,
        meta.scoring_criteria,
        scoring,
        grader,
    )
    ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
    chosen = [ids[k] for k in seen.scored]
    selection = selection_metrics(
        chosen, meta.gold_memory_ids, meta.bad_memory_ids, meta.harmful_ids
    )
    if record.ranking is not None:
        selection |= f1_at_k([ids[k] for k in record.ranking], meta.gold_memory_ids)
    return {
        "score": scored.total,
        "deterministic": scored.det,
        "judge": scored.verdict.score,
        "success": 1.0 if scored.success else 0.0,
        "hedged": 1.0 if scored.hedged.hedged else 0.0,
        "negated": 1.0 if scored.negated.negated else 0.0,
        **{f"{SELECTION_PREFIX}{k}": v for k, v in selection.items()},
        f"{SELECTION_PREFIX}undeclared": float(len(seen.undeclared)),
    }


def logged(sample: EvalSample) -> dict[str, float]:
    """The figures the log holds for a sample, keyed as ``rescore`` keys them."""
    scores = sample.scores or {}
    task = scores["task_score"].value if "task_score" in scores else {}
    chosen = scores["memory_selection"].value if "memory_selection" in scores else {}
    assert isinstance(task, dict) and isinstance(chosen, dict)
    return {
        **{k: float(task[k]) for k in TASK_KEYS if k in task},
        **{f"{SELECTION_PREFIX}{k}": float(v) for k, v in chosen.items()},
    }


def differences(ours: dict[str, float], theirs: dict[str, float]) -> list[str]:
    return [
        f"{k} logged {theirs.get(k, math.nan):.3f}, re-scored {v:.3f}"
        for k, v in ours.items()
        if k not in theirs or abs(theirs[k] - v) > TOLERANCE
    ]


async def verify_log(path: str) -> LogCheck:
    """Re-score one log's samples and compare them with what it logged."""
    check = LogCheck(log=path)
    try:
        log = read_eval_log(path, resolve_attachments=True)
        check.task = log.eval.task
        made = str(log.eval.task_version).rsplit("-", 1)[0]  # less the data's sha256 prefix
        if made.split("-")[0] != TASK_VERSION.split("-")[0]:  # N: its scores were another's
            raise UserError(
                f"it was scored by task version {made}, and this cmi-inspect scores version "
                f"{TASK_VERSION}: run it again, or verify it with the version that made it"
            )
        scoring = str(scorer_options(log, "task_score").get("scoring", "paper"))
        for first in (log.samples or [])[:1]:
            path, digest = first.metadata["data_file"], first.metadata["data_sha256"]
            found = sha256_of(Path(path))
            if found != digest:
                raise UserError(
                    f"its data file {path} now has sha256 {found[:12]}..., not the "
                    f"{digest[:12]}... it was scored on"
                )
    except UserError as ex:
        check.problems.append(str(ex))
        return check
    except Exception as ex:  # an unreadable log is unverified, never a traceback
        check.problems.append(f"unreadable: {type(ex).__name__}: {ex}")
        return check
    totals: dict[str, list[float]] = {}
    for sample in log.samples or []:
        if sample.error is not None or not sample.scores:
            continue
        try:
            ours = await rescore(sample, scoring, replayed_graders(log, sample))
        except Exception as ex:  # the sample's record or answer does not hold
            check.problems.append(f"{sample.id}: {ex}")
            continue
        check.scored += 1
        for key, value in ours.items():
            totals.setdefault(key, []).append(value)
        differ = differences(ours, logged(sample))
        if differ:
            check.problems.append(f"{sample.id}: {'; '.join(differ)}")
    check.rescored = {k: sum(v) / len(v) for k, v in totals.items()}
    check.verified = not check.problems  # a run whose every sample failed has nothing to hide
    return check


def third_party_modules() -> set[str]:
    """The top-level modules of strategies installed by other packages (entry points)."""
    points = entry_points(group="cmi_inspect.strategies")
    return {p.value.split(":")[0].split(".")[0] for p in points} - {"cmi_inspect"}


def imported_third_party() -> list[str]:
    """The third-party strategy modules this process has imported."""
    tops = third_party_modules()
    return sorted(m for m in sys.modules if m.split(".")[0] in tops)


def verify_logs(paths: Sequence[str]) -> list[LogCheck]:
    """Every log re-scored here, then each marked unverified if this process imported a
    third-party strategy's code on the way (it would not be clean)."""

    async def run() -> list[LogCheck]:
        return [await verify_log(p) for p in paths]

    checks = asyncio.run(run())
    leaked = imported_third_party()
    for check in checks if leaked else []:
        check.verified = False
        check.problems.append(f"the verifying process imported {', '.join(leaked)}")
    return checks


CLEAN_START = (
    "import os, sys; sys.path[:0] = sys.argv.pop(1).split(os.pathsep); "
    "from cmi_inspect.report.verify import main; main()"
)
"""How the verifying process starts: the paths it is handed first on ``sys.path``, then
``main`` (``-I -S``: no ``site``, so no ``.pth`` file runs; no ``PYTHON*`` variable, user
site or working directory on the path)."""


def clean_paths() -> list[str]:
    """What the verifying process may import from: the folder this package is in, then the
    environment's site-packages folders (read as plain folders: their ``.pth`` files do not
    run)."""
    package = Path(__file__).resolve().parents[2]
    return [str(package), *site.getsitepackages()]


def clean_command(arguments: Sequence[str]) -> list[str]:
    """The command of a verifying process: this Python, isolated (``-I``) and without
    ``site`` (``-S``), handed ``clean_paths``."""
    paths = os.pathsep.join(clean_paths())
    return [sys.executable, "-I", "-S", "-c", CLEAN_START, paths, *arguments]


def verify_clean(paths: Sequence[str]) -> dict[str, LogCheck]:
    """``verify_logs`` in a fresh, isolated Python process (``clean_command``), by log path."""
    if not paths:
        return {}
    with tempfile.TemporaryDirectory(prefix="cmi-verify-") as folder:
        out = Path(folder) / "checks.json"
        command = clean_command(["--out", str(out), *paths])
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.is_file():
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise UserError(f"The verifying process failed (exit {done.returncode}): {tail}")
        return {c["log"]: LogCheck(**c) for c in json.loads(out.read_text("utf-8"))}


def main(argv: Sequence[str] | None = None) -> None:
    """The clean process's entry (``clean_command``): the logs' checks as one JSON list,
    written to ``--out``; refused in a Python that ran ``site`` or reads ``PYTHON*``."""
    parser = argparse.ArgumentParser(prog="cmi_inspect.report.verify")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("logs", nargs="+")
    args = parser.parse_args(argv)
    if not (sys.flags.isolated and sys.flags.no_site):
        sys.exit("cmi_inspect.report.verify runs only as verify_clean starts it (python -I -S).")
    checks = verify_logs(args.logs)
    args.out.write_text(json.dumps([asdict(c) for c in checks]), encoding="utf-8")


def describe(check: LogCheck) -> str:
    """One line on a log's verification, then its problems, one line each."""
    name = Path(check.log).name
    if check.verified:
        return f"verified: {check.task} ({name}): {check.scored} samples re-score to their figures"
    lines = [f"NOT verified: {check.task or name} ({name}): {len(check.problems)} problem(s)"]
    return "\n".join([*lines, *(f"  - {p}" for p in check.problems[:20])])


if __name__ == "__main__":
    main()


def verify_folder(log_dir: str, as_json: bool = False) -> int:
    """``cmi-inspect verify``: every log of the folder verified in a clean process, a line
    each (or JSON); 0 when all verify, else 1."""
    from cmi_inspect.eval_logs import log_files

    if not Path(log_dir).is_dir():
        raise UserError(f"{log_dir} is not a folder: name the folder a run wrote its logs to.")
    checks = list(verify_clean(log_files(log_dir)).values())
    if not checks:
        raise UserError(f"{log_dir} holds no .eval log.")
    if as_json:
        print(json.dumps([asdict(c) for c in checks], indent=2))
    else:
        print("\n".join(describe(c) for c in checks))
    return 0 if all(c.verified for c in checks) else 1
