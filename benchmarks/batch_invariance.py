"""Diagnosis: where does a row decoded beside others stop matching the same row alone?

On a real full-history prompt of Causal-LoCoMo (the release's first, 617 tokens), cut so
that its sequence holds K tokens, a multi-sequence context of the embedded model decodes
the row at position K-1 alone, then beside two other sequences (the next prompts, of
``--companions`` tokens), from the same KV state, and compares the row's logits. It prints:

1. per llama.cpp setting, varied one at a time from the engine's, the largest logit
   difference together against alone for each K; how far that setting's lone row moves
   from the engine's lone row (what ``parallel=1`` computes); and the milliseconds of a
   lone row at the longest K. The last line is the engine's rule: only rows of at most
   ``BATCH_INVARIANT_KV`` tokens share a batch.
2. for the longest K, operation by operation (llama.cpp's eval callback): the first
   operation whose result differs, and per layer the largest difference at the attention,
   its projection, the feed-forward and the layer's output.

    CMI_DATA_DIR=../shared/data python benchmarks/batch_invariance.py
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from cmi_inspect.causal_locomo.data import causal_locomo_path
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import history_prompt
from cmi_inspect.local_model import EngineConfig
from cmi_inspect.local_model.llamacpp import LlamaCpp
from cmi_inspect.local_model.sequences import BATCH_INVARIANT_KV, Activation, Sequences

SETTINGS: dict[str, Mapping[str, Any]] = {
    "the engine's (a KV stream per sequence, flash attention)": {},
    "one KV cache for all sequences (kv_unified)": {"kv_unified": True},
    "flash attention off": {"flash_attn_type": 0},
    "one thread for one-row batches (n_threads=1)": {"n_threads": 1},
}
LAYER_PARTS = ("kqv_out", "attn_out", "ffn_out", "l_out")


def full_history_prompts(llm: LlamaCpp, n: int) -> list[list[int]]:
    """The first ``n`` examples' full-history prompts, as the engine tokenizes them."""
    prompts = []
    for record in load_records(causal_locomo_path())[:n]:
        history = "\n\n".join(s.content for s in record.past_sessions)
        prompt = history_prompt(record.current_task.instruction, history)
        prompts.append(llm.prompt_ids([{"role": "user", "content": prompt}]))
    return prompts


class Rows:
    """A target sequence and its companions decoded once into a context's slots; then the
    target's row at any length, alone or beside one row of each companion."""

    def __init__(
        self, sequences: Sequences, target: list[int], companions: list[list[int]]
    ) -> None:
        self.sequences, self.target = sequences, target
        prompts = [target, *companions]
        self.nexts = [sequences.prompt(seq, p, 0) for seq, p in enumerate(prompts)]
        self.lengths = [len(p) for p in prompts]
        self.states = [sequences.save_state(seq) for seq in range(len(prompts))]

    def row(self, k: int, beside: bool, batch_kv: int | None = None) -> np.ndarray:
        """The logits of the target's row at position ``k - 1`` (its sequence then holds
        ``k`` tokens), alone or beside the companions' next rows."""
        for seq, state in enumerate(self.states):
            self.sequences.load_state(seq, state)
        self.sequences.keep(0, k - 1)
        rows = [(0, self.target[k - 1], k - 1)]
        if beside:
            rows += [(s, self.nexts[s], self.lengths[s]) for s in range(1, len(self.states))]
        return self.sequences.step_logits(rows, batch_kv)[0].copy()

    def lone_ms(self, k: int, repeats: int = 5) -> float:
        """Median milliseconds of the target's lone row at ``k`` tokens."""
        times = []
        for _ in range(repeats):
            self.sequences.load_state(0, self.states[0])
            self.sequences.keep(0, k - 1)
            start = time.perf_counter()
            self.sequences.step_logits([(0, self.target[k - 1], k - 1)])
            times.append(time.perf_counter() - start)
        return 1000 * float(np.median(times))


def biggest(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max()) if a.shape == b.shape else float("nan")


def settings_table(
    llm: LlamaCpp, target: list[int], companions: list[list[int]], lengths: list[int]
) -> None:
    """Part 1: each setting's lone-against-batched differences, one setting varied at a time."""
    n_ctx = max(map(len, [target, *companions])) + 8
    print("\nLargest logit difference of the target's row, beside two others against alone")
    head = " | ".join(f"K={k}" for k in lengths)
    print(f"| setting | {head} | lone row against the engine's | ms a lone row, K={lengths[-1]} |")
    print("|" + " --- |" * (len(lengths) + 3))
    engine_lone: dict[int, np.ndarray] = {}
    for name, settings in SETTINGS.items():
        sequences = Sequences(llm, 1 + len(companions), n_ctx, settings)
        try:
            rows = Rows(sequences, target, companions)
            lone = {k: rows.row(k, beside=False) for k in lengths}
            engine_lone = engine_lone or lone
            moved = max(biggest(lone[k], engine_lone[k]) for k in lengths)
            cells = " | ".join(f"{biggest(rows.row(k, beside=True), lone[k]):.3g}" for k in lengths)
            print(f"| {name} | {cells} | {moved:.3g} | {rows.lone_ms(lengths[-1]):.1f} |")
            if not settings:  # the engine's, with its rule for which rows share a batch
                exact = " | ".join(
                    f"{biggest(rows.row(k, True, BATCH_INVARIANT_KV), lone[k]):.3g}"
                    for k in lengths
                )
                print(
                    f"| the engine's, rows of at most {BATCH_INVARIANT_KV} tokens batched "
                    f"(longer ones alone) | {exact} | 0 | |"
                )
        finally:
            sequences.close()


