"""Run every strategy on the same samples and model into one log directory.

This is Inspect's ``eval_set``: one task per strategy, all written to
``LOG_DIR``. Run the same command again after an interruption and finished
tasks are kept while unfinished ones resume, reusing their completed samples.
The task and strategy solvers are the installed package's, so it runs from any directory; each row
is the task with its strategy as its own strategy solver (``-T strategy=NAME``), so its logs are
those of ``inspect eval cmi_inspect/causal_locomo -T strategy=NAME``: named after the
strategy in Inspect View and continued by ``inspect eval-retry`` with no header rewritten.
Tasks run one at a time by default, so that each strategy's wall-clock is its
own (a local model serialises every call anyway); raise ``max_tasks`` for a
remote API.
"""

from __future__ import annotations

import fcntl
import io
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext, redirect_stdout
from pathlib import Path
from typing import Any, TextIO

from inspect_ai.log import EvalLog, EvalLogInfo
from rich.text import Text

from cmi_inspect.causal_locomo.log_tags import is_causal_locomo, run_name
from cmi_inspect.causal_locomo.protocol import named_protocol
from cmi_inspect.causal_locomo.strategies import BUILT_IN, installed_strategies, strategy_class
from cmi_inspect.causal_locomo.strategies.cmi import ABLATIONS
from cmi_inspect.errors import UserError, positive_int, sample_limit
from cmi_inspect.guard import EvidenceGuard
from cmi_inspect.paths import writable_dir
from cmi_inspect.rows import (
    CACHE_EXPIRY,
    causal_locomo_task,
    check_rows,
    run_apart,
    run_plans,
)
from cmi_inspect.run_spec import RunSettings, RunSpec

LOCK_FILE = ".cmi-inspect-run.lock"
WORKER = "INSPECT_EVAL_SET_SELECTION"
"""Set, Inspect's eval set runs as a worker: the tasks a runner's selection file names."""
SERVED_SERVICE = "cmi-served"
"""The ``openai-api`` service name of a model ``--serve`` serves."""
DEFAULT_MODEL = "gguf/smollm2"
"""The embedded model, when neither ``--model`` nor ``INSPECT_EVAL_MODEL`` names one."""


EVAL_SET_VERDICTS = ("Completed all tasks in", "Did not successfully complete all tasks in")
"""eval_set's closing lines: after a Ctrl-C it can say "Completed all tasks ... successfully"
of runs it never finished, so ``cmi-inspect run`` drops them and says what the logs hold."""


class WithoutLines(io.TextIOBase):
    """A text stream that passes everything to ``stream`` but a print that starts with one of
    ``prefixes`` (Rich writes each print in one piece, wrapped and rendered)."""

    def __init__(self, stream: TextIO, prefixes: tuple[str, ...]) -> None:
        self.stream, self.prefixes = stream, prefixes

    def write(self, text: str) -> int:
        if not " ".join(Text.from_ansi(text).plain.split()).startswith(self.prefixes):
            self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


