"""Choosing CMI's learned selector on development data (issue 35): which model, which features.

Reads blind CMI runs with every intervention answer logged (``-S ablation=full``) on XL's
``train`` split and on its ``dev`` split, never ``test``. For the learned selector with
every feature and the one without the intervention features (``learned_non_causal``), each
fitted as ``cmi-inspect fit-selector`` fits it (C by cross-validation over conversations,
threshold on dev), it prints their development metrics side by side, with the task score
of the answer each choice gets (every candidate's with-memory answer is in the log), and the
paired difference of useful F1 with a bootstrap interval over dev samples. Then the same
features through a gradient-boosted classifier, the alternative a logistic regression must
beat on dev to stay. No model is called. Labels are read to fit on train and to score dev.

    python benchmarks/choose_selector.py --train logs/xl2-train-cmi --dev logs/xl2-dev-cmi
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Sequence

import numpy as np
from inspect_ai.log import list_eval_logs, read_eval_log

from cmi_inspect.causal_locomo.dataset import scored_record
from cmi_inspect.causal_locomo.scorers import answer_score
from cmi_inspect.causal_locomo.strategies.cmi import logged_diagnostics
from cmi_inspect.causal_locomo.strategies.cmi.features import CAUSAL, NON_CAUSAL
from cmi_inspect.causal_locomo.strategies.cmi.fitting import (
    LoggedSample,
    fit_runs,
    kept,
    load_samples,
    matrix,
    objective,
    sample_request,
)
from cmi_inspect.causal_locomo.strategies.cmi.selector import SelectorFile

KEYS = ("useful_f1", "poison_adoption", "n_selected")
Chooser = Callable[[LoggedSample], int | None]


async def answer_scores(dev_dir: str) -> dict[str, list[float]]:
    """Per dev sample, the strict task score of its no-memory answer, then of each
    candidate's with-memory answer (the answer a choice of that memory gets)."""
    out = {}
    for info in list_eval_logs(dev_dir):
        for sample in read_eval_log(info.name).samples or []:
            d = logged_diagnostics(sample)
            if d is None or not sample.scores:
                continue
            meta = scored_record(sample)
            request, criteria = sample_request(sample), meta.scoring_criteria
            texts = [d.answer_no_memory or "", *(c.answer_with or "" for c in d.candidates)]
            out[str(sample.id)] = [
                (await answer_score(t, request, meta.gold_behavior, criteria, "strict")).total
                for t in texts
            ]
    return out


def row(
    name: str, choose: Chooser, dev: Sequence[LoggedSample], tasks: dict[str, list[float]]
) -> tuple[str, list[float], list[float]]:
    """A table row: the means of the choices' metrics on dev, and each sample's useful F1."""
    picks = [(s, choose(s)) for s in dev]
    metrics = [s.metrics([] if k is None else [k]) for s, k in picks]
    task = [tasks[s.sample_id][0 if k is None else k + 1] for s, k in picks]
    means = [statistics.mean(m[key] for m in metrics) for key in KEYS]
    means += [statistics.mean(task), objective(dict(zip(KEYS, means, strict=False)))]
    return name, means, [m["useful_f1"] for m in metrics]


def paired(a: list[float], b: list[float], resamples: int = 10_000) -> str:
    """Mean of a - b with a 95% bootstrap interval over samples (seeded)."""
    diff = np.array(a) - np.array(b)
    rng = np.random.default_rng(0)
    means = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(resamples)]
    low, high = np.percentile(means, [2.5, 97.5])
    return f"{diff.mean():+.3f} [{low:+.3f}, {high:+.3f}]"


def by(selector: SelectorFile, threshold: float) -> Chooser:
    """The selector's choice at ``threshold`` (the shipped selectors keep one)."""
    return lambda s: next(iter(kept(selector, s, threshold)), None)


def boosted(train: Sequence[LoggedSample], names: Sequence[str]) -> Chooser:
    """The most probably useful candidate by a gradient-boosted classifier, always one."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y = matrix(train, names)
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, random_state=0)
    model.fit(x, y)

    def choose(s: LoggedSample) -> int | None:
        p = model.predict_proba(np.array([[r[n] for n in names] for r in s.rows]))[:, 1]
        return int(np.argmax(p))

    return choose


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--train", required=True, help="CMI logs on XL's train split")
    parser.add_argument("--dev", required=True, help="CMI logs on XL's dev split")
    args = parser.parse_args()
    tasks = anyio.run(answer_scores, args.dev)
    train_runs, dev_runs = load_samples(args.train, CAUSAL), load_samples(args.dev, CAUSAL)
    train, dev = train_runs.samples, dev_runs.samples
    rows = []
    for names in (CAUSAL, NON_CAUSAL):
        fitted = fit_runs(train_runs, dev_runs, names, keeps="top")  # as the shipped ones
        print(fitted.report(), end="\n\n")
        selector = fitted.selector
        label = "learned" if selector.causal else "learned_non_causal"
        t = selector.threshold
        rows.append(row(f"{label} (threshold {t})", by(selector, t), dev, tasks))
        rows.append(row(f"{label}, always one", by(selector, 0.0), dev, tasks))
        boosting = boosted(train, names)
        rows.append(row(f"{label} by gradient boosting, always one", boosting, dev, tasks))
    rows.append(row("top-ranked candidate", lambda s: 0, dev, tasks))
    rows.append(row("no memory", lambda s: None, dev, tasks))
    rows.append(row("labels: a useful candidate when one is proposed", useful_choice, dev, tasks))
    print("| dev | useful F1 | poison adoption | memories | task score | F1 - poison |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, means, _ in rows:
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in means) + " |")
    by_name = {name: f1 for name, _, f1 in rows}
    learned, non_causal = rows[0][0], rows[3][0]
    print(
        f"\nuseful F1, {learned} - {non_causal}, paired over {len(dev)} dev samples: "
        + paired(by_name[learned], by_name[non_causal])
    )


def useful_choice(s: LoggedSample) -> int | None:
    return s.labels.index("useful") if "useful" in s.labels else None


if __name__ == "__main__":
    main()
