"""One loaded model per file and window, the one thread that runs its calls, prefix reuse.

Every call runs on the engine's own thread: llama.cpp computes with OpenMP, which keeps a
team of spinning worker threads for each thread that calls it, so calls from Inspect's
rotating pool of worker threads left idle teams competing with the busy one (measured on
two cores: 30 ms a generated token instead of 11).

A prompt starts from the KV state of the earlier prompt (in the context, or saved) sharing
its longest prefix, cut where every remaining token is decoded in the same kind of batch
as in a fresh run (``prefix_cache.reusable_prefix``): the logits, and hence the greedy
completions, are then bit-for-bit those of a fresh run.

With ``parallel`` above 1, completions run in the slots of a multi-sequence context
(``sequences.Sequences``): the engine's thread admits waiting requests into free slots,
decodes each new prompt alone, then decodes one token of every running slot per batch
(continuous batching, as llama.cpp's server does with ``--parallel``); a prompt waits while a
slot decodes one sharing a block more of it (``worth_waiting``). Forced decoding
and everything else still runs on that thread, between batches. A long sequence's row is
computed differently in a batch than alone (``sequences.BATCH_INVARIANT_KV``), so with
``batch_kv`` set only the rows of shorter sequences share a batch and the completions are
bit for bit those of ``parallel=1``; ``batch_probe`` checks it on this machine first.
"""

from __future__ import annotations

import atexit
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cmi_inspect.errors import UserError
from cmi_inspect.local_model.config import EngineConfig
from cmi_inspect.local_model.llamacpp import Completion, LlamaCpp
from cmi_inspect.local_model.prefix_cache import (
    LARGE_BATCH,
    ReuseStats,
    SavedStates,
    common_prefix,
    large_prefix,
    reusable_prefix,
    worth_waiting,
)
from cmi_inspect.local_model.progress import step
from cmi_inspect.local_model.sequences import GenerationCancelled, Sequences, Slot


class PromptTooLongError(UserError):
    """The prompt plus the requested completion does not fit the context window (the
    sample fails with this one line; the others go on)."""


@dataclass
class Work:
    """What waits for the engine's thread: calls to run, completions to admit."""

    calls: deque[tuple[Callable[[], Any], Future[Any]]] = field(default_factory=deque)
    completions: deque[tuple[list[int], Completion, Future[dict[str, Any]]]] = field(
        default_factory=deque
    )
    closing: bool = False


