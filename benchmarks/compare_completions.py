"""Check: do two runs of the same strategies give the same completions and selections?

For each strategy found in both log folders (matched by ``strategy_label``), pairs the
samples by id and epoch and compares every model call's completion, keyed by its prompt
(CMI's calls run concurrently, so their order in the log is not fixed). Prints, per
strategy, the samples and prompts compared and how many differ, then the differing
samples, then every reported metric that differs (beyond the last bits of a float: a mean
over the same samples in another order can differ there). Made to check that prompt-prefix reuse,
and ``-M parallel=N``, in the local provider change no output:

    inspect eval tasks/causal_locomo.py --solver full_history -M prefix_cache_mb=0 \\
        --log-dir logs/no-reuse
    python benchmarks/compare_completions.py logs/run-speed/strategies logs/no-reuse
"""

from __future__ import annotations

import argparse
import math

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from cmi_inspect.causal_locomo.selection import MemorySelection
from cmi_inspect.report.runs import strategy_label
from cmi_inspect.report.sample_cost import strategy_calls

Completions = dict[str, str]
"""A sample's completions by prompt text."""


def logs_by_strategy(log_dir: str) -> dict[str, EvalLog]:
    logs = (read_eval_log(info.name, resolve_attachments=True) for info in list_eval_logs(log_dir))
    return {strategy_label(log): log for log in logs if log.status == "success"}


def completions(log: EvalLog) -> dict[tuple[str, int], Completions]:
    out: dict[tuple[str, int], Completions] = {}
    for sample in log.samples or []:
        calls = {}
        for event in strategy_calls(sample):
            prompt = "\n".join(m.text for m in event.input)
            calls[prompt] = event.output.completion
        out[(str(sample.id), sample.epoch)] = calls
    return out


def selections(log: EvalLog) -> dict[tuple[str, int], list[str]]:
    """Each sample's selected memory keys, as its ``MemorySelection`` store holds them."""
    return {(str(s.id), s.epoch): s.store_as(MemorySelection).selected for s in log.samples or []}


def metrics(log: EvalLog) -> dict[str, float]:
    """Every reported metric of the log, by scorer and metric name."""
    scores = log.results.scores if log.results else []
    return {f"{s.name}/{m.name}": m.value for s in scores for m in s.metrics.values()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("a", help="a log folder")
    parser.add_argument("b", help="another log folder, of a run to compare with")
    args = parser.parse_args()
    a, b = logs_by_strategy(args.a), logs_by_strategy(args.b)
    shared = sorted(set(a) & set(b))
    if not shared:
        raise SystemExit(f"No strategy has a successful log in both {args.a} and {args.b}.")
    print(
        "| strategy | samples | prompts | samples that differ | prompts that differ "
        "| selections that differ |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    differing: list[str] = []
    for name in shared:
        ca, cb = completions(a[name]), completions(b[name])
        sa, sb = selections(a[name]), selections(b[name])
        picked = sum(sa[k] != sb[k] for k in set(sa) & set(sb))
        samples = prompts = bad_samples = bad_prompts = 0
        for key in sorted(set(ca) & set(cb)):
            common = set(ca[key]) & set(cb[key])
            wrong = [p for p in common if ca[key][p] != cb[key][p]]
            samples, prompts = samples + 1, prompts + len(common)
            bad_prompts += len(wrong)
            if wrong or set(ca[key]) != set(cb[key]):
                bad_samples += 1
                differing.append(f"{name} {key[0]} (epoch {key[1]}): {len(wrong)} completions")
        print(f"| {name} | {samples} | {prompts} | {bad_samples} | {bad_prompts} | {picked} |")
    for line in differing:
        print(line)
    for name in shared:
        ma, mb = metrics(a[name]), metrics(b[name])
        moved = [
            f"{k} {ma[k]:.6f} -> {mb[k]:.6f}"
            for k in sorted(set(ma) & set(mb))
            if not math.isclose(ma[k], mb[k], rel_tol=1e-9, abs_tol=1e-12)
        ]
        print(
            f"{name}: "
            + ("metrics that differ: " + "; ".join(moved) if moved else "no metric differs")
        )


if __name__ == "__main__":
    main()
