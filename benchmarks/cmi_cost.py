"""Benchmark: what label-free CMI's graded effect costs against the answer effect.

Runs blind CMI with ``-S effect=answer`` and then ``-S effect=graded`` on the same first
examples, both without the model-call cache and four samples at a time, in one run on one
machine, each in a fresh process (so neither starts from prompt states the other left),
and prints per run:
wall-clock per sample, generations per sample, prompt tokens evaluated per sample (the
engine's counters: forced decoding is prompt work) and reply tokens scored, and the ratio
graded / answer.

    python benchmarks/cmi_cost.py --limit 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

from inspect_ai import eval as inspect_eval

from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.solvers import cmi
from cmi_inspect.local_model import reuse_totals
from cmi_inspect.report.sample_cost import model_calls


def measure(effect: str, limit: int, dataset: str, log_dir: str) -> dict[str, float]:
    before = reuse_totals()
    started = time.monotonic()
    [log] = inspect_eval(
        causal_locomo(protocol="blind", dataset=dataset),
        solver=cmi(effect=effect),
        model="gguf/smollm2",
        limit=limit,
        max_samples=4,  # as the README's CMI runs: each sample's prompt states stay cached
        cache=False,
        log_dir=log_dir,
        display="none",
    )
    seconds = time.monotonic() - started
    after = reuse_totals()
    if log.status != "success" or not log.samples:
        raise SystemExit(f"the {effect} run did not finish: {log.status}")
    n = len(log.samples)
    return {
        "seconds / sample": seconds / n,
        "generations / sample": sum(model_calls(s) for s in log.samples) / n,
        "prompt tokens evaluated / sample": (after.evaluated_tokens - before.evaluated_tokens) / n,
        "reply tokens scored / sample": (after.scored_tokens - before.scored_tokens) / n,
    }


def child(effect: str, limit: int, dataset: str) -> dict[str, float]:
    """``measure`` in a fresh process: its own engine, with no saved prompt states."""
    command = [sys.executable, __file__, "--limit", str(limit), "--dataset", dataset]
    out = subprocess.run([*command, "--effect", effect], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"the {effect} run failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--dataset", default="release")
    parser.add_argument("--effect", help=argparse.SUPPRESS)  # one measurement, as JSON
    args = parser.parse_args()
    if args.effect:
        with tempfile.TemporaryDirectory() as logs:
            print(json.dumps(measure(args.effect, args.limit, args.dataset, logs)))
        return
    rows = {e: child(e, args.limit, args.dataset) for e in ("answer", "graded")}
    print(f"blind CMI, first {args.limit} of {args.dataset}, no cache, gguf/smollm2")
    print("| measure | effect=answer | effect=graded | graded / answer |")
    print("| --- | --- | --- | --- |")
    for key, answer in rows["answer"].items():
        graded = rows["graded"][key]
        ratio = f"{graded / answer:.2f}" if answer else "-"
        print(f"| {key} | {answer:.1f} | {graded:.1f} | {ratio} |")


if __name__ == "__main__":
    main()
