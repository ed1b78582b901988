"""Read a directory of Causal-LoCoMo logs into one summary per strategy run.

Everything comes from the logs: the headline means and standard errors from
each log's own metrics, costs and CMI's candidates from its samples, and the
memory labels from each sample's metadata (scorers' data, never shown to a
blind strategy). Unreadable logs, other tasks and unfinished runs are named
in notes instead of stopping the report. A folder may hold symbolic links to
logs kept elsewhere (a selection of runs to table together): they are followed
(``logs``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log

from cmi_inspect.causal_locomo import reference
from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_SHA256
from cmi_inspect.causal_locomo.dataset import scored_record
from cmi_inspect.causal_locomo.log_tags import ISOLATED, TASK_NAME, is_causal_locomo, strategy_of
from cmi_inspect.causal_locomo.log_tags import strategy_label as plan_label
from cmi_inspect.causal_locomo.protocol import logged_protocol
from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.causal_locomo.strategies import STRATEGIES
from cmi_inspect.causal_locomo.view import key_to_memory_id
from cmi_inspect.eval_logs import log_files
from cmi_inspect.report.provenance import Provenance, provenance, wall_clock
from cmi_inspect.report.sample_cost import cache_hits, model_calls, token_usage
from cmi_inspect.report.samples import SampleRow, ranked_f1, sample_rows
from cmi_inspect.report.stats import Mean
from cmi_inspect.report.verify import LogCheck, verify_clean

ALIAS_JUDGE = "alias match"
"""The judge of a run with no grader role: the offline alias match (``judge.alias_verdict``)."""
SCORE_KEYS = ("score", "success")
METRIC_KEYS = (*SCORE_KEYS, "useful_f1", "recall", "precision", "bad_rejection",
               "poison_adoption", "n_selected")  # fmt: skip
"""Table 1's metrics (of ``scoring.SELECTION_KEYS``: the four the paper reports, recall and
precision beside useful F1), as named in the logs' results."""
FAMILY_METRIC = "score"
FAMILY_PREFIX = "grouped_"
"""The task score by family: the log's ``grouped`` values of the ``score`` metric."""


@dataclass(frozen=True)
class DataSet:
    """The data a run was scored on: runs on two of them are never one row."""

    name: str
    """``release``, ``xl``, or the ``data_file`` as the run was given it."""
    sha256: str
    """The data file's sha256, as the task logged it ('' in a log that predates it)."""
    task_families: tuple[str, ...] = ()
    """The families the run was restricted to (none: every family)."""
    examples: int = 0
    """The examples the task had (after the family restriction, before any ``--limit``)."""
    bank_size: int | None = None
    """``-T bank_size``: each bank drawn down to this many memories (None: whole banks)."""

    @property
    def title(self) -> str:
        """``release (sha256 413b490d77ac..., 87 examples)``, naming any family restriction
        and a bank drawn down (``banks of 8``)."""
        digest = f"sha256 {self.sha256[:12]}..." if self.sha256 else "sha256 not logged"
        families = f", families {', '.join(self.task_families)}" if self.task_families else ""
        banks = f", banks of {self.bank_size}" if self.bank_size else ""
        return f"{self.name} ({digest}, {self.examples} examples{families}{banks})"

    @property
    def is_release(self) -> bool:
        """The whole release, as the paper ran it: every family, the published file."""
        release = ("release", CAUSAL_LOCOMO_SHA256, (), None)
        return (self.name, self.sha256, self.task_families, self.bank_size) == release


@dataclass
class Run:
    """One strategy run, summarised over its samples."""

    strategy: str
    model: str
    protocol: str
    judge: str
    """The judge share's scorer: the grader model(s), or the offline alias match."""
    log: str
    samples: int
    """Distinct samples with a finished epoch (what the means are over)."""
    failed: int
    """Sample runs (one per sample and epoch) that ended in an error."""
    metrics: dict[str, Mean]
    calls: float
    cache_hits: float
    """Calls per sample answered from Inspect's model-call cache (a part of ``calls``)."""
    input_tokens: float
    output_tokens: float
    seconds_per_sample: float
    by_family: dict[str, Mean]
    """Task score by family: the log's own means, standard errors over the samples."""
    by_attack_kind: dict[str, Mean]
    """Poison adoption by the kind of harmful memory, over the samples that have one."""
    judge_errors: int = 0
    """Samples whose grader reply was no readable verdict (scored 0)."""
    extraction_failures: int = 0
    """Samples whose strategy records a failed extraction (``details.extraction_failed``, as
    mem0's ``infer=true`` does); they are scored with the selection they got."""
    candidates: list[dict[str, Any]] = field(default_factory=list)
    """CMI's candidates, each with its example id and memory label."""
    data: DataSet = DataSet("release", "")
    scoring: str = "paper"
    """How success was counted (``scorers.SCORINGS``)."""
    epochs: int = 1
    whole_dataset: bool = True
    """Whether the run covered every example of its data (no ``--limit`` or ``--sample-id``)."""
    wall_clock: float = math.nan
    """Seconds from the run's start to its end, as its log records them."""
    provenance: Provenance | None = None
    location: str = ""
    """The log's path, as the folder's listing found it."""
    rows: list[SampleRow] = field(default_factory=list)
    """Its scored samples, for the breakdowns by group (``breakdown``)."""
    f1_at: dict[str, Mean] = field(default_factory=dict)
    """F1@k (``f1_at_1``, ``f1_at_3``) over its samples; empty when the strategy does not rank."""
    check: LogCheck | None = None
    """Its re-scoring in a clean process (``verify``); None: not verified."""

    @property
    def verified(self) -> bool:
        """Whether every sample re-scored, in a clean process, to its logged figures."""
        return self.check is not None and self.check.verified

    @property
    def tokens_per_sample(self) -> float:
        """Model tokens a sample spent, input and output."""
        return self.input_tokens + self.output_tokens

    @property
    def setting(self) -> str:
        """The protocol, with the scoring when it is not the protocol's default."""
        shown = logged_protocol(self.protocol)
        default = shown.scoring if shown else None
        return self.protocol if self.scoring == default else f"{self.protocol}, {self.scoring}"

    @property
    def paper_settings(self) -> bool:
        """Whether the paper's figures may stand beside this run: one of the paper's
        strategies with its default arguments, on the whole release, under the paper's
        protocol and scoring."""
        return (
            self.strategy in reference.TABLE1
            and self.data.is_release
            and self.whole_dataset
            and (self.protocol, self.scoring) == ("paper", "paper")
        )


