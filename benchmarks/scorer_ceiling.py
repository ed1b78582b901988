"""Analysis: how far label-free CMI's answer scorer is from the gold one, on the same answers.

Reads a blind CMI log (``inspect eval tasks/causal_locomo.py --solver cmi -T protocol=blind``),
re-scores every logged intervention answer (no memory, with each candidate, perturbed) with
the evidence scorer CMI ran and with the gold scorer the blind protocol forbids, applies
CMI's own decision to them (``decide``: its rule, the logged risk-filter verdict, its
``prefer`` order and budget) and prints the selection metrics of each. No model is
called. The gold row is what the paper's oracle scorer would select from the very same
answers: how much of label-free CMI's gap is its scorer's, and how much the response
model's answers'. For comparison, the last row keeps the top proposed candidate, dropped
only where the log shows the risk filter dropped it (CMI consults the filter only for
candidates that passed its rule).

Two rows bound what any choice among the same candidates can reach: the candidate whose
answer the gold scorer rates highest above the no-memory answer, always one (the most an
answer-based intervention can give with this response model: the Step-0 ceiling), and a
useful candidate whenever one was proposed (a perfect choice, read from the labels). The
task score column scores the answer each choice gets (the logged answer with that one
memory, or with none) as the task does under strict scoring, with the alias judge.

The rule rows vary CMI's rule, not its scorer, on the evidence scores, each keeping one
memory, with the risk filter's verdict recomputed for every candidate from the logged
supports and conflicts: the top-ranked candidate that improves the answer, stable or
not (causal); the top-ranked one that does not make it worse (a veto: what
``-S ablation=utility_only -S tau_u=-0.001 -S budget=1 -S prefer=proposal`` selects);
the top-ranked one the risk filter keeps, utility unread; and the top-ranked one whose
memory text the history supports at least as well as any conflicting candidate's, which
needs no model call at all. They show how much of a selection the intervention makes.
This reads the answer key, so it is an analysis of a finished run, never part of one.

    python benchmarks/scorer_ceiling.py logs/blind-cmi
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
from collections import Counter, defaultdict
from pathlib import Path

from inspect_ai.log import EvalSample, list_eval_logs, read_eval_log

from cmi_inspect.causal_locomo.dataset import CausalLocomoMetadata, scored_record
from cmi_inspect.causal_locomo.measures import selection_metrics
from cmi_inspect.causal_locomo.scorers import answer_score
from cmi_inspect.causal_locomo.strategies.base import AnswerScorer
from cmi_inspect.causal_locomo.strategies.cmi import (
    Candidate,
    CMIConfig,
    CMIDiagnostics,
    answer_key_scorer,
    decide,
    evidence_risk,
    logged_diagnostics,
    rule_rejection,
)
from cmi_inspect.causal_locomo.strategies.cmi.evidence import BlindEvidence
from cmi_inspect.causal_locomo.view import key_to_memory_id

RISKY = ("risk filter", "evidence risk")
"""How CMI's log words a risk-filter rejection."""
KEYS = ("useful_f1", "recall", "precision", "poison_adoption", "bad_rejection", "n_selected")
TASK = "task_score"
"""The task score of the answer a choice gets, where the log holds it (one memory or none)."""


def request_of(sample: EvalSample) -> str:
    return sample.input if isinstance(sample.input, str) else sample.input[-1].text


def evidence_scorer(sample: EvalSample, meta: CausalLocomoMetadata) -> AnswerScorer:
    sessions = sorted(meta.past_sessions, key=lambda s: s.timestamp)
    return BlindEvidence(request_of(sample), sessions).score


def best_by_utility(d: CMIDiagnostics, utilities: dict[str, float]) -> list[str]:
    """The candidate of the highest utility (ties: the best rank), whatever its utility."""
    return [min(d.candidates, key=lambda c: (-utilities[c.key], c.rank)).key]


def useful_candidate(d: CMIDiagnostics, labels: dict[str, str]) -> list[str]:
    """The best-ranked useful candidate, none when none was proposed (labels by key)."""
    return [c.key for c in d.candidates if labels[c.key] == "useful"][:1]


async def task_score_of(
    d: CMIDiagnostics, keys: list[str], sample: EvalSample, meta: CausalLocomoMetadata
) -> float | None:
    """The strict task score of the logged answer with exactly ``keys`` (one memory or
    none), None when the log holds no such answer."""
    answers = {c.key: c.answer_with for c in d.candidates}
    answer = d.answer_no_memory if not keys else answers[keys[0]] if len(keys) == 1 else None
    if answer is None:
        return None
    criteria, behaviour = meta.scoring_criteria, meta.gold_behavior
    scored = await answer_score(answer, request_of(sample), behaviour, criteria, "strict")
    return scored.total


def logged_risk(c: Candidate) -> str | None:
    """The risk filter's verdict on ``c`` as the log shows it (CMI consults the filter only
    for candidates that passed its rule)."""
    return c.reason if c.reason.startswith(RISKY) else None


async def replay(d: CMIDiagnostics, score: AnswerScorer) -> tuple[list[str], dict[str, float]]:
    """The keys CMI's decision keeps when its logged answers are scored by ``score`` (the
    risk filter's logged verdicts standing), and each candidate's utility."""
    config = CMIConfig(**d.config).resolved("blind")
    s_no = await score(d.answer_no_memory or "")
    rescored = []
    for c in d.candidates:
        if c.answer_with is None or c.answer_perturbed is None:
            raise SystemExit("this CMI run skipped perturbed answers (an ablation or lazy_perturb)")
        s_with, s_pert = await score(c.answer_with), await score(c.answer_perturbed)
        update = {"s_with": s_with, "s_pert": s_pert, "utility": s_with - s_no}
        rescored.append(c.model_copy(update={**update, "stability": s_with - s_pert}))
    rejections = {c.key: rule_rejection(c, None, config) or logged_risk(c) for c in rescored}
    assert config.prefer is not None  # resolved
    decision = decide(rescored, rejections, config.prefer, d.budget or config.k)
    return decision.kept, {c.key: c.utility or 0.0 for c in rescored}


