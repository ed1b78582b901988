"""Benchmark: prompt-prefix KV reuse in the embedded llama.cpp provider, checked for exactness.

Builds the prompts the strategies send for the first N Causal-LoCoMo examples (no memory,
one memory at a time as CMI does, and the most recent history that fits), runs them one
after another through ``gguf/smollm2`` with prefix reuse and without it (a separate engine
that resets before every call), and prints how many completions differ, how many prompt
tokens were actually evaluated, and the wall-clock of both (prompt by prompt in turn).

    CMI_DATA_DIR=../shared/data python benchmarks/prefix_reuse.py --limit 20
"""

from __future__ import annotations

import argparse
import asyncio
import time

from inspect_ai.model import GenerateConfig, Model, get_model

from cmi_inspect.causal_locomo.data import ExampleRecord, causal_locomo_path
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import memory_prompt, no_memory_prompt
from cmi_inspect.causal_locomo.strategies.full_history import fit_history
from cmi_inspect.local_model import GGUFModel, ReuseStats


async def build_prompts(
    records: list[ExampleRecord], model: Model, memories: int, budget: int
) -> list[str]:
    """Per example, in the order a sample sends them: no memory, single memories, and the
    history that fits ``budget`` tokens as full history fits it."""
    prompts = []
    for record in records:
        request = record.current_task.instruction
        prompts.append(no_memory_prompt(request))
        prompts += [memory_prompt(request, [m.content]) for m in record.memory_bank[:memories]]
        sessions = [s.content for s in sorted(record.past_sessions, key=lambda s: s.timestamp)]
        prompts.append((await fit_history(model, request, sessions, budget))[0])
    return prompts


class Pass:
    """One model's completions, summed wall-clock and engine token counts."""

    def __init__(self, model: Model) -> None:
        assert isinstance(model.api, GGUFModel)
        self.model, self.api = model, model.api
        self.completions: list[str] = []
        self.seconds = 0.0

    @property
    def stats(self) -> ReuseStats:
        return self.api.engine.stats

    async def complete(self, prompt: str, config: GenerateConfig) -> None:
        start = time.perf_counter()
        self.completions.append((await self.model.generate(prompt, config=config)).completion)
        self.seconds += time.perf_counter() - start


async def run_both(passes: list[Pass], prompts: list[str], max_tokens: int) -> None:
    """Each prompt through every pass in turn, so that load from other processes on a
    shared machine weighs on both alike."""
    config = GenerateConfig(max_tokens=max_tokens)
    for prompt in prompts:
        for one in passes:
            await one.complete(prompt, config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=20, help="examples (default 20)")
    parser.add_argument("--memories", type=int, default=3, help="single-memory prompts each")
    parser.add_argument("--history-tokens", type=int, default=1500, help="history prompt cap")
    parser.add_argument("--max-tokens", type=int, default=32, help="completion length cap")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: all cores)")
    args = parser.parse_args()

    records = load_records(causal_locomo_path())[: args.limit]
    base = Pass(get_model("gguf/smollm2", n_threads=args.threads, prefix_cache_mb=0, memoize=False))
    mine = Pass(get_model("gguf/smollm2", n_threads=args.threads, memoize=False))
    prompts = asyncio.run(build_prompts(records, base.model, args.memories, args.history_tokens))
    print(f"{len(prompts)} prompts from {len(records)} examples")
    asyncio.run(run_both([base, mine], prompts, args.max_tokens))

    pairs = zip(base.completions, mine.completions, strict=True)
    differ = [i for i, (a, b) in enumerate(pairs) if a != b]
    print(f"differing completions: {len(differ)} of {len(prompts)} {differ[:10]}")
    for label, one in (("no reuse", base), ("reuse", mine)):
        stats = one.stats
        share = stats.evaluated_tokens / stats.prompt_tokens
        print(
            f"{label:>8}: evaluated {stats.evaluated_tokens} of {stats.prompt_tokens} prompt "
            f"tokens ({share:.1%}), {one.seconds:.1f} s"
        )
    tokens = mine.stats.evaluated_tokens / base.stats.evaluated_tokens
    print(f"   ratio: tokens evaluated {tokens:.2f}, wall-clock {mine.seconds / base.seconds:.2f}")


if __name__ == "__main__":
    main()
