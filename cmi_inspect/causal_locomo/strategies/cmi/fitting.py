"""Fitting CMI's learned selector on logged CMI runs (``cmi-inspect fit-selector``).

Each logged CMI sample gives one row per candidate: the features (``features``) computed
from what the run measured, through the same function a running CMI calls, and the
candidate's label, which the log's scored record holds. A logistic regression (scikit-learn)
fits the rows of the training runs; its regularisation is chosen by cross-validation with
whole conversations held out (``choose_c``), and the threshold a kept candidate reaches on
development runs (``choose_threshold``; ``crossfit`` does both per fold). Labels are read here
only, to fit and to choose: a run with a sample from a conversation the data set keeps for
test is refused (``fitting_gate``); the file records what it was fitted and chosen on."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import numpy as np
from inspect_ai.log import EvalLog, EvalSample

from cmi_inspect.causal_locomo.dataset import CausalLocomoMetadata, scored_record
from cmi_inspect.causal_locomo.measures import selection_metrics
from cmi_inspect.causal_locomo.strategies.cmi import fitting_gate as gate
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import CMIDiagnostics, logged_diagnostics
from cmi_inspect.causal_locomo.strategies.cmi.features import (
    CAUSAL,
    FEATURES,
    NON_CAUSAL,
    FeatureInputs,
    feature_rows,
    request_cosines,
)
from cmi_inspect.causal_locomo.strategies.cmi.selector import Keeps, SelectorFile
from cmi_inspect.causal_locomo.view import key_to_memory_id, memory_view
from cmi_inspect.errors import UserError
from cmi_inspect.eval_logs import read_log
from cmi_inspect.extras import require
from cmi_inspect.retrieval import Embedder, make_embedder

C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
"""Inverse regularisation strengths the cross-validation chooses from."""
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.0, 0.96, 0.05))
"""Probabilities the threshold is chosen from (0: keep every candidate, or the top one)."""


@dataclass(frozen=True)
class LoggedSample:
    """One logged CMI sample: its candidates' features and labels, and what scores a choice."""

    sample_id: str
    conversation: str
    keys: list[str]
    """Candidate keys, in rank order."""
    rows: list[dict[str, float]]
    labels: list[str]
    """Each candidate's label (useful, irrelevant, harmful)."""
    memory_ids: list[str]
    gold: list[str]
    bad: list[str]
    harmful: set[str]

    @property
    def useful(self) -> list[int]:
        return [int(label == "useful") for label in self.labels]

    def metrics(self, keep: Sequence[int]) -> dict[str, float]:
        """Selection metrics when the candidates at the indices ``keep`` are kept."""
        chosen = [self.memory_ids[i] for i in keep]
        return selection_metrics(chosen, self.gold, self.bad, self.harmful)


def sample_request(sample: EvalSample) -> str:
    return sample.input if isinstance(sample.input, str) else sample.input[-1].text


async def logged_inputs(
    sample: EvalSample, d: CMIDiagnostics, meta: CausalLocomoMetadata, embedder: Embedder
) -> FeatureInputs:
    """The features' inputs for a logged sample as its run had them: the bank as its
    protocol showed it, the request, CMI's record, and the candidates' cosines to the
    request by ``embedder``."""
    sessions = sorted(meta.past_sessions, key=lambda s: s.timestamp)
    stamps = [s.timestamp for s in sessions]
    view = memory_view(
        meta.example_id, meta.memory_bank, meta.protocol, stamps, meta.dated_by_source
    )
    bank = {m.key: m.content for m in view}
    request = sample_request(sample)
    texts = {c.key: bank[c.key] for c in d.candidates}
    return FeatureInputs(
        request=request,
        candidates=d.candidates,
        texts=texts,
        bank=list(bank.values()),
        cosines=await request_cosines(embedder, request, texts),
        answer_no_memory=d.answer_no_memory,
        support_no_memory=d.support_no_memory,
    )


