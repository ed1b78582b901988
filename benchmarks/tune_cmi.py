"""Choose label-free CMI's rule thresholds on development logs, never on the test set.

Reads blind CMI logs of its rule that ran with every intervention (``inspect eval ...
--solver cmi -S selector=rule -T protocol=blind``) and replays CMI's own decision
(``rule_rejection``, the evidence risk filter's verdict recomputed for every candidate
from the logged supports and conflicts, ``decide``) for each setting of a grid of
``tau_u``, ``tau_s`` and ``prefer``, with the budget the run used. No model is called: the
logged graded utilities and stabilities stand (``--effect answer`` recomputes the answer
effect from the graded records, to compare the two on the same answers). It prints useful
F1 and poison adoption on each log and ranks the settings by mean (F1 - poison adoption)
over the logs, or, with ``--max-poison``, by mean F1 among those within a poison cap per
log; beside each log, non_causal replayed from the same candidates (the row CMI has to
beat). This reads the labels, so it is an analysis of finished development runs, never
part of a run.

    python benchmarks/tune_cmi.py DEV_LOG [DEV_LOG ...] [--max-poison P,P,...]
"""

from __future__ import annotations

import argparse
import itertools
import statistics

from inspect_ai.log import EvalLog, read_eval_log

from cmi_inspect.causal_locomo.dataset import scored_record
from cmi_inspect.causal_locomo.measures import selection_metrics
from cmi_inspect.causal_locomo.strategies.cmi import (
    Candidate,
    CMIConfig,
    CMIDiagnostics,
    decide,
    evidence_risk,
    logged_diagnostics,
)
from cmi_inspect.causal_locomo.strategies.cmi import rule_rejection as rule
from cmi_inspect.causal_locomo.view import key_to_memory_id

TAU_U = (-0.05, -0.01, -0.001, 0.0, 0.01, 0.05, 0.1)
TAU_S = (-1.01, -0.1, -0.05, -0.01, -0.001, 0.0, 0.01)
"""-1.01: no stability test (a stability is at least -1)."""
PREFER = ("utility", "proposal")


def answer_effect(c: Candidate, d: CMIDiagnostics) -> Candidate:
    """The candidate as the answer effect would have scored it: from the scores of its
    generated answers that its graded record holds."""
    if c.effect is None:
        return c
    score = dict(zip(c.effect.answers, c.effect.scores, strict=True))
    s_no, s_with = score[d.answer_no_memory or ""], score[c.answer_with or ""]
    s_pert = score.get(c.answer_perturbed or "", s_no)
    update = {"utility": s_with - s_no, "stability": s_with - s_pert}
    return c.model_copy(update={**update, "s_with": s_with, "s_pert": s_pert})


def without_intervention(c: Candidate) -> Candidate:
    """The candidate as non_causal sees it: no answer, so the risk filter weighs the
    history's support of the memory's text alone."""
    return c.model_copy(update={"support_with": None})


def replay(
    log: EvalLog,
    tau_u: float,
    tau_s: float,
    prefer: str,
    effect: str = "graded",
    ablation: str = "full",
) -> dict[str, float]:
    """Mean useful F1 and poison adoption of CMI's decision under these thresholds (with
    ``effect=answer``, on the answer effect recomputed from the graded records; with
    ``ablation=non_causal``, of the row CMI has to beat, from the same candidates)."""
    f1, poison = [], []
    for sample in log.samples or []:
        d = logged_diagnostics(sample) if not sample.error else None
        if d is None:
            continue
        if effect == "answer":
            d = d.model_copy(update={"candidates": [answer_effect(c, d) for c in d.candidates]})
        if ablation == "non_causal":
            d = d.model_copy(update={"candidates": [without_intervention(c) for c in d.candidates]})
        config = CMIConfig(
            **{**d.config, "tau_u": tau_u, "tau_s": tau_s, "prefer": prefer, "ablation": ablation}
        )
        by_key = {c.key: c for c in d.candidates}
        rejections = {
            c.key: rule(c, None, config) or evidence_risk(c, by_key) for c in d.candidates
        }
        kept = decide(d.candidates, rejections, prefer, d.budget or config.k).kept
        meta = scored_record(sample)
        ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
        m = selection_metrics(
            [ids[k] for k in kept], meta.gold_memory_ids, meta.bad_memory_ids, meta.harmful_ids
        )
        f1.append(m["useful_f1"])
        poison.append(m["poison_adoption"])
    return {"f1": statistics.fmean(f1), "poison": statistics.fmean(poison), "n": len(f1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--top", type=int, default=15, help="settings printed")
    parser.add_argument(
        "--effect", default="graded", help="graded (as run) or answer (recomputed from it)"
    )
    parser.add_argument(
        "--max-poison",
        help="comma-separated, one per log: settings that adopt more poison on a log rank "
        "after those that do not, which are ranked by mean useful F1",
    )
    args = parser.parse_args()
    logs = [read_eval_log(p) for p in args.logs]
    caps = [float(x) for x in args.max_poison.split(",")] if args.max_poison else None
    if caps is not None and len(caps) != len(logs):
        raise SystemExit("--max-poison needs one value per log")
    rows = []
    for tau_u, tau_s, prefer in itertools.product(TAU_U, TAU_S, PREFER):
        results = [replay(log, tau_u, tau_s, prefer, args.effect) for log in logs]
        if caps is None:
            objective = statistics.fmean(r["f1"] - r["poison"] for r in results)
        else:
            feasible = all(r["poison"] <= cap + 1e-9 for r, cap in zip(results, caps, strict=True))
            objective = statistics.fmean(r["f1"] for r in results) - (0 if feasible else 10)
        rows.append((objective, tau_u, tau_s, prefer, results))
    rows.sort(key=lambda r: (-round(r[0], 9), abs(r[1]), abs(r[2]), r[3]))  # ties: nearest 0
    names = " | ".join(f"log {i + 1} F1 | log {i + 1} poison" for i in range(len(logs)))
    print(f"| objective | tau_u | tau_s | prefer | {names} |")
    print("| --- " * (4 + 2 * len(logs)) + "|")
    for objective, tau_u, tau_s, prefer, results in rows[: args.top]:
        cells = " | ".join(f"{r['f1']:.3f} | {r['poison']:.3f}" for r in results)
        print(f"| {objective:.3f} | {tau_u} | {tau_s} | {prefer} | {cells} |")
    for i, log in enumerate(logs):
        nc = replay(log, 0.0, 0.0, "proposal", ablation="non_causal")
        print(
            f"log {i + 1}: {log.location} ({rows[0][4][i]['n']} CMI samples; non_causal "
            f"replayed: F1 {nc['f1']:.3f}, poison {nc['poison']:.3f})"
        )


if __name__ == "__main__":
    main()
