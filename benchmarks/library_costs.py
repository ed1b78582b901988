"""What a memory library's own work cost in runs already made: its LLM calls, its failed
extractions and its seconds, per sample, read from each run's log.

The library strategies (mem0, LangMem, Graphiti) record in every sample's details their
LLM calls and tokens, the seconds spent adding the bank and searching it, and, per bank
memory, any extraction or ingestion that failed (``extractions`` or ``episodes``, each with
its ``error``). This prints those per run, and the failed memories by the error's type;
with ``--same-as BASE.eval``, on how many samples each run selected the same memories as
that run (as a set, and in the same order) and gave the same answer.

    python benchmarks/library_costs.py LOG.eval [LOG.eval ...] [--same-as BASE.eval]
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from typing import Any

from inspect_ai.log import read_eval_log

from cmi_inspect.causal_locomo.selection import MemorySelection


def costs(path: str) -> str:
    """One run's line: samples, failures, calls, tokens and seconds per sample."""
    log = read_eval_log(path)
    details = [s.store_as(MemorySelection).details for s in log.samples or [] if s.error is None]
    errored = sum(1 for s in log.samples or [] if s.error is not None)
    if not details:
        return f"{path}: no finished sample ({errored} failed)"
    memories = [m for d in details for m in d.get("extractions") or d.get("episodes") or []]
    failed = [m for m in memories if m.get("error")]
    kinds = Counter(str(m["error"]).split(":", 1)[0] for m in failed)
    solver_args = log.plan.steps[0].params if log.plan and log.plan.steps else {}
    name = solver_args.get("strategy", log.plan.steps[0].solver if log.plan.steps else "")
    label = ", ".join(f"{k}={v}" for k, v in sorted(solver_args.items()) if k != "strategy")
    n = len(details)

    def mean(key: str) -> float:
        return statistics.fmean(float(d.get(key) or 0) for d in details)

    return "\n".join(
        [
            f"{path}: {name} ({label})",
            f"  samples finished {n}, failed {errored}; "
            f"with a failed extraction {sum(1 for d in details if d.get('extraction_failed'))}",
            f"  memories {len(memories)}, failed {len(failed)}"
            + (f" ({', '.join(f'{k} {v}' for k, v in kinds.most_common())})" if kinds else ""),
            f"  per sample: LLM calls {mean('llm_calls'):.1f}, input tokens "
            f"{mean('llm_input_tokens'):.0f}, output tokens {mean('llm_output_tokens'):.0f}, "
            f"library seconds {mean('seconds'):.1f}, returned {mean_len(details, 'returned'):.2f}",
        ]
    )


def same_as(path: str, base: str) -> str:
    """How many samples the two runs both finished, and of those how many were alike."""
    ours = {s.id: s for s in read_eval_log(path).samples or [] if s.error is None}
    theirs = {s.id: s for s in read_eval_log(base).samples or [] if s.error is None}
    both = sorted(ours.keys() & theirs.keys(), key=str)
    picks = [
        (ours[i].store_as(MemorySelection).selected, theirs[i].store_as(MemorySelection).selected)
        for i in both
    ]
    answers = sum(ours[i].output.completion == theirs[i].output.completion for i in both)
    return (
        f"  against {base}: {len(both)} samples in common; the same memories "
        f"{sum(set(a) == set(b) for a, b in picks)}, in the same order "
        f"{sum(a == b for a, b in picks)}; the same answer {answers}"
    )


def mean_len(details: list[dict[str, Any]], key: str) -> float:
    return statistics.fmean(len(d.get(key) or []) for d in details)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", help="runs' .eval logs")
    parser.add_argument("--same-as", help="a run to compare each run's selections with")
    args = parser.parse_args()
    for path in args.logs:
        print(costs(path))
        if args.same_as:
            print(same_as(path, args.same_as))


if __name__ == "__main__":
    main()
