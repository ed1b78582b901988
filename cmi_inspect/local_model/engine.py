"""One loaded model per file and window, the one thread that runs its calls, prefix reuse.

Every call runs on the engine's own thread: llama.cpp computes with OpenMP, which keeps a
team of spinning worker threads for each thread that calls it, so calls from Inspect's
rotating pool of worker threads left idle teams competing with the busy one (measured on
two cores: 30 ms a generated token instead of 11).

A prompt starts from the KV state of the earlier prompt (in the context, or saved) sharing
its longest prefix, cut where every remaining token is decoded in the same kind of batch
as in a fresh run (``prefix_cache.reusable_prefix``): the logits, and hence the greedy
completions, are then bit-for-bit those of a fresh run.
"""

from __future__ import annotations

import atexit
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

from cmi_inspect.errors import UserError
from cmi_inspect.local_model.llamacpp import LlamaCpp
from cmi_inspect.local_model.prefix_cache import (
    LARGE_BATCH,
    ReuseStats,
    SavedStates,
    common_prefix,
    large_prefix,
    reusable_prefix,
)


class PromptTooLongError(UserError):
    """The prompt plus the requested completion does not fit the context window (the
    sample fails with this one line; the others go on)."""


class Engine:
    """Greedy chat completions on one llama.cpp model, reusing shared prompt prefixes."""

    def __init__(
        self, path: Path, n_ctx: int, n_threads: int | None, cache_mb: int, extra_bufts: bool
    ) -> None:
        self.llm = LlamaCpp(path, n_ctx, n_threads, extra_bufts)
        self.n_ctx = n_ctx
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama.cpp")
        self.reuse = cache_mb > 0
        self.saved = SavedStates(cache_mb * 2**20)
        self.live: tuple[int, ...] = ()
        """The prompt whose KV state the context holds now."""
        self.live_large = 0
        """How many of its leading tokens were computed in large batches."""
        self.stats = ReuseStats()

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt's tokens after the model's own chat template."""
        return self.llm.prompt_ids(messages)

    def prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        """How many tokens the prompt takes after the model's own chat template."""
        return len(self.prompt_ids(messages))

    def text_tokens(self, text: str) -> int:
        return len(self.llm.tokenize(text))

    def chat(
        self, messages: list[dict[str, str]], max_tokens: int, stop: list[str] | None
    ) -> dict[str, Any]:
        """A greedy chat completion, computed on the engine's thread (blocks until done)."""
        return self.worker.submit(self._chat, messages, max_tokens, stop).result()

    def _chat(
        self, messages: list[dict[str, str]], max_tokens: int, stop: list[str] | None
    ) -> dict[str, Any]:
        tokens = self.prompt_ids(messages)
        if len(tokens) + max_tokens > self.n_ctx:
            raise PromptTooLongError(
                f"Prompt of {len(tokens)} tokens plus max_tokens={max_tokens} exceeds "
                f"the {self.n_ctx}-token context window; shorten the input "
                "or raise the window with -M n_ctx=N."
            )
        reused = self._start_from_prefix(tokens)
        self.live = ()  # until the call succeeds, the context holds no known prompt
        response = self.llm.complete(messages, max_tokens, stop)
        self._decoded(tokens, reused)
        self.stats.calls += 1
        return response

    def _decoded(self, tokens: list[int], reused: int) -> None:
        """Record that the context now holds ``tokens``, decoded from its first ``reused``
        ones: which prompt is live, its large-batch prefix, its saved state, the counts."""
        self.live = tuple(tokens)
        self.live_large = large_prefix(reused, len(tokens), self.llm.block)
        if self.reuse and self.live_large > LARGE_BATCH:
            self.saved.put(self.live, self.llm.save_state(), self.live_large)
        self.stats.prompt_tokens += len(tokens)
        self.stats.evaluated_tokens += len(tokens) - reused

    def continuation_logprobs(
        self, messages: list[dict[str, str]], continuations: list[str]
    ) -> list[list[float]]:
        """Per token, the log-probability of each continuation as the assistant's whole
        reply to ``messages`` (its end-of-turn token included), computed on the engine's
        thread (blocks until done)."""
        return self.worker.submit(self._continuation_logprobs, messages, continuations).result()

    def _continuation_logprobs(
        self, messages: list[dict[str, str]], continuations: list[str]
    ) -> list[list[float]]:
        prompt = self.prompt_ids(messages)
        replies = [self.llm.tokenize(c) + [self.llm.end_of_turn()] for c in continuations]
        longest = max((len(r) for r in replies), default=0)
        if len(prompt) + longest > self.n_ctx:
            raise PromptTooLongError(
                f"Prompt of {len(prompt)} tokens plus a reply of {longest} exceeds the "
                f"{self.n_ctx}-token context window; raise it with -M n_ctx=N."
            )
        # the prompt but its last token is put in the context exactly as a fresh decoding
        # would compute it; the last token and each reply are then decoded in one small
        # batch, so a reply's log-probabilities are the same whatever ran before
        head = prompt[:-1]
        large = self._hold(head)
        self.live, self.live_large = (), 0  # until every reply is scored
        scores = [self.llm.tail_logprobs(prompt + reply, len(head)) for reply in replies]
        self.live, self.live_large = tuple(head), large
        self.stats.scored_tokens += sum(len(r) for r in replies)
        return scores

    def _hold(self, tokens: list[int]) -> int:
        """Put exactly ``tokens`` in the context, computed as a fresh decoding would; return
        how many of them were computed in large batches."""
        # held whole from large-batch tokens only where a fresh decoding of ``tokens`` has
        # no small last batch either; otherwise that batch is decoded again
        whole = self.reuse and large_prefix(0, len(tokens), self.llm.block) == len(tokens)
        if whole and min(common_prefix(self.live, tokens), self.live_large) >= len(tokens):
            self.llm.keep(tokens, len(tokens))
            return len(tokens)
        key, shared = self.saved.longest(tokens) if whole else ((), 0)
        if shared >= len(tokens):
            state, _ = self.saved.get(key)
            self.live, self.live_large = (), 0  # until the state is back
            self.llm.load_state(state)  # type: ignore[arg-type]
            self.llm.keep(tokens, len(tokens))
            return len(tokens)
        reused = self._start_from_prefix(tokens)
        self.live = ()
        self.llm.decode(tokens, reused)
        self._decoded(tokens, reused)
        return self.live_large

    def _start_from_prefix(self, tokens: list[int]) -> int:
        """Put the context at the best reusable prefix of ``tokens``; return its length."""
        if not self.reuse:
            self.llm.reset()
            return 0
        block = self.llm.block
        in_context = min(common_prefix(self.live, tokens), self.live_large)
        n = reusable_prefix(in_context, len(tokens), block)
        key, shared = self.saved.longest(tokens)
        from_saved = reusable_prefix(shared, len(tokens), block)
        if from_saved > n:
            state, large = self.saved.get(key)
            self.live, self.live_large = (), 0  # until the state is back
            self.llm.load_state(state)  # type: ignore[arg-type]
            self.live, self.live_large, n = key, large, from_saved
        self.llm.keep(tokens, n)
        return n

    def close(self) -> None:
        self.worker.shutdown()
        self.llm.close()


_loaded: list[Engine] = []


@cache
def engine_for(
    path: Path, n_ctx: int, n_threads: int | None, cache_mb: int, extra_bufts: bool
) -> Engine:
    """The process's one engine for this model file and configuration."""
    engine = Engine(path, n_ctx, n_threads, cache_mb, extra_bufts)
    _loaded.append(engine)
    return engine


def reuse_totals() -> ReuseStats:
    """Prompt tokens asked for and evaluated by every engine loaded in this process."""
    total = ReuseStats()
    for engine in _loaded:
        total.add(engine.stats)
    return total


@atexit.register
def _close_engines() -> None:
    """Free the llama.cpp models before the interpreter tears down the library they need."""
    for engine in _loaded:
        engine.close()
    _loaded.clear()
    engine_for.cache_clear()
