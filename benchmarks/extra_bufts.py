"""Benchmark: the embedded model with and without llama.cpp's extra weight buffers (AMX).

Runs the same Causal-LoCoMo prompts (one memory, and the most recent history that fits)
through two engines of ``gguf/smollm2`` in one process, one with the extra buffers and one
without, prompt by prompt in turn so that other load weighs on both alike, with prefix
reuse off; prints how many completions differ and each path's wall-clock and their ratio.
Where the probe finds the extra buffers unusable on this CPU (they would crash it), only
the path without them runs, and the benchmark says so.

    CMI_DATA_DIR=../shared/data python benchmarks/extra_bufts.py --limit 20
"""

from __future__ import annotations

import argparse
import platform
import time

from cmi_inspect.causal_locomo.data import causal_locomo_path
from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.prompts import history_prompt, memory_prompt
from cmi_inspect.local_model import EngineConfig, choose_extra_bufts, engine_for, resolve_gguf


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = (line.split(":", 1)[1] for line in f if line.startswith("model name"))
            return next(names).strip()
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=20, help="examples (default 20)")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--history-chars", type=int, default=6000, help="history prompt cap")
    args = parser.parse_args()

    path = resolve_gguf("smollm2")
    choice = choose_extra_bufts("auto", path)
    paths = [True, False] if choice.extra_bufts else [False]
    print(f"CPU: {cpu_name()}; probe: {choice.chosen_by}")
    engines = {
        on: engine_for(EngineConfig(path=path, extra_bufts=on, prefix_cache_mb=0)) for on in paths
    }
    prompts = []
    for record in load_records(causal_locomo_path())[: args.limit]:
        request = record.current_task.instruction
        prompts.append(memory_prompt(request, [record.memory_bank[0].content]))
        history = "\n\n".join(s.content for s in record.past_sessions)[-args.history_chars :]
        prompts.append(history_prompt(request, history))
    seconds = dict.fromkeys(paths, 0.0)
    answers: dict[bool, list[str]] = {on: [] for on in paths}
    tokens = 0
    for prompt in prompts:
        messages = [{"role": "user", "content": prompt}]
        tokens += engines[paths[0]].prompt_tokens(messages)
        for on in paths:
            start = time.perf_counter()
            response = engines[on].chat(messages, args.max_tokens, None)
            seconds[on] += time.perf_counter() - start
            answers[on].append(response["choices"][0]["message"]["content"] or "")
    print(f"{len(prompts)} prompts, {tokens} prompt tokens, max_tokens={args.max_tokens}")
    for on in paths:
        print(f"extra buffers {'on ' if on else 'off'}: {seconds[on]:.1f} s")
    if len(paths) == 2:
        differ = sum(a != b for a, b in zip(answers[True], answers[False], strict=True))
        print(f"completions that differ: {differ} of {len(prompts)}")
        print(f"wall-clock off / on: {seconds[False] / seconds[True]:.3f}")


if __name__ == "__main__":
    main()