def strategy_label(log: EvalLog) -> str:
    """The run's strategy and the solver arguments set, as its log names it."""
    return plan_label(log.plan)


NOT_ISOLATED = " (not isolated: no sandbox ran)"


def isolation_label(label: str, samples: list[EvalSample]) -> str:
    """The run's label, saying so when it asked for a sandbox that did not run."""
    kinds = {s.store_as(MemorySelection).isolation for s in samples}
    return label + NOT_ISOLATED if ISOLATED in label and "none" in kinds else label


def log_metrics(log: EvalLog) -> tuple[dict[str, Mean], dict[str, float]]:
    """Table 1's means and standard errors, and the family means, from the log's results."""
    metrics: dict[str, Mean] = {}
    families: dict[str, float] = {}
    for score in log.results.scores if log.results else []:
        if score.name in METRIC_KEYS:
            values = score.metrics
            stderr = values["stderr"].value if "stderr" in values else math.nan
            metrics[score.name] = Mean(values["mean"].value, stderr, score.scored_samples or 0)
        if score.name == FAMILY_METRIC:
            families = {
                k.removeprefix(FAMILY_PREFIX): m.value
                for k, m in score.metrics.items()
                if k.startswith(FAMILY_PREFIX)
            }
    for key in METRIC_KEYS:
        metrics.setdefault(key, Mean(math.nan, math.nan, 0))
    return metrics, dict(sorted(families.items()))


def labelled_candidates(sample: EvalSample) -> list[dict[str, Any]]:
    """CMI's candidates of one sample, each joined with its memory's label."""
    details = sample.store_as(MemorySelection).details
    if not details.get("candidates"):
        return []
    meta = scored_record(sample)
    ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
    labels = meta.labels
    return [
        {"example_id": meta.example_id, "label": labels[ids[c["key"]]], **c}
        for c in details["candidates"]
    ]


def over_samples(values: dict[Any, list[float]]) -> Mean:
    """The mean over samples of each sample's mean over its epochs (as Inspect reduces
    epochs), so that a sample run twice counts once."""
    return Mean.of([sum(v) / len(v) for v in values.values()])