def run_all(spec: RunSpec) -> list[str]:
    """Run the strategies (and CMI's ablations, under a label-free protocol those that
    read no label; with ``guard``, each strategy again behind ``-S guard=evidence``) with
    ``eval_set``; the runs that did not finish (none when all succeeded).

    With ``spec.cache`` every model call goes through Inspect's model-call cache: the task
    answers at temperature 0, so a prompt asked before (by another strategy, an
    ablation, a rerun, a plain ``inspect eval --cache``) within a week is read back
    instead of generated again. The cache key holds the model's identity (for a local
    GGUF file, its content hash) and the whole prompt.

    With ``spec.serve`` the embedded model runs in a server process of its own with that many
    slots (``-M parallel``), for the length of the run, and the tasks reach it as
    ``openai-api/cmi-served/NAME``; the cache then holds the server's address, so it serves
    that one run.

    ``model_roles``, ``epochs``, ``tags`` and ``inspect_options`` (any other of
    ``eval_set``'s arguments by name: ``sample_id``, ``fail_on_error``, ``retry_on_error``,
    ``token_limit``, ``log_level``, ``log_format``, ``display``) pass through to Inspect as
    ``inspect eval`` takes them (``--model-role grader=MODEL`` is the judge).

    With ``spec.time_limit`` a sample that runs longer (in seconds, wall-clock) stops there and
    is scored with what it had: a strategy that hangs holds up its own samples only.

    A strategy another package installs runs its rows in a Python process of its own
    (``run_apart``), after the built-in ones, so that it can touch no other row; with
    ``spec.isolate`` its ``select`` also runs in a sandbox (``strategies.isolation``).

    Under Inspect's eval-set capture (``INSPECT_EVAL_SET_CAPTURE``) the built-in rows are
    listed and nothing runs; a worker (``INSPECT_EVAL_SET_SELECTION``) runs the rows its
    selection names into the shared folder, without the folder's lock, and answers for
    those alone (docs/serving.md).
    """
    check_counts(spec)
    strategies, model_args, serve = spec.strategies, spec.model_args, spec.serve
    for name in strategies:  # one line naming the built-in and installed ones if unknown;
        if name not in BUILT_IN and name not in installed_strategies():  # nothing loaded
            strategy_class(name)
    chosen = spec.model or os.environ.get("INSPECT_EVAL_MODEL") or DEFAULT_MODEL
    if serve:  # the run's own arguments are checked before any download or model load
        served_args = {**model_args, "parallel": serve}
        check_servable(chosen, served_args)
    args = spec.task_args
    plans: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in strategies]
    if spec.ablations:
        # a label-free protocol runs the ablations that read no label (the oracle does)
        protocol = named_protocol(args.get("protocol", "paper"))
        plans += [
            ("cmi", {"ablation": name})
            for name, a in ABLATIONS.items()
            if name != "full" and protocol.permits(a.refused_under_blind)
        ]
    if spec.guard:  # after the unguarded rows, whose generations the guarded ones read back
        plans += [(name, {"guard": EvidenceGuard.name}) for name in strategies]
    if spec.isolate:  # a strategy of another package chooses in a sandbox
        plans = [(n, {**p, "isolate": True} if n not in BUILT_IN else p) for n, p in plans]
    ours = [(n, p) for n, p in plans if n in BUILT_IN]
    apart = [(n, p) for n, p in plans if n not in BUILT_IN]
    check_rows(ours, args, chosen, model_args)  # every row's, before any row runs
    data = causal_locomo_task(**args)
    limit = sample_limit("--limit", spec.limit, len(data.dataset))
    log_dir = spec.log_dir
    folder = writable_dir(log_dir, "logs")
    refuse_other_data(log_dir, str(data.version), (data.metadata or {})["data_sha256"])
    config: dict[str, Any] = (
        {"max_connections": spec.max_connections} if spec.max_connections else {}
    )
    settings = RunSettings(
        **{**spec.row_options(), "limit": limit},
        model=chosen,
        config=config,
    )
    if apart:  # checked in a process of their own, as they will run: this one loads none
        run_apart(log_dir, apart, args, settings, check=True)
    names = [run_name(name, params, args) for name, params in plans]
    print(f"cmi-inspect run: {cache_note(spec.cache)}", file=sys.stderr)  # checked: now it runs
    logs: list[EvalLog] = []
    worker = bool(os.environ.get(WORKER, "").strip())
    with nullcontext() if worker else only_run(folder), ExitStack() as stack:
        stack.enter_context(redirect_stdout(WithoutLines(sys.stdout, EVAL_SET_VERDICTS)))
        if serve:
            chosen, served_settings = stack.enter_context(served(chosen, served_args))
            # the arguments went to the server
            config = {**served_settings, **config}
            settings = settings.model_copy(
                update={"model": chosen, "model_args": {}, "config": config}
            )
        if ours:
            logs += run_plans(log_dir, ours, args, settings)
        # a selection names built-in rows only; after a Ctrl-C no installed row starts
        ran = [run_name(name, params, args) for name, params in ours]
        stopped = worker or interrupted(ran, logs, log_dir)
        for plan in apart if not stopped else []:
            run_apart(log_dir, [plan], args, settings)
    if worker:  # the rows the selection named, each its log
        return unfinished([str(log.eval.task_display_name) for log in logs], logs, log_dir)
    return unfinished(names, logs, log_dir)


COUNTS = ("max_samples", "max_tasks", "timeout", "max_retries", "max_connections", "serve",
          "time_limit", "epochs")  # fmt: skip
"""The counts of a ``RunSpec``, each checked before anything runs."""
LEAST = {"max_retries": 0}
"""The counts that may be 0; every other one is at least 1."""


def check_counts(spec: RunSpec) -> None:
    """One line naming the option (``--max-samples``) of a count below its least value;
    None leaves Inspect's default."""
    for name in COUNTS:
        value = getattr(spec, name)
        if value is not None:
            positive_int("--" + name.replace("_", "-"), value, LEAST.get(name, 1))


def cache_note(cache: bool) -> str:
    """Which model-call cache a run reads and writes, where it lives, and how many answers
    it holds already: a first run on a machine where another checkout ran reads theirs."""
    from inspect_ai.model import cache_path

    if not cache:
        return "--no-cache: every model call is sent (nothing is read from the cache)"
    where = cache_path()
    held = sum(1 for p in where.rglob("*") if p.is_file()) if where.is_dir() else 0
    return (
        f"model calls go through Inspect's model-call cache in {where}, shared by every run "
        f"on this machine ({held} answers there now; each kept {CACHE_EXPIRY}, and `inspect "
        "eval --cache` reads and writes the same ones): --no-cache to time a first run, or "
        "INSPECT_CACHE_DIR=DIR for a cache of its own"
    )


