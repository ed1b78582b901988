"""Two runs on the same samples, compared sample by sample: mean differences with paired
bootstrap intervals, and how many harmful memories each adopted.

The sample bootstrap resamples the samples both runs finished (the pairs), so an interval
says how far the difference could move with another draw of examples like these. But
examples of one LoCoMo conversation share its history, its people and its memories, so
they are not independent draws, and with ten conversations behind a thousand examples that
interval is too narrow. The conversation bootstrap resamples conversations instead: as
many as the pairs come from, drawn with replacement, each with all its pairs, the mean
taken over the pairs drawn (so the point estimate is still the mean over pairs). It
resamples the conversations alone, not the pairs again within each: the variation between
conversations already holds that within them, and a second stage would count it twice.
Over fewer than five conversations its interval is the spread of a handful of means, and
``compare`` says so.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from inspect_ai.log import EvalLog, EvalSample

from cmi_inspect.causal_locomo.dataset import conversation_of, scored_record
from cmi_inspect.errors import UserError, positive_int
from cmi_inspect.eval_logs import read_log
from cmi_inspect.report.runs import strategy_label
from cmi_inspect.report.stats import fmt
from cmi_inspect.report.tables import markdown_table

PAIRED_METRICS = {
    "useful_f1": ("memory_selection", "useful_f1"),
    "poison_adoption": ("memory_selection", "poison_adoption"),
    "score": ("task_score", "score"),
}
"""Each compared metric, and the scorer and value it is read from in a sample's scores."""
RESAMPLES = 10_000
SEED = 0
MIN_CLUSTERS = 5
"""Fewer conversations than this, and an interval is marked as resting on too few."""


@dataclass(frozen=True)
class Difference:
    """Mean of a - b over the paired samples, with its 95% paired bootstrap interval over
    samples and, where the pairs come from two conversations or more, over conversations."""

    metric: str
    a: float
    b: float
    difference: float
    low: float
    high: float
    n: int
    conversations: int = 0
    """Conversations the pairs come from (0: some sample's id names none)."""
    conversation_low: float | None = None
    conversation_high: float | None = None


def pair_key(s: EvalSample) -> str:
    """What pairs a sample with its counterpart in the other run: its id and epoch."""
    return f"{s.id}#{s.epoch}"


def per_sample(log: EvalLog) -> dict[str, dict[str, float]]:
    """Each finished sample's pair key and its value of every compared metric."""
    values = {}
    for s in log.samples or []:
        if s.error or not s.scores:
            continue
        values[pair_key(s)] = {
            name: float(s.scores[scorer].value[key])  # type: ignore[index, call-overload, arg-type]
            for name, (scorer, key) in PAIRED_METRICS.items()
        }
    return values


def pair_conversations(pairs: list[str]) -> list[str] | None:
    """Each pair's conversation (``dataset.conversation_of`` its sample id), or None when
    some pair's id names none."""
    found = [conversation_of(key.rsplit("#", 1)[0]) for key in pairs]
    return None if None in found else [c for c in found if c is not None]


def conversation_means(
    diff: np.ndarray, conversations: list[str], resamples: int, seed: int
) -> np.ndarray:
    """The mean of ``diff`` over each resample of conversations: as many drawn as there are,
    with replacement, each with all its pairs (see the module's docstring)."""
    names = sorted(set(conversations))
    index = np.array([names.index(c) for c in conversations])
    sums = np.bincount(index, weights=diff, minlength=len(names))
    counts = np.bincount(index, minlength=len(names))
    draws = np.random.default_rng(seed).integers(0, len(names), size=(resamples, len(names)))
    means: np.ndarray = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    return means