def family_scores(samples: list[EvalSample], logged: dict[str, float]) -> dict[str, Mean]:
    """Task score by family: the log's means (when it has them) with per-sample errors."""
    values: dict[str, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        score = (s.scores or {})["task_score"].value
        assert isinstance(score, dict)
        family = scored_record(s).task_family
        values[family][s.id].append(float(score["score"]))
    out = {}
    for family, scores in sorted(values.items()):
        m = over_samples(scores)
        out[family] = Mean(logged.get(family, m.mean), m.stderr, m.n)
    return out


def poison_by_kind(samples: list[EvalSample]) -> dict[str, Mean]:
    """Share of a sample's harmful memories of each kind that the strategy selected."""
    adopted: dict[str, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        meta = scored_record(s)
        score = (s.scores or {})["memory_selection"]
        selected = {row["memory_id"] for row in (score.metadata or {}).get("selected", [])}
        kinds: dict[str, list[bool]] = defaultdict(list)
        for m in meta.memory_bank:
            if m.label == "harmful" and m.attack_kind:
                kinds[m.attack_kind].append(m.memory_id in selected)
        for kind, picked in kinds.items():
            adopted[kind][s.id].append(sum(picked) / len(picked))
    return {kind: over_samples(values) for kind, values in sorted(adopted.items())}


def judge_of(log: EvalLog) -> str:
    """Who scored the judge share: the model(s) bound to the grader role, else the alias match."""
    grader = (log.eval.model_roles or {}).get("grader")
    if grader is None:
        return ALIAS_JUDGE
    configs = grader if isinstance(grader, list) else [grader]
    return "+".join(c.model for c in configs)


def judge_errors(samples: list[EvalSample]) -> int:
    return sum(
        1
        for s in samples
        if isinstance(v := (s.scores or {})["task_score"].value, dict) and v.get("judge_error")
    )


def extraction_failures(samples: list[EvalSample]) -> int:
    return sum(1 for s in samples if s.store_as(MemorySelection).details.get("extraction_failed"))


def data_set(log: EvalLog) -> DataSet:
    """The data a logged run was scored on, from its task arguments and metadata."""
    args = log.eval.task_args or {}
    families = args.get("task_families") or ()
    if isinstance(families, str):
        families = [f.strip() for f in families.split(",") if f.strip()]
    return DataSet(
        name=str(args.get("data_file") or args.get("dataset") or "release"),
        sha256=str((log.eval.metadata or {}).get("data_sha256") or ""),
        task_families=tuple(sorted(families)),
        examples=log.eval.dataset.samples or 0,
        bank_size=int(args["bank_size"]) if args.get("bank_size") else None,
    )


def covers_dataset(log: EvalLog) -> bool:
    """Whether the run was given every example of its data."""
    dataset = log.eval.dataset
    if dataset.sample_ids is not None:
        return len(dataset.sample_ids) == dataset.samples
    return log.eval.config.limit is None and not log.eval.config.sample_id


def summarise(log: EvalLog, name: str, location: str = "") -> Run:
    all_samples = log.samples or []
    samples = [s for s in all_samples if s.error is None and s.scores]
    metrics, families = log_metrics(log)
    n = len(samples)
    args = log.eval.task_args or {}
    protocol = str(args.get("protocol", "paper"))
    shown = logged_protocol(protocol)

    def per_sample(values: list[float]) -> float:
        return sum(values) / n if n else math.nan

    usage = [token_usage(s) for s in samples]
    rows = sample_rows(samples)
    return Run(
        strategy=isolation_label(strategy_label(log), all_samples),
        model=log.eval.model,
        protocol=protocol,
        judge=judge_of(log),
        log=name,
        samples=len({s.id for s in samples}),
        failed=len(all_samples) - n,
        metrics=metrics,
        calls=per_sample([model_calls(s) for s in samples]),
        cache_hits=per_sample([cache_hits(s) for s in samples]),
        input_tokens=per_sample([u[0] for u in usage]),
        output_tokens=per_sample([u[1] for u in usage]),
        seconds_per_sample=per_sample([s.working_time or 0.0 for s in samples]),
        by_family=family_scores(samples, families),
        by_attack_kind=poison_by_kind(samples),
        judge_errors=judge_errors(samples),
        extraction_failures=extraction_failures(samples),
        candidates=[c for s in samples for c in labelled_candidates(s)],
        data=data_set(log),
        scoring=str(args.get("scoring") or (shown.scoring if shown else "paper")),
        epochs=log.eval.config.epochs or 1,
        whole_dataset=covers_dataset(log),
        wall_clock=wall_clock(log),
        provenance=provenance(log),
        location=location,
        rows=rows,
        f1_at=ranked_f1(rows),
    )


def read_runs(log_dir: str) -> tuple[list[Run], list[str]]:
    """A summary of each usable log (the newest per data set, strategy, model, protocol,
    scoring and judge), each re-scored in a clean process (``Run.check``), and notes."""
    found: dict[tuple[Any, ...], list[tuple[str, str, Run]]] = defaultdict(list)
    notes: list[str] = []
    for path in log_files(log_dir):
        name = Path(path).name
        try:
            header = read_eval_log(path, header_only=True)
            if not is_causal_locomo(header.eval):
                notes.append(f"{name}: task {header.eval.task!r} is not {TASK_NAME}; skipped")
                continue
            if header.status != "success":
                notes.append(f"{name}: status {header.status!r}; skipped")
                continue
            run = summarise(read_eval_log(path), name, path)
        except Exception as ex:  # a damaged file must not hide the others
            notes.append(f"{name}: unreadable ({type(ex).__name__}: {ex}); skipped")
            continue
        key = (run.data, run.strategy, run.model, run.protocol, run.scoring, run.judge)
        found[key].append((header.eval.created, name, run))
    runs = []
    for logs in found.values():
        *older, (_, newest, run) = sorted(logs, key=lambda x: (x[0], x[1]))
        notes += [f"{name}: superseded by the newer {newest}; skipped" for _, name, _ in older]
        runs.append(run)
    checks = verify_clean([r.location for r in runs])
    for r in runs:
        r.check = checks.get(r.location)
    order = {s: i for i, s in enumerate(STRATEGIES)}
    runs.sort(
        key=lambda r: (
            not r.data.is_release,
            r.data.name,
            r.data.sha256,
            r.data.task_families,
            r.data.bank_size or 0,
            r.model,
            r.protocol,
            r.scoring,
            r.judge,
            order.get(strategy_of(r.strategy), 99),
            r.strategy,
        )
    )
    return runs, notes