def check_servable(model: str, model_args: dict[str, Any]) -> None:
    """One line unless ``--serve`` can serve ``model`` with ``model_args``."""
    from cmi_inspect.local_model.provider import GGUFModel

    if not model.startswith("gguf/"):
        raise UserError(
            f"--serve serves the embedded engine (a gguf/NAME model), not {model}; for a model "
            "served elsewhere pass --model openai-api/SERVICE/NAME and set SERVICE_BASE_URL."
        )
    GGUFModel(model.removeprefix("gguf/"), **model_args)  # one line here, not a server's log


@contextmanager
def served(model: str, model_args: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The embedded ``model`` served with ``model_args`` while the block runs: the model name
    and eval settings that reach it (checked by ``check_servable`` first)."""
    from cmi_inspect.local_model.served import serve_engine

    name = model.removeprefix("gguf/")
    with serve_engine(name, model_args) as server:
        # the server takes its fresh key only: Inspect's provider reads it from here
        os.environ[f"{SERVED_SERVICE.upper().replace('-', '_')}_API_KEY"] = server.api_key
        settings = {"model_base_url": server.url, "max_connections": model_args["parallel"]}
        yield f"openai-api/{SERVED_SERVICE}/{server.model}", settings


@contextmanager
def only_run(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s run lock: a second ``cmi-inspect run`` on it stops with one line
    instead of doing all the work again beside the first."""
    path = folder / LOCK_FILE
    try:
        opened = path.open("a")
    except OSError as ex:  # a folder in its place, an immutable or unwritable file
        raise UserError(
            f"Cannot open the run lock {path}: {ex.strerror or ex}; remove it or use another "
            "log folder."
        ) from None
    with opened as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(
                f"Another cmi-inspect run is writing to {folder}: wait for it to end, or use "
                "another log folder."
            ) from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def refuse_other_data(log_dir: str, version: str, digest: str) -> None:
    """One line, before anything runs, when ``log_dir`` holds runs on other data or of
    another task version: resuming would mix results scored against two answer keys."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    if not Path(log_dir).is_dir():
        return
    for info in list_eval_logs(log_dir):
        header = read_eval_log(info.name, header_only=True)
        if not is_causal_locomo(header.eval) or str(header.eval.task_version) == version:
            continue
        theirs = (header.eval.metadata or {}).get("data_sha256")
        why = (
            f"data with sha256 {theirs[:12]}..., not the {digest[:12]}... given now"
            if theirs and theirs != digest
            else f"task version {header.eval.task_version}, not {version}"
        )
        raise UserError(
            f"{log_dir} holds runs of {why} ({Path(info.name).name}); resuming would mix "
            "their results with new ones: use another log folder, or remove those logs."
        )


def newest_logs(names: list[str], log_dir: str) -> dict[str, tuple[EvalLogInfo, EvalLog]]:
    """The newest log in the folder of each run among ``names`` that has one (its header)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    newest: dict[str, tuple[EvalLogInfo, EvalLog]] = {}
    for info in list_eval_logs(log_dir) if names and Path(log_dir).is_dir() else []:
        header = read_eval_log(info.name, header_only=True)
        task = header.eval.task_display_name
        if task in names and (
            task not in newest or (info.mtime or 0) > (newest[task][0].mtime or 0)
        ):
            newest[task] = (info, header)
    return newest


def not_succeeded(names: list[str], logs: list[EvalLog]) -> list[str]:
    """The runs among ``names`` that no log of ``logs`` says succeeded."""
    status = {log.eval.task_display_name: log.status for log in logs}
    return [name for name in names if status.get(name) != "success"]


def interrupted(names: list[str], logs: list[EvalLog], log_dir: str) -> bool:
    """Whether a Ctrl-C ended the runs ``names``: one was cancelled, stopped or never started
    (eval_set can return without the run a Ctrl-C interrupted); a run that failed is none."""
    left = not_succeeded(names, logs)
    newest = newest_logs(left, log_dir)
    return any(n not in newest or newest[n][1].status in ("cancelled", "started") for n in left)


def unfinished(names: list[str], logs: list[EvalLog], log_dir: str) -> list[str]:
    """The runs among ``names`` that did not succeed, each with what happened to it: eval_set
    can return after a Ctrl-C without the run it interrupted, and rows run apart return no
    log here, so the folder is read too."""
    left = not_succeeded(names, logs)
    newest = newest_logs(left, log_dir)
    return [
        f"{name} ({left_behind(*newest[name]) if name in newest else 'not started'})"
        for name in left
        if name not in newest or newest[name][1].status != "success"  # run apart, finished
    ]


def left_behind(info: EvalLogInfo, header: EvalLog) -> str:
    """What a run's newest log holds: its status and the samples it kept ("interrupted: 2 of
    3 samples kept")."""
    from inspect_ai.log import read_eval_log_sample_summaries

    kept = sum(1 for s in read_eval_log_sample_summaries(info.name) if s.error is None)
    planned = len(header.eval.dataset.sample_ids or []) * (header.eval.config.epochs or 1)
    what = {"cancelled": "interrupted", "error": "failed", "started": "stopped"}.get(
        header.status, header.status
    )
    return f"{what}: {kept} of {planned} samples kept"