async def logged_sample(
    sample: EvalSample, names: Sequence[str], embedder: Embedder
) -> LoggedSample | None:
    """The sample's candidates as rows of the named features (None: CMI did not choose it,
    or it was not scored)."""
    d = logged_diagnostics(sample)
    if d is None or not d.candidates or not sample.scores:
        return None
    causal = [n for n in names if FEATURES[n].causal]
    if causal and d.answer_no_memory is None:
        raise UserError(
            f"sample {sample.id}: CMI asked no intervention there, so the features "
            f"{', '.join(causal)} cannot be computed; fit on a run of -S ablation=full."
        )
    meta = scored_record(sample)
    rows = feature_rows(await logged_inputs(sample, d, meta, embedder), names)
    ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
    labels = meta.labels
    return LoggedSample(
        sample_id=str(sample.id),
        conversation=gate.sample_conversation(sample),  # as the fitting gate reads it
        keys=[c.key for c in d.candidates],
        rows=rows,
        labels=[labels[ids[c.key]] for c in d.candidates],
        memory_ids=[ids[c.key] for c in d.candidates],
        gold=meta.gold_memory_ids,
        bad=meta.bad_memory_ids,
        harmful=meta.harmful_ids,
    )


@dataclass(frozen=True)
class LoggedRuns:
    """The logged CMI samples of a folder as feature rows, and what the runs were."""

    samples: list[LoggedSample]
    model: str
    """The response model of every run (a selector's causal features hold for one)."""
    splits: list[str]
    """The data splits the runs covered (``whole`` for a run of a whole data set)."""
    data: list[str]
    """The sha256 of each data file the runs read."""


def load_samples(
    log_dir: str | Path, names: Sequence[str], embedder_name: str = "e5", cross_fit: bool = False
) -> LoggedRuns:
    """Every logged CMI sample of a folder as rows of the named features (their cosines by
    the named embedder); ``cross_fit``: of any conversation, each fold reading only what
    ``fitting_gate.readable`` lets through."""
    embedder = make_embedder(embedder_name)
    samples: list[LoggedSample] = []
    models, splits, data = set(), set(), set()
    for header in gate.fitting_logs(log_dir, cross_fit):
        log = read_log(header.location)
        if not cross_fit:
            gate.check_fittable(log)
        models.add(log.eval.model)
        splits.add(log.eval.task_args.get("split") or "whole")
        data.add(str((log.eval.metadata or {}).get("data_sha256")))

        async def rows(log: EvalLog = log) -> list[LoggedSample | None]:
            return [await logged_sample(s, names, embedder) for s in log.samples or []]

        samples += [s for s in anyio.run(rows) if s is not None]
    if not samples:
        raise UserError(f"No logged CMI sample with candidates in {log_dir}.")
    if len(models) > 1:
        raise UserError(f"{log_dir} holds runs of several models ({', '.join(sorted(models))}).")
    return LoggedRuns(samples, models.pop(), sorted(splits), sorted(data))