def layer_of(name: str) -> int | None:
    part, _, layer = name.rpartition("-")
    return int(layer) if part in LAYER_PARTS and layer.isdigit() else None


def target_part(alone: np.ndarray, together: np.ndarray) -> np.ndarray | None:
    """The target's part of a batched result: index 0 along the one dimension the batch
    widened (None where the shapes differ otherwise)."""
    if alone.shape == together.shape:
        return together
    wider = [d for d in range(alone.ndim) if alone.shape[d] != together.shape[d]]
    if len(wider) != 1:
        return None
    return np.take(together, range(alone.shape[wider[0]]), axis=wider[0])


def trace(llm: LlamaCpp, target: list[int], companions: list[list[int]], k: int) -> None:
    """Part 2: every operation of the target's row at ``k`` tokens, alone against beside."""
    seen: list[Activation] = []
    recording = [False]

    def observe(activation: Activation) -> None:
        if recording[0]:
            seen.append(activation)

    n_ctx = max(map(len, [target, *companions])) + 8
    sequences = Sequences(llm, 1 + len(companions), n_ctx, observe=observe)
    try:
        rows = Rows(sequences, target, companions)
        recording[0] = True
        lone = rows.row(k, beside=False)
        alone, seen[:] = list(seen), []
        beside = rows.row(k, beside=True)
        together = list(seen)
    finally:
        sequences.close()
    plain = Sequences(llm, 1 + len(companions), n_ctx)
    try:
        unobserved = Rows(plain, target, companions).row(k, beside=True)
    finally:
        plain.close()
    print(f"\nOperation by operation, the target's row at K={k} beside two others against alone")
    same = np.array_equal(unobserved, beside)
    print(f"(observing changes no logit: {same}; the logits differ by {biggest(lone, beside):.3g})")
    assert [a.name for a in alone] == [t.name for t in together], "the two graphs differ"
    layers: dict[int, dict[str, float]] = {}
    first = None
    for i, (a, t) in enumerate(zip(alone, together, strict=True)):
        if a.name.startswith("cache_"):  # the whole KV cache: the companions write theirs
            continue
        part = target_part(a.values, t.values)
        diff = biggest(a.values, part) if part is not None else float("nan")
        if first is None and diff > 0:
            first = (i, a, diff)
        layer = layer_of(a.name)
        if layer is not None:
            layers.setdefault(layer, {})[a.name.rpartition("-")[0]] = diff
    if first is None:
        print("no operation differs")
        return
    i, a, diff = first
    print(f"first operation that differs: {a.op} ({a.name}), by {diff:.3g}, after {i} others")
    print("| layer | " + " | ".join(LAYER_PARTS) + " |")
    print("|" + " --- |" * (len(LAYER_PARTS) + 1))
    for layer, parts in sorted(layers.items()):
        cells = " | ".join(f"{parts.get(p, float('nan')):.3g}" for p in LAYER_PARTS)
        print(f"| {layer} | {cells} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--lengths",
        default=f"101,{BATCH_INVARIANT_KV},{BATCH_INVARIANT_KV + 1},301,617",
        help="tokens the target's sequence holds with its row (comma-separated)",
    )
    parser.add_argument("--companions", default="400,80", help="tokens of the other sequences")
    args = parser.parse_args()
    config = EngineConfig.from_model_args("smollm2", parallel=1)
    print(f"llama.cpp extra buffers: {config.chosen_by}")
    llm = LlamaCpp(config.path, 4096, config.n_threads, config.extra_bufts)
    sizes = [int(n) for n in args.companions.split(",")]
    target, *others = full_history_prompts(llm, 1 + len(sizes))
    companions = [p[:n] for p, n in zip(others, sizes, strict=True)]
    lengths = [k for k in map(int, args.lengths.split(",")) if k <= len(target)]
    print(f"target: the release's first full-history prompt, {len(target)} tokens")
    settings_table(llm, target, companions, lengths)
    trace(llm, target, companions, lengths[-1])
    llm.close()


if __name__ == "__main__":
    main()