class Engine:
    """Greedy chat completions on one llama.cpp model, reusing shared prompt prefixes."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        with step(f"loading {config.path.name} into llama.cpp", "usually a few seconds"):
            self.llm = LlamaCpp(config.path, config.n_ctx, config.threads, config.extra_bufts)
        parallel = config.parallel
        self.sequences = Sequences(self.llm, parallel, config.n_ctx) if parallel > 1 else None
        self.slots = [Slot(seq) for seq in range(parallel)] if parallel > 1 else []
        self.work = Work()
        self.wake = threading.Condition()
        self.thread = threading.Thread(target=self._serve, name="llama.cpp", daemon=True)
        self.thread.start()
        self.reuse = config.prefix_cache_mb > 0
        # the single context and the slots' context keep their saved prompt states apart:
        # llama.cpp cannot restore a sequence's state into a context of another shape
        budget = config.prefix_cache_mb * 2**20 // (2 if self.sequences is not None else 1)
        self.saved = SavedStates(budget)
        """Prompt states the single context saved (completions alone, forced decoding)."""
        self.slot_saved = SavedStates(budget)
        """Prompt states the slots saved (batched completions)."""
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

    def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the engine's thread, between batches (blocks until done)."""
        future: Future[Any] = Future()
        with self.wake:
            self.work.calls.append((lambda: fn(*args), future))
            self.wake.notify()
        return future.result()

    def chat(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        stop: list[str] | None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """A greedy chat completion, computed on the engine's thread (blocks until done);
        ``GenerationCancelled`` if ``cancel`` is set before it ends."""
        tokens = self.prompt_ids(messages)
        if len(tokens) + max_tokens > self.config.n_ctx:
            raise PromptTooLongError(
                f"Prompt of {len(tokens)} tokens plus max_tokens={max_tokens} exceeds "
                f"the {self.config.n_ctx}-token context window; shorten the input "
                "or raise the window with -M n_ctx=N."
            )
        if self.sequences is None:
            response = self._run(self._chat, messages, tokens, max_tokens, stop, cancel)
        else:
            future: Future[dict[str, Any]] = Future()
            with self.wake:
                completion = self.llm.completion(tokens, max_tokens, stop, cancel)
                self.work.completions.append((tokens, completion, future))
                self.wake.notify()
            response = future.result()
        _check(cancel)
        return response  # type: ignore[no-any-return]

    def _chat(
        self,
        messages: list[dict[str, str]],
        tokens: list[int],
        max_tokens: int,
        stop: list[str] | None,
        cancel: threading.Event | None,
    ) -> dict[str, Any]:
        _check(cancel)  # cancelled while it waited: nothing to decode
        reused = self._start_from_prefix(tokens)
        self.live = ()  # until the call succeeds, the context holds no known prompt
        response = self.llm.complete(messages, max_tokens, stop, cancel)
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
        return self._run(self._continuation_logprobs, messages, continuations)  # type: ignore[no-any-return]

    def _continuation_logprobs(
        self, messages: list[dict[str, str]], continuations: list[str]
    ) -> list[list[float]]:
        prompt = self.prompt_ids(messages)
        replies = [self.llm.tokenize(c) + [self.llm.end_of_turn()] for c in continuations]
        longest = max((len(r) for r in replies), default=0)
        if len(prompt) + longest > self.config.n_ctx:
            raise PromptTooLongError(
                f"Prompt of {len(prompt)} tokens plus a reply of {longest} exceeds the "
                f"{self.config.n_ctx}-token context window; raise it with -M n_ctx=N."
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

    def _serve(self) -> None:
        """The engine's thread: calls as they come; completions admitted into free slots,
        then one batch for every running slot, until the engine closes."""
        while True:
            with self.wake:
                while not (self.work.calls or self._admissible() or self._running()):
                    if self.work.closing:
                        return
                    self.wake.wait()
                calls = list(self.work.calls)
                self.work.calls.clear()
                admitted: list[Any] = []
                waiting: deque[Any] = deque()
                while self._admissible():
                    tokens, completion, future = entry = self.work.completions.popleft()
                    if self._waits(tokens, [a[1] for a in admitted]):
                        waiting.append(entry)  # until a slot's prompt sharing it is saved
                        continue
                    admitted.append((self._slot_for(tokens), tokens, completion, future))
                    admitted[-1][0].future = future  # taken
                self.work.completions.extendleft(reversed(waiting))
            for fn, call in calls:
                try:
                    call.set_result(fn())
                except BaseException as e:  # noqa: BLE001  (the caller raises it)
                    call.set_exception(e)
            for slot, tokens, completion, future in admitted:
                self._admit(slot, tokens, completion, future)
            if self._running():
                self._step()

    def _admissible(self) -> bool:
        return bool(self.work.completions) and any(s.future is None for s in self.slots)

    def _running(self) -> list[Slot]:
        return [s for s in self.slots if s.completion is not None]

    def _waits(self, tokens: list[int], taken: list[list[int]]) -> bool:
        """Whether a prompt waits for a prompt a slot is decoding (``worth_waiting``); the
        saved states are searched only for a prompt that shares a block with a busy one."""
        block = self.llm.block
        busy = [*(s.completion.prompt for s in self._running() if s.completion), *taken]
        busy = [b for b in busy if common_prefix(b, tokens) >= block]
        if not self.reuse or not busy:
            return False
        free = [
            min(common_prefix(s.live, tokens), s.live_large) for s in self.slots if not s.future
        ]
        at_hand = max([self.slot_saved.longest(tokens)[1], *free])
        return worth_waiting(tokens, busy, at_hand, block)

    def _slot_for(self, tokens: list[int]) -> Slot:
        """The free slot whose prompt shares the longest reusable prefix with ``tokens``."""
        free = [s for s in self.slots if s.future is None]
        return max(free, key=lambda s: min(common_prefix(s.live, tokens), s.live_large))

    def _admit(
        self, slot: Slot, tokens: list[int], completion: Completion, future: Future[dict[str, Any]]
    ) -> None:
        """Decode a prompt alone into the slot's sequence, from its best reusable prefix."""
        assert self.sequences is not None
        try:
            _check(completion.cancel)  # cancelled while it waited: nothing to decode
            block = self.llm.block
            in_slot = min(common_prefix(slot.live, tokens), slot.live_large) if self.reuse else 0
            n = reusable_prefix(in_slot, len(tokens), block)
            key, shared = self.slot_saved.longest(tokens) if self.reuse else ((), 0)
            from_saved = reusable_prefix(shared, len(tokens), block)
            slot.live, slot.live_large = (), 0  # until the prompt is decoded
            if from_saved > n:
                state, _ = self.slot_saved.get(key)
                self.sequences.load_state(slot.seq, state)  # type: ignore[arg-type]
                n = from_saved
            token = self.sequences.prompt(slot.seq, tokens, n, completion.cancel)
        except BaseException as e:  # noqa: BLE001  (the caller raises it)
            slot.future = None
            future.set_exception(e)
            return
        slot.completion, slot.reused, slot.position = completion, n, len(tokens)
        self._advance(slot, token)

    def _step(self) -> None:
        """The last token of every running slot: one batch, or one batch of the short rows
        and one of its own for each long one (``Sequences.step``)."""
        assert self.sequences is not None
        running = self._running()
        try:
            rows = [(s.seq, s.next_token, s.position) for s in running]
            tokens = self.sequences.step(rows, self.config.batch_kv)
        except BaseException as e:  # noqa: BLE001  (every caller raises it)
            for s in running:
                assert s.future is not None
                s.future.set_exception(e)
                s.completion, s.future, s.live, s.live_large = None, None, (), 0
            return
        for slot, token in zip(running, tokens, strict=True):
            slot.position += 1
            self._advance(slot, token)

    def _advance(self, slot: Slot, token: int) -> None:
        """Give the slot's completion its next token; on its end, answer the caller and
        keep the prompt's state as a completion on the single context would."""
        assert slot.completion is not None and slot.future is not None
        if not slot.completion.add(token):
            slot.next_token = token
            return
        assert self.sequences is not None
        completion, future = slot.completion, slot.future
        prompt = completion.prompt
        slot.live = tuple(prompt)
        slot.live_large = large_prefix(slot.reused, len(prompt), self.llm.block)
        if self.reuse and slot.live_large > LARGE_BATCH:
            self.slot_saved.put(slot.live, self.sequences.save_state(slot.seq), slot.live_large)
        self.stats.prompt_tokens += len(prompt)
        self.stats.evaluated_tokens += len(prompt) - slot.reused
        self.stats.calls += 1
        slot.completion, slot.future = None, None
        future.set_result(completion.response())

    def close(self) -> None:
        with self.wake:
            self.work.closing = True
            self.wake.notify()
        self.thread.join()
        if self.sequences is not None:
            self.sequences.close()
        self.llm.close()


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise GenerationCancelled("the completion was cancelled")


_loaded: list[Engine] = []


@cache
def engine_for(config: EngineConfig) -> Engine:
    """The process's one engine for this model file and configuration."""
    engine = Engine(config)
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