def evidence_risky(d: CMIDiagnostics, answers: bool = True) -> set[str]:
    """Candidates the evidence risk filter would drop, whether or not they passed the rule:
    a conflicting candidate is better supported (memory text, plus with ``answers`` the
    with-memory answer, as CMI's filter weighs them)."""
    if d.risk_filter != "evidence":
        return {c.key for c in d.candidates if c.reason.startswith(RISKY)}
    by_key = {c.key: c for c in d.candidates}
    if answers:  # CMI's own filter
        return {c.key for c in d.candidates if evidence_risk(c, by_key) is not None}

    def support(c: Candidate) -> float:
        return c.memory_support.score if c.memory_support is not None else 0.0

    return {
        c.key for c in d.candidates if any(support(by_key[k]) > support(c) for k in c.conflicts)
    }


def top_ranked(
    d: CMIDiagnostics,
    utilities: dict[str, float],
    floor: float,
    strict: bool = True,
    answers: bool = True,
) -> list[str]:
    """The best-ranked candidate, not risky, whose utility is above (``strict``) or at least
    ``floor``; none if there is no such candidate."""
    risky = evidence_risky(d, answers)
    for c in d.candidates:  # in rank order
        u = utilities[c.key]
        if c.key not in risky and (u > floor if strict else u >= floor):
            return [c.key]
    return []


class Tally:
    """Per label: candidates, answers that differ from the no-memory one, positive utilities."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = defaultdict(Counter)

    def add(self, label: str, changed: bool, positive: dict[str, bool]) -> None:
        self.counts[label].update(
            {"candidates": 1, "changed": int(changed), **{k: int(v) for k, v in positive.items()}}
        )


async def rows(log_path: str, tally: Tally) -> dict[str, list[dict[str, float]]]:
    log = read_eval_log(log_path)
    out: dict[str, list[dict[str, float]]] = defaultdict(list)
    for sample in log.samples or []:
        d = logged_diagnostics(sample)
        if d is None:
            continue
        meta = scored_record(sample)
        ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
        by_evidence, u_evidence = await replay(d, evidence_scorer(sample, meta))
        by_gold, u_gold = await replay(d, answer_key_scorer(meta.scoring_criteria))
        labels = {key: meta.labels[ids[key]] for key in ids}
        choices = {
            "as logged": [c.key for c in d.candidates if c.selected],
            "evidence": by_evidence,
            "gold": by_gold,
            "gold: the candidate of highest utility, always one (Step-0 ceiling)": best_by_utility(
                d, u_gold
            ),
            "labels: a useful candidate whenever one is proposed": useful_candidate(d, labels),
            "top candidate (not causal)": [
                c.key for c in d.candidates[:1] if not c.reason.startswith(RISKY)
            ],
            "rule: top-ranked with utility > 0, no stability test": top_ranked(
                d, u_evidence, CMIConfig(**d.config).resolved("blind").tau_u or 0.0
            ),
            "rule: top-ranked with utility >= 0 (a veto)": top_ranked(
                d, u_evidence, 0.0, strict=False
            ),
            "rule: top-ranked the risk filter keeps, utility unread": top_ranked(
                d, u_evidence, -math.inf
            ),
            "rule: top-ranked by memory-text support only (no model call)": top_ranked(
                d, u_evidence, -math.inf, answers=False
            ),
        }
        for name, keys in choices.items():
            metrics = selection_metrics(
                [ids[k] for k in keys], meta.gold_memory_ids, meta.bad_memory_ids, meta.harmful_ids
            )
            task = await task_score_of(d, keys, sample, meta)
            out[name].append({**metrics, TASK: math.nan if task is None else task})
        for c in d.candidates:
            changed = (c.answer_with or "").strip() != (d.answer_no_memory or "").strip()
            positive = {"evidence": u_evidence[c.key] > 0, "gold": u_gold[c.key] > 0}
            tally.add(meta.labels[ids[c.key]], changed, positive)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("logs", help="a blind CMI log, or a directory holding one")
    args = parser.parse_args()
    path = Path(args.logs)
    paths = [path.as_posix()] if path.is_file() else [i.name for i in list_eval_logs(args.logs)]
    for log_path in paths:
        tally = Tally()
        table = asyncio.run(rows(log_path, tally))
        if not table["as logged"]:
            continue
        print(f"{log_path}: {len(table['as logged'])} samples")
        print("| answers scored by | " + " | ".join((*KEYS, TASK)) + " |")
        print("| --- |" + " --- |" * (len(KEYS) + 1))
        for name, metrics in table.items():
            means = [statistics.mean(m[k] for m in metrics) for k in KEYS]
            tasks = [m[TASK] for m in metrics]
            task = "-" if any(math.isnan(t) for t in tasks) else f"{statistics.mean(tasks):.3f}"
            print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in means) + f" | {task} |")
        print(
            "\n| label | candidates | answer differs from no memory | utility > 0 (evidence) "
            "| utility > 0 (gold) |"
        )
        print("| --- | --- | --- | --- | --- |")
        for label, n in sorted(tally.counts.items()):
            cells = (n["candidates"], n["changed"], n["evidence"], n["gold"])
            print(f"| {label} | " + " | ".join(str(v) for v in cells) + " |")


if __name__ == "__main__":
    main()
