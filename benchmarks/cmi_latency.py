"""Benchmark: CMI's cost and latency against vector memory, on the same samples.

For each model (the embedded local model, and a fixed-latency model that
answers after a set delay, which measures orchestration rather than CPU),
runs vector_memory and CMI's variants on the first N examples, one sample at a
time, with no model-call cache, and prints per strategy: model calls, input and
output tokens, and wall-clock per sample, with the CMI / vector ratios. Under
``--protocol paper`` the variants are cmi and cmi with lazy_perturb; under
``blind``, cmi (its learned selector), the rule it replaced (``selector=rule``)
and the learned non_causal ablation.

    python benchmarks/cmi_latency.py --limit 20 --delay 0.5
    python benchmarks/cmi_latency.py --models gguf/smollm2 --limit 15 -M parallel=1
    python benchmarks/cmi_latency.py --models gguf/smollm2 --limit 15 --protocol blind
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.solvers import cmi, vector_memory
from cmi_inspect.report.sample_cost import model_calls, token_usage

PLANS = {
    "paper": {
        "vector_memory": lambda: vector_memory(),
        "cmi": lambda: cmi(),
        "cmi (lazy_perturb)": lambda: cmi(lazy_perturb=True),
    },
    "blind": {
        "vector_memory": lambda: vector_memory(),
        "cmi": lambda: cmi(),
        # the rule as it ran when its cost was recorded: a budget of one under blind
        "cmi (selector=rule, budget=1)": lambda: cmi(selector="rule", budget=1),
        "cmi (ablation=learned_non_causal)": lambda: cmi(ablation="learned_non_causal"),
    },
}


def measure(log: EvalLog) -> dict[str, float]:
    samples = log.samples or []
    assert log.status == "success" and samples, log.error
    usage = [token_usage(s) for s in samples]
    return {
        "calls": statistics.mean(model_calls(s) for s in samples),
        "input_tokens": statistics.mean(u[0] for u in usage),
        "output_tokens": statistics.mean(u[1] for u in usage),
        "seconds": statistics.mean(s.total_time or 0.0 for s in samples),
    }


def bench(
    model: str, limit: int, log_dir: str, model_args: dict[str, str], protocol: str
) -> dict[str, dict[str, float]]:
    results = {}
    for name, plan in PLANS[protocol].items():
        [log] = inspect_eval(
            causal_locomo(protocol=protocol),
            solver=plan(),
            model=model,
            model_args=model_args,
            limit=limit,
            max_samples=1,
            log_dir=log_dir,
            display="none",
        )
        results[name] = measure(log)
    return results


def print_table(model: str, results: dict[str, dict[str, float]]) -> None:
    base = results["vector_memory"]
    print(f"\n{model}")
    print(
        "| strategy | calls / sample | input tok / sample | output tok / sample | s / sample "
        "| calls ratio | wall-clock ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, r in results.items():
        print(
            f"| {name} | {r['calls']:.2f} | {r['input_tokens']:.0f} | {r['output_tokens']:.0f} "
            f"| {r['seconds']:.3f} | {r['calls'] / base['calls']:.2f} "
            f"| {r['seconds'] / base['seconds']:.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--limit", type=int, default=20, help="examples (the first N of the release)"
    )
    parser.add_argument(
        "--delay", type=float, default=0.5, help="seconds per call of the fixed-latency model"
    )
    parser.add_argument(
        "--models",
        default="gguf/smollm2,fixed_latency",
        help="comma-separated; fixed_latency takes --delay",
    )
    parser.add_argument("--protocol", choices=sorted(PLANS), default="paper")
    parser.add_argument(
        "-M",
        dest="model_args",
        action="append",
        default=[],
        metavar="K=V",
        help="argument of the gguf models (e.g. parallel=1)",
    )
    args = parser.parse_args()
    gguf_args = dict(pair.split("=", 1) for pair in args.model_args)
    with tempfile.TemporaryDirectory() as log_dir:
        for model in args.models.split(","):
            name = f"fixed_latency/{args.delay}" if model == "fixed_latency" else model
            model_args = gguf_args if name.startswith("gguf/") else {}
            print_table(name, bench(name, args.limit, log_dir, model_args, args.protocol))


if __name__ == "__main__":
    main()
