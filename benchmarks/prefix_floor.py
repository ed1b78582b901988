"""Benchmark: the fewest prompt tokens any prefix reuse could evaluate for a logged run.

A prompt token must be evaluated at least once for each distinct prefix ending in it, so
the distinct prefixes over all the prompts a strategy sent the model (the nodes of their
token trie) bound what prefix reuse can save, whatever the cache size or call order. Prints,
per strategy in a log folder, its prompts (calls not read from the model-call cache), their
tokens and that floor, to set against run_speed.py's "tokens evaluated"; then the floor of
all of them together, for one process running the strategies one after another.

    python benchmarks/prefix_floor.py logs/run-speed-fine/strategies
"""

from __future__ import annotations

import argparse

from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import get_model

from cmi_inspect.local_model import GGUFModel, as_chat
from cmi_inspect.report.runs import strategy_label
from cmi_inspect.report.sample_cost import strategy_calls


def trie_size(prompts: list[list[int]]) -> int:
    """Nodes of the token trie of ``prompts``: how many distinct prefixes they have."""
    root: dict[int, dict] = {}
    size = 0
    for tokens in prompts:
        node = root
        for token in tokens:
            if token not in node:
                node[token] = {}
                size += 1
            node = node[token]
    return size


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("log_dir", help="a folder of logs made with the embedded model")
    parser.add_argument("--model", default="smollm2", help="the gguf model whose tokenizer to use")
    args = parser.parse_args()
    api = get_model(f"gguf/{args.model}", prefix_cache_mb=0, memoize=False).api
    assert isinstance(api, GGUFModel)

    print("| strategy | prompts | prompt tokens | distinct prefixes (floor) |")
    print("| --- | --- | --- | --- |")
    every: list[list[int]] = []
    for info in list_eval_logs(args.log_dir):
        log = read_eval_log(info.name, resolve_attachments=True)
        prompts = [
            api.engine.prompt_ids(as_chat(event.input))
            for sample in log.samples or []
            for event in strategy_calls(sample)
            if event.cache != "read"
        ]
        total = sum(map(len, prompts))
        print(f"| {strategy_label(log)} | {len(prompts)} | {total} | {trie_size(prompts)} |")
        every += prompts
    total = sum(map(len, every))
    print(f"| all together | {len(every)} | {total} | {trie_size(every)} |")


if __name__ == "__main__":
    main()
