"""Analysis: how far label-free CMI's answer scorer is from the gold one, on the same answers.

Reads a blind CMI log (``inspect eval tasks/causal_locomo.py --solver cmi -T protocol=blind``),
re-scores every logged intervention answer (no memory, with each candidate, perturbed) with
the evidence scorer CMI ran and with the gold scorer the blind protocol forbids, applies
CMI's rule (utility > tau_u, stability >= tau_s, then the logged risk-filter verdict) and
prints the selection metrics of each. No model is called. The gold row is what the paper's
oracle scorer would select from the very same answers: how much of label-free CMI's gap
is its scorer's, and how much the response model's answers'. For comparison, the last
row keeps the top proposed candidate, dropped only where the log shows the risk filter
dropped it (CMI consults the filter only for candidates that passed its rule).

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
import sys
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path

from inspect_ai.log import EvalSample, list_eval_logs, read_eval_log

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cmi_inspect.dataset import CausalLocomoMetadata  # noqa: E402
from cmi_inspect.evidence import BlindEvidence  # noqa: E402
from cmi_inspect.scoring import deterministic_score, selection_metrics  # noqa: E402
from cmi_inspect.strategies.cmi import CMI, Candidate, CMIDiagnostics  # noqa: E402
from cmi_inspect.view import key_to_memory_id  # noqa: E402

Scorer = Callable[[str], Awaitable[float]]
RISKY = ("risk filter", "evidence risk")
"""How CMI's log words a risk-filter rejection."""
KEYS = ("useful_f1", "recall", "precision", "poison_adoption", "bad_rejection", "n_selected")


def evidence_scorer(sample: EvalSample, meta: CausalLocomoMetadata) -> Scorer:
    request = sample.input if isinstance(sample.input, str) else sample.input[-1].text
    sessions = sorted(meta.past_sessions, key=lambda s: s.timestamp)
    return BlindEvidence(request, sessions).score


def gold_scorer(sample: EvalSample, meta: CausalLocomoMetadata) -> Scorer:
    async def score(answer: str) -> float:
        return deterministic_score(answer, meta.scoring_criteria)

    return score


async def replay(d: CMIDiagnostics, score: Scorer) -> tuple[list[str], dict[str, float]]:
    """The keys CMI's rule keeps when its logged answers are scored by ``score``, and each
    candidate's utility."""
    tau_u, tau_s = d.config["tau_u"], d.config["tau_s"]
    s_no = await score(d.answer_no_memory)
    kept, utilities = [], {}
    for c in d.candidates:
        if c.answer_with is None or c.answer_perturbed is None:
            raise SystemExit("this CMI run skipped perturbed answers (an ablation or lazy_perturb)")
        s_with = await score(c.answer_with)
        utility, stability = s_with - s_no, s_with - await score(c.answer_perturbed)
        utilities[c.key] = utility
        if utility > tau_u and stability >= tau_s and not c.reason.startswith(RISKY):
            kept.append(c.key)
    return kept[: d.config.get("budget") or d.config["k"]], utilities


def evidence_risky(d: CMIDiagnostics, answers: bool = True) -> set[str]:
    """Candidates the evidence risk filter would drop, whether or not they passed the rule:
    a conflicting candidate is better supported (memory text, plus with ``answers`` the
    with-memory answer, as CMI's filter weighs them)."""
    if d.risk_filter != "evidence":
        return {c.key for c in d.candidates if c.reason.startswith(RISKY)}
    by_key = {c.key: c for c in d.candidates}
    if answers:  # CMI's own filter
        return {c.key for c in d.candidates if CMI._evidence_risk(c, by_key) is not None}

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
        meta = CausalLocomoMetadata.model_validate(sample.metadata)
        if (sample.store or {}).get("MemorySelection:strategy") != "cmi":
            continue
        d = CMIDiagnostics.model_validate(sample.store["MemorySelection:details"])
        ids = key_to_memory_id(meta.example_id, meta.memory_bank, meta.protocol)
        by_evidence, u_evidence = await replay(d, evidence_scorer(sample, meta))
        by_gold, u_gold = await replay(d, gold_scorer(sample, meta))
        choices = {
            "as logged": [c.key for c in d.candidates if c.selected],
            "evidence": by_evidence,
            "gold": by_gold,
            "top candidate (not causal)": [
                c.key for c in d.candidates[:1] if not c.reason.startswith(RISKY)
            ],
            "rule: top-ranked with utility > 0, no stability test": top_ranked(
                d, u_evidence, d.config["tau_u"]
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
            out[name].append(
                selection_metrics(
                    [ids[k] for k in keys],
                    meta.gold_memory_ids,
                    meta.bad_memory_ids,
                    meta.harmful_ids,
                )
            )
        for c in d.candidates:
            changed = (c.answer_with or "").strip() != d.answer_no_memory.strip()
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
        print("| answers scored by | " + " | ".join(KEYS) + " |")
        print("| --- |" + " --- |" * len(KEYS))
        for name, metrics in table.items():
            means = [statistics.mean(m[k] for m in metrics) for k in KEYS]
            print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in means) + " |")
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
