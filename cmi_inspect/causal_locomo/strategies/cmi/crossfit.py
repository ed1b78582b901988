"""Cross-fitting CMI's learned selector (``cmi-inspect fit-selector --cross-fit``).

One fold per conversation of the logs, in sorted order: the fold holding out conversation
``c`` chooses its threshold on the next conversation (cyclically, ``folds``) and is fitted on
all the others, its C chosen by cross-validation with whole training conversations held out
(``fitting.choose_c``), its threshold by ``fitting.objective`` on the choice conversation. A
fold reads only the samples ``fitting_gate.readable`` lets through for it, never its held-out
conversation's, and records which it read. Every fold's selector keeps every candidate that
reaches its threshold; a run ranks each sample with the fold that holds out its conversation
(``selector.CrossFitFile``), so every figure is out of fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cmi_inspect.causal_locomo.strategies.cmi.features import CAUSAL, FEATURES, NON_CAUSAL
from cmi_inspect.causal_locomo.strategies.cmi.fitting import (
    LoggedRuns,
    choose_c,
    choose_threshold,
    fit,
    load_samples,
)
from cmi_inspect.causal_locomo.strategies.cmi.fitting_gate import forbidden_conversations, readable
from cmi_inspect.causal_locomo.strategies.cmi.selector import CrossFitFile, Fold
from cmi_inspect.errors import UserError

MIN_CONVERSATIONS = 3
"""A fold needs a conversation to hold out, one to choose on and one to fit on."""
UNCHOSEN_C = 1.0
"""The C of a fold trained on one conversation, where no cross-validation by conversation
can choose one (scikit-learn's default)."""
RULE = (
    "each conversation held out by one fold; the fold's threshold chosen on the next "
    "conversation in sorted order (cyclic), by useful F1 - poison adoption; its logistic "
    "regression fitted on every other conversation, C by cross-validation holding out whole "
    "training conversations"
)


def folds(conversations: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """Each fold as (held out, choice, training conversations), one per conversation; one
    line for fewer than ``MIN_CONVERSATIONS``."""
    ordered = sorted(set(conversations))
    if len(ordered) < MIN_CONVERSATIONS:
        raise UserError(
            f"cross-fitting needs logs of {MIN_CONVERSATIONS} conversations or more (one held "
            f"out, one to choose the threshold on, one to fit on); these cover "
            f"{len(ordered)}: {', '.join(ordered) or 'none'}."
        )
    out = []
    for i, held_out in enumerate(ordered):
        choice = ordered[(i + 1) % len(ordered)]
        out.append((held_out, choice, [c for c in ordered if c not in (held_out, choice)]))
    return out


@dataclass(frozen=True)
class CrossFitted:
    """The cross-fit file and, per fold, the choice conversation's metrics by threshold."""

    file: CrossFitFile
    tables: dict[str, dict[float, dict[str, float]]]
    """By held-out conversation: the choice conversation's selection metrics by threshold."""

    def report(self) -> str:
        lines = [
            f"{self.file.name}: {len(self.file.folds)} folds, {len(self.file.features)} features",
            "",
            "| held out | choice | trained on | C | threshold | useful F1 | poison adoption "
            "| memories kept |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for fold in self.file.folds:
            s = fold.selector
            m = self.tables[fold.held_out][s.threshold]
            lines.append(
                f"| {fold.held_out} | {fold.choice} | {len(fold.training)} conversations "
                f"| {s.fitted_on['C']} | {s.threshold} | {m['useful_f1']:.3f} "
                f"| {m['poison_adoption']:.3f} | {m['n_selected']:.2f} |"
            )
        lines += ["", "Metrics: the choice conversation's, at the chosen threshold."]
        return "\n".join(lines)


def cross_fit(runs: LoggedRuns, names: Sequence[str], embedder: str = "e5") -> CrossFitted:
    """One fold per conversation of ``runs`` (``folds``), each fitted and chosen on what
    ``readable`` lets it read."""
    causal = any(FEATURES[n].causal for n in names)
    name = "crossfit" if causal else "crossfit_non_causal"
    made: list[Fold] = []
    tables: dict[str, dict[float, dict[str, float]]] = {}
    for held_out, choice, training in folds([s.conversation for s in runs.samples]):
        pool = readable(runs.samples, held_out)
        train = [s for s in pool if s.conversation != choice]
        chosen_on = [s for s in pool if s.conversation == choice]
        if len(training) > 1:
            c, _ = choose_c(train, names)
            c_by = "cross-validation by conversation"
        else:
            c, c_by = UNCHOSEN_C, "default (one training conversation)"
        selector = fit(train, names, c, runs.model, embedder)
        threshold, tables[held_out] = choose_threshold(selector, chosen_on)
        fitted_on = {
            "C": c,
            "C_chosen_by": c_by,
            "samples": len(train),
            "candidates": sum(len(s.rows) for s in train),
            "choice_samples": len(chosen_on),
            "threshold_chosen_on": f"conversation {choice}",
            "objective": "useful F1 - poison adoption",
            "conversations_never_read": forbidden_conversations(held_out),
        }
        final = selector.model_copy(
            update={
                "name": f"{name} fold {held_out}",
                "threshold": threshold,
                "fitted_on": fitted_on,
            }
        )
        read = sorted({s.conversation for s in pool})
        made.append(
            Fold(held_out=held_out, choice=choice, training=training, read=read, selector=final)
        )
    file = CrossFitFile(
        name=name,
        folds=made,
        fitted_on={
            "response_model": runs.model,
            "data_sha256": runs.data,
            "splits": runs.splits,
            "samples": len(runs.samples),
            "conversations": sorted({s.conversation for s in runs.samples}),
            "rule": RULE,
        },
    )
    return CrossFitted(CrossFitFile.model_validate(file.model_dump()), tables)


def cross_fit_from_logs(
    log_dir: str | Path, causal: bool = True, embedder: str = "e5"
) -> CrossFitted:
    """A cross-fit file from the logs of CMI runs covering three conversations or more,
    with every feature or with those that read no intervention answer."""
    names = CAUSAL if causal else NON_CAUSAL
    return cross_fit(load_samples(log_dir, names, embedder, cross_fit=True), names, embedder)