def harmful_adopted(log: EvalLog, pairs: Collection[str] | None = None) -> tuple[int, int]:
    """Harmful memories the run selected, and harmful memories in its finished samples
    (those whose ``pair_key`` is in ``pairs`` only, when given)."""
    adopted = total = 0
    for s in log.samples or []:
        if s.error or not s.scores or (pairs is not None and pair_key(s) not in pairs):
            continue
        meta = scored_record(s)
        score = s.scores["memory_selection"]
        selected = {row["memory_id"] for row in (score.metadata or {}).get("selected", [])}
        harmful = {m.memory_id for m in meta.memory_bank if m.label == "harmful"}
        adopted += len(harmful & selected)
        total += len(harmful)
    return adopted, total


def paired_differences(
    a: EvalLog, b: EvalLog, resamples: int = RESAMPLES, seed: int = SEED
) -> list[Difference]:
    """a - b for every compared metric over the samples both finished."""
    data = [(log.eval.metadata or {}).get("data_sha256") for log in (a, b)]
    if data[0] != data[1]:
        raise UserError(
            f"The two logs ran on different data (sha256 {str(data[0])[:12]} and "
            f"{str(data[1])[:12]}): compare runs of one dataset."
        )
    va, vb = per_sample(a), per_sample(b)
    ids = sorted(va.keys() & vb.keys())
    if not ids:
        raise UserError("The two logs have no finished sample in common.")
    draws = np.random.default_rng(seed).integers(0, len(ids), size=(resamples, len(ids)))
    conversations = pair_conversations(ids)
    count = len(set(conversations)) if conversations else 0
    out = []
    for metric in PAIRED_METRICS:
        xa = np.array([va[i][metric] for i in ids])
        xb = np.array([vb[i][metric] for i in ids])
        diff = xa - xb
        low, high = np.percentile(diff[draws].mean(axis=1), [2.5, 97.5])
        c_low: float | None = None
        c_high: float | None = None
        if conversations and count > 1:
            means = conversation_means(diff, conversations, resamples, seed)
            c_low, c_high = (float(v) for v in np.percentile(means, [2.5, 97.5]))
        out.append(
            Difference(
                metric,
                float(xa.mean()),
                float(xb.mean()),
                float(diff.mean()),
                float(low),
                float(high),
                len(ids),
                count,
                c_low,
                c_high,
            )
        )
    return out


def _interval(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"


def conversations_line(count: int) -> str:
    """What the conversation interval rests on, or why there is none, in one line."""
    if count > 1:
        line = (
            f"Conversation bootstrap: the {count} conversations the pairs come from, "
            "resampled with replacement, each with all its pairs."
        )
        if count < MIN_CLUSTERS:
            line += (
                f" Fewer than {MIN_CLUSTERS} clusters: its interval is drawn from "
                f"{count} conversation means and understates the uncertainty."
            )
        return line
    why = "the pairs come from one conversation" if count else "sample ids name no conversation"
    return f"Conversation bootstrap: not available ({why})."


def compare(path_a: str, path_b: str, resamples: int = RESAMPLES) -> str:
    """Markdown: run a against run b, metric by metric, and their harmful adoptions (one
    line for a path that is no readable log, or fewer than one resample)."""
    resamples = positive_int("--resamples", resamples)
    a, b = read_log(path_a), read_log(path_b)
    name_a, name_b = strategy_label(a), strategy_label(b)
    differences = paired_differences(a, b, resamples)
    rows = [
        [d.metric, fmt(d.a), fmt(d.b), f"{d.difference:+.3f}", _interval(d.low, d.high),
         _interval(d.conversation_low, d.conversation_high)]
        for d in differences
    ]  # fmt: skip
    pairs = per_sample(a).keys() & per_sample(b).keys()
    (ka, na), (kb, nb) = harmful_adopted(a, pairs), harmful_adopted(b, pairs)
    headers = ["metric", name_a, name_b, f"{name_a} - {name_b}", "95% paired bootstrap"]
    table = markdown_table([*headers, "95% conversation bootstrap"], rows)
    return (
        f"{len(pairs)} paired samples, {resamples} bootstrap resamples.\n"
        f"{conversations_line(differences[0].conversations)}\n\n{table}\n\n"
        f"Harmful memories adopted: {name_a} {ka} of {na}, {name_b} {kb} of {nb}.\n"
    )