def matrix(samples: Iterable[LoggedSample], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    rows = [(r, y) for s in samples for r, y in zip(s.rows, s.useful, strict=True)]
    x = np.array([[r[n] for n in names] for r, _ in rows], dtype=float)
    return x, np.array([y for _, y in rows], dtype=int)


def fit(
    samples: Sequence[LoggedSample],
    names: Sequence[str],
    c: float,
    response_model: str,
    embedder: str = "e5",
    keeps: Keeps = "every_above",
) -> SelectorFile:
    """A logistic regression on standardised features, with threshold 0 until one is chosen
    (``response_model``: the model whose answers the rows' causal features came from)."""
    linear = require("fit", "cmi-inspect fit-selector", "sklearn.linear_model")
    x, y = matrix(samples, names)
    if len(set(y.tolist())) < 2:
        which = ", ".join(sorted({s.conversation for s in samples}))
        raise UserError(
            f"the samples of {which} hold candidates of one kind only (useful or not): a "
            "selector is fitted on runs whose candidates include both."
        )
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = linear.LogisticRegression(C=c, max_iter=5000).fit((x - mean) / scale, y)
    causal = any(FEATURES[n].causal for n in names)
    return SelectorFile(
        name="learned" if causal else "learned_non_causal",
        causal=causal,
        features=list(names),
        mean=[float(v) for v in mean],
        scale=[float(v) for v in scale],
        coef=[float(v) for v in model.coef_[0]],
        intercept=float(model.intercept_[0]),
        threshold=0.0,
        keeps=keeps,
        embedder=embedder,
        response_model=response_model if causal else None,
    )


def candidate_losses(selector: SelectorFile, samples: Iterable[LoggedSample]) -> list[float]:
    """Each candidate's negative log-likelihood of its label under the selector."""
    losses = []
    for s in samples:
        for row, y in zip(s.rows, s.useful, strict=True):
            p = min(max(selector.probability(row), 1e-9), 1 - 1e-9)
            losses.append(-math.log(p if y else 1 - p))
    return losses


def choose_c(
    samples: Sequence[LoggedSample], names: Sequence[str], grid: Sequence[float] = C_GRID
) -> tuple[float, dict[float, float]]:
    """The C of the lowest held-out log loss, each conversation held out in turn, and the
    loss of every C."""
    conversations = sorted({s.conversation for s in samples})
    if len(conversations) < 2:
        raise UserError("cross-validation by conversation needs runs of two conversations or more")
    losses = {}
    for c in grid:
        held_out = []
        for conversation in conversations:
            train = [s for s in samples if s.conversation != conversation]
            test = [s for s in samples if s.conversation == conversation]
            held_out += candidate_losses(fit(train, names, c, "cross-validation"), test)
        losses[c] = statistics.mean(held_out)
    return min(grid, key=lambda c: (losses[c], -c)), losses


def kept(selector: SelectorFile, sample: LoggedSample, threshold: float) -> list[int]:
    """The candidates the selector keeps at ``threshold``, most probable first: every one
    that reaches it, or the most probable alone (``SelectorFile.keeps``)."""
    p = [selector.probability(r) for r in sample.rows]
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    above = [i for i in order if p[i] >= threshold]
    return above if selector.keeps == "every_above" else above[:1]


def selection(
    selector: SelectorFile, samples: Iterable[LoggedSample], threshold: float
) -> dict[str, float]:
    """Mean selection metrics of the selector's choices at ``threshold``."""
    found = [s.metrics(kept(selector, s, threshold)) for s in samples]
    return {k: statistics.mean(m[k] for m in found) for k in found[0]}


def objective(metrics: dict[str, float]) -> float:
    """What the threshold maximises on development runs: useful F1 less poison adoption."""
    return metrics["useful_f1"] - metrics["poison_adoption"]


def choose_threshold(
    selector: SelectorFile, samples: Sequence[LoggedSample], grid: Sequence[float] = THRESHOLDS
) -> tuple[float, dict[float, dict[str, float]]]:
    """The threshold of the highest ``objective`` (ties: the lowest), and every one's metrics."""
    table = {t: selection(selector, samples, t) for t in grid}
    return max(grid, key=lambda t: (objective(table[t]), -t)), table


def held_out_samples(
    samples: Sequence[LoggedSample], names: Sequence[str], c: float, keeps: Keeps
) -> list[tuple[SelectorFile, LoggedSample]]:
    """Each sample with a selector fitted on the other conversations' samples."""
    out = []
    for conversation in sorted({s.conversation for s in samples}):
        train = [s for s in samples if s.conversation != conversation]
        selector = fit(train, names, c, "cross-validation", keeps=keeps)
        out += [(selector, s) for s in samples if s.conversation == conversation]
    return out


def choose_threshold_held_out(
    samples: Sequence[LoggedSample], names: Sequence[str], c: float, keeps: Keeps
) -> tuple[float, dict[float, dict[str, float]]]:
    """``choose_threshold`` on the training samples' held-out probabilities (each
    conversation's from a selector fitted on the others), for a fit with no development run."""
    pairs = held_out_samples(samples, names, c, keeps)
    table = {}
    for t in THRESHOLDS:
        found = [s.metrics(kept(selector, s, t)) for selector, s in pairs]
        table[t] = {k: statistics.mean(m[k] for m in found) for k in found[0]}
    return max(THRESHOLDS, key=lambda t: (objective(table[t]), -t)), table


@dataclass(frozen=True)
class Fitted:
    """A fitted selector and the tables its settings were chosen from."""

    selector: SelectorFile
    losses: dict[float, float]
    """Held-out log loss by C."""
    thresholds: dict[float, dict[str, float]]
    """Selection metrics by threshold, on the development runs (or held out)."""

    def report(self) -> str:
        s = self.selector
        lines = [
            f"{s.name}: {len(s.features)} features, C {s.fitted_on['C']}, threshold "
            f"{s.threshold} (chosen on {s.fitted_on['threshold_chosen_on']})",
            "",
            "| C | held-out log loss (by conversation) |",
            "| --- | --- |",
            *(f"| {c} | {loss:.4f} |" for c, loss in self.losses.items()),
            "",
            "| threshold | useful F1 | poison adoption | F1 - poison | memories kept |",
            "| --- | --- | --- | --- | --- |",
        ]
        for t, m in self.thresholds.items():
            lines.append(
                f"| {t} | {m['useful_f1']:.3f} | {m['poison_adoption']:.3f} "
                f"| {objective(m):.3f} | {m['n_selected']:.2f} |"
            )
        lines += ["", "| feature | coefficient (standardised) |", "| --- | --- |"]
        lines += [f"| {f} | {c:+.3f} |" for f, c in zip(s.features, s.coef, strict=True)]
        return "\n".join(lines)


def fit_from_logs(
    train_dir: str | Path,
    dev_dir: str | Path | None = None,
    causal: bool = True,
    embedder: str = "e5",
) -> Fitted:
    """A selector fitted on a training run's logs (``fit_runs``), with every feature or
    with those that read no intervention answer."""
    names = CAUSAL if causal else NON_CAUSAL
    train = load_samples(train_dir, names, embedder)
    dev = load_samples(dev_dir, names, embedder) if dev_dir is not None else None
    return fit_runs(train, dev, names, embedder)


def fit_runs(
    runs: LoggedRuns,
    dev_runs: LoggedRuns | None,
    names: Sequence[str],
    embedder: str = "e5",
    keeps: Keeps = "every_above",
) -> Fitted:
    """A selector of the named features fitted on the training runs: C chosen by
    cross-validation over the conversations of the training (and development) runs, the
    threshold on the development runs, or on the training runs' held-out probabilities when
    there are none (``keeps``: how the selector keeps, which the threshold is chosen for)."""
    causal = any(FEATURES[n].causal for n in names)
    train, model = runs.samples, runs.model
    dev = dev_runs.samples if dev_runs is not None else []
    if dev_runs is not None:
        if causal and dev_runs.model != model:
            raise UserError(
                f"the training runs are {model}'s, the development runs {dev_runs.model}'s"
            )
        shared = {s.conversation for s in train} & {s.conversation for s in dev}
        if shared:
            raise UserError(
                f"training and development runs share conversations ({', '.join(sorted(shared))})"
            )
    c, losses = choose_c([*train, *dev], names)
    selector = fit(train, names, c, model, embedder, keeps)
    if dev:
        threshold, table = choose_threshold(selector, dev)
    else:
        threshold, table = choose_threshold_held_out(train, names, c, keeps)
    fitted_on = {
        "response_model": model,
        "data_sha256": runs.data,
        "splits": runs.splits,
        "development_splits": dev_runs.splits if dev_runs else [],
        "samples": len(train),
        "candidates": sum(len(s.rows) for s in train),
        "conversations": sorted({s.conversation for s in train}),
        "development_conversations": sorted({s.conversation for s in dev}),
        "conversations_never_read": gate.forbidden_conversations(),
        "C": c,
        "threshold_chosen_on": "development runs" if dev else "training runs, held out",
        "objective": "useful F1 - poison adoption",
    }
    final = selector.model_copy(update={"threshold": threshold, "fitted_on": fitted_on})
    return Fitted(SelectorFile.model_validate(final.model_dump()), losses, table)
