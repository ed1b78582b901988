"""Choose label-free CMI's rule thresholds on development logs, never on the test set.

Reads blind CMI logs that ran with every intervention (``inspect eval ... --solver cmi -T
protocol=blind``) and replays CMI's own decision (``rule_rejection``, the evidence risk
filter's verdict recomputed for every candidate from the logged supports and conflicts,
``decide``) for each setting of a grid of ``tau_u``, ``tau_s`` and ``prefer``, with the
budget the run used. No model is called: the logged graded utilities and stabilities
stand. It prints useful F1 and poison adoption on each log and ranks the settings by
mean (F1 - poison adoption) over the logs. This reads the labels, so it is an analysis of
finished development runs, never part of a run.

    python benchmarks/tune_cmi.py DEV_LOG [DEV_LOG ...]
"""

from __future__ import annotations

import argparse
import itertools
import statistics

from inspect_ai.log import EvalLog, read_eval_log

from cmi_inspect.dataset import CausalLocomoMetadata
from cmi_inspect.scoring import selection_metrics
from cmi_inspect.strategies.cmi import CMIConfig, decide, evidence_risk, logged_diagnostics
from cmi_inspect.strategies.cmi import rule_rejection as rule
from cmi_inspect.view import key_to_memory_id

TAU_U = (-0.05, -0.01, -0.001, 0.0, 0.01, 0.05, 0.1)
TAU_S = (-1.01, -0.1, -0.05, -0.01, -0.001, 0.0, 0.01)
"""-1.01: no stability test (a stability is at least -1)."""
PREFER = ("utility", "proposal")


def replay(log: EvalLog, tau_u: float, tau_s: float, prefer: str) -> dict[str, float]:
    """Mean useful F1 and poison adoption of CMI's decision under these thresholds."""
    f1, poison = [], []
    for sample in log.samples or []:
        d = logged_diagnostics(sample) if not sample.error else None
        if d is None:
            continue
        config = CMIConfig(**{**d.config, "tau_u": tau_u, "tau_s": tau_s, "prefer": prefer})
        by_key = {c.key: c for c in d.candidates}
        rejections = {
            c.key: rule(c, None, config) or evidence_risk(c, by_key) for c in d.candidates
        }
        kept = decide(d.candidates, rejections, prefer, d.budget or config.k).kept
        meta = sample.metadata_as(CausalLocomoMetadata)
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
    args = parser.parse_args()
    logs = [read_eval_log(p) for p in args.logs]
    rows = []
    for tau_u, tau_s, prefer in itertools.product(TAU_U, TAU_S, PREFER):
        results = [replay(log, tau_u, tau_s, prefer) for log in logs]
        objective = statistics.fmean(r["f1"] - r["poison"] for r in results)
        rows.append((objective, tau_u, tau_s, prefer, results))
    rows.sort(key=lambda r: (-r[0], r[1], r[2], r[3]))
    names = " | ".join(f"log {i + 1} F1 | log {i + 1} poison" for i in range(len(logs)))
    print(f"| objective | tau_u | tau_s | prefer | {names} |")
    print("| --- " * (4 + 2 * len(logs)) + "|")
    for objective, tau_u, tau_s, prefer, results in rows[: args.top]:
        cells = " | ".join(f"{r['f1']:.3f} | {r['poison']:.3f}" for r in results)
        print(f"| {objective:.3f} | {tau_u} | {tau_s} | {prefer} | {cells} |")
    for i, log in enumerate(logs):
        print(f"log {i + 1}: {log.location} ({rows[0][4][i]['n']} CMI samples)")


if __name__ == "__main__":
    main()
