"""Benchmark: are the logits after prefix reuse bit-for-bit those of a fresh run?

Random trials on the embedded model with real prompt tokens (full-history prompts of
Causal-LoCoMo): a source prompt sharing a random prefix with a target prompt is decoded
and its KV state saved; the target is then decoded (a) fresh from token 0, (b) from the
saved state cut where ``reusable_prefix`` allows, and (c) from the state cut as deep as
it shares (at most one token short of the end), the cut a naive reuse would take. Prints
how many trials gave logits identical to the fresh run's for (b), and for (c) where it
cuts deeper than (b): (b) must be all of them; (c) shows what the rule guards against.

    CMI_DATA_DIR=../shared/data python benchmarks/prefix_exactness.py --trials 40
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from inspect_ai.model import get_model

from cmi_inspect.causal_locomo.data import causal_locomo_path
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import history_prompt
from cmi_inspect.local_model import GGUFModel, large_prefix, reusable_prefix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--max-tokens", type=int, default=2000, help="longest target prompt")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    api = get_model("gguf/smollm2", prefix_cache_mb=0, memoize=False).api
    assert isinstance(api, GGUFModel)
    llm = api.engine.llm
    block = llm.block
    pool = []
    for record in load_records(causal_locomo_path())[::8]:
        history = "\n\n".join(s.content for s in record.past_sessions)
        prompt = history_prompt(record.current_task.instruction, history)
        pool.append(llm.prompt_ids([{"role": "user", "content": prompt}])[: args.max_tokens])

    rng = random.Random(args.seed)
    same_rule = same_naive = tried = deeper = 0
    start = time.perf_counter()
    for _ in range(args.trials):
        target, other = rng.sample(pool, 2)
        # half the trials at the length of one-memory prompts, half at full-history length
        n = rng.randint(20, 300) if rng.random() < 0.5 else rng.randint(300, len(target))
        shared = rng.randint(0, n)
        source = target[:shared] + other[shared : shared + rng.randint(1, 600)]
        llm.reset()
        llm.logits_after(source, 0)
        state = llm.save_state()
        large = min(shared, large_prefix(0, len(source), block))
        rule, naive = reusable_prefix(large, n, block), min(shared, n - 1)
        if rule == 0:
            continue
        tried += 1
        deeper += naive != rule
        llm.reset()
        fresh = llm.logits_after(target[:n], 0)
        llm.load_state(state)
        same_rule += np.array_equal(fresh, llm.logits_after(target[:n], rule))
        if naive != rule:
            llm.load_state(state)
            same_naive += np.array_equal(fresh, llm.logits_after(target[:n], naive))
        print(f"n={n} shared={shared} rule cut={rule} naive cut={naive}", flush=True)
    print(f"\n{tried} trials with a reusable prefix, {time.perf_counter() - start:.0f} s")
    print(f"logits identical to a fresh run's, cut by the rule: {same_rule} of {tried}")
    print(f"the same, cut as deep as shared where that is deeper: {same_naive} of {deeper}")


if __name__ == "__main__":
    main()
