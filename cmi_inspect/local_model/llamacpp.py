"""The one adapter over llama-cpp-python: every use of its internals lives here.

The engine and the benchmarks speak to llama.cpp only through ``LlamaCpp``: tokens of a
chat prompt, a greedy completion that may start from tokens already in the context, the
KV state saved and restored, the last token's logits, the log-probabilities of forced
tokens. ``model_params`` loads a model
with or without llama.cpp's extra weight-buffer types (AMX, repacking; see ``probe``).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from cmi_inspect.errors import UserError

_PARAMS_LOCK = threading.Lock()


@contextmanager
def model_params(extra_bufts: bool) -> Iterator[None]:
    """Models loaded inside this block use llama.cpp's extra buffer types or not.

    llama-cpp-python has no argument for ``use_extra_bufts``: it reads llama.cpp's default
    model parameters, so the block swaps that one function (under a lock, so a model
    loaded concurrently in another thread cannot see the swap).
    """
    import llama_cpp.llama_cpp as lib

    with _PARAMS_LOCK:
        default = lib.llama_model_default_params

        def chosen() -> Any:
            params = default()
            params.use_extra_bufts = extra_bufts
            return params

        lib.llama_model_default_params = chosen
        try:
            yield
        finally:
            lib.llama_model_default_params = default


def build_identity() -> dict[str, str]:
    """What identifies the installed llama.cpp build: version, CPU features, library file."""
    import llama_cpp
    import llama_cpp.llama_cpp as lib

    library = Path(getattr(lib._lib, "_name", "") or "")
    stat = library.stat() if library.is_file() else None
    return {
        "version": llama_cpp.__version__,
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
        "library": f"{library.name}:{stat.st_size}:{stat.st_mtime_ns}" if stat else "",
    }


class LlamaCpp:
    """A loaded GGUF model and its one context (greedy decoding, flash attention)."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int | None, extra_bufts: bool) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        with model_params(extra_bufts):
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
        self.block = self.llm.n_batch
        """Tokens per batch when a prompt is decoded."""
        self.template = Jinja2ChatFormatter(
            template=self.llm.metadata["tokenizer.chat_template"],
            eos_token=self.llm.detokenize([self.llm.token_eos()]).decode(),
            bos_token=self.llm.detokenize([self.llm.token_bos()]).decode(),
        )
        shortest = len(self.prompt_ids([{"role": "user", "content": ""}]))
        if n_ctx <= shortest:
            self.close()
            raise UserError(
                f"n_ctx={n_ctx} is too small for {path.name}: its shortest chat prompt "
                f"alone takes {shortest} tokens."
            )

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt's tokens after the model's own chat template, as llama-cpp-python
        builds them for ``create_chat_completion``."""
        result = self.template(messages=messages)  # type: ignore[arg-type]
        return self.llm.tokenize(
            result.prompt.encode(), add_bos=not result.added_special, special=True
        )

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=False)

    def keep(self, tokens: Sequence[int], n: int) -> None:
        """Keep the context's first ``n`` tokens, which must be ``tokens[:n]``; the next
        completion decodes only what follows them (``n=0``: from scratch)."""
        self.llm.input_ids[:n] = tokens[:n]
        self.llm.n_tokens = n

    def reset(self) -> None:
        self.llm.reset()

    def complete(
        self, messages: list[dict[str, str]], max_tokens: int, stop: list[str] | None
    ) -> dict[str, Any]:
        """A greedy chat completion, in llama-cpp-python's OpenAI-style response dict."""
        return self.llm.create_chat_completion(  # type: ignore[return-value]
            messages=messages,  # type: ignore[arg-type]
            temperature=0.0,
            max_tokens=max_tokens,
            stop=stop,
        )

    def save_state(self) -> ctypes.Array[ctypes.c_uint8]:
        """The KV state of the context's sequence, as llama.cpp serialises it."""
        import llama_cpp

        size = llama_cpp.llama_state_seq_get_size(self.llm.ctx, 0)
        state = (ctypes.c_uint8 * size)()
        llama_cpp.llama_state_seq_get_data(self.llm.ctx, state, size, 0)
        return state

    def load_state(self, state: ctypes.Array[ctypes.c_uint8]) -> None:
        """Put a saved KV state back into the context's sequence."""
        import llama_cpp

        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.llm.ctx), True)
        if not llama_cpp.llama_state_seq_set_data(self.llm.ctx, state, len(state), 0):
            raise RuntimeError("llama.cpp could not restore a saved prompt state")

    def logits_after(self, tokens: Sequence[int], start: int) -> np.ndarray:
        """The last token's logits, decoding ``tokens[start:]`` onto the context's first
        ``start`` tokens in llama-cpp-python's own batches."""
        self.keep(tokens, start)
        self.llm.eval(tokens[start:])
        logits = self.llm._ctx.get_logits()
        return np.ctypeslib.as_array(logits, shape=(self.llm.n_vocab(),)).copy()

    def decode(self, tokens: Sequence[int], start: int) -> None:
        """Decode ``tokens[start:]`` onto the context's first ``start`` tokens in
        llama-cpp-python's own batches, as a completion would decode its prompt."""
        self.keep(tokens, start)
        self.llm.eval(tokens[start:])

    def tail_logprobs(self, tokens: Sequence[int], start: int) -> list[float]:
        """Each of ``tokens[start + 1:]``'s log-probability given every token before it
        (forced decoding), decoding ``tokens[start:]`` onto the context's first ``start``
        tokens in one batch per block, with logits only where they are read."""
        import llama_cpp

        self.keep(tokens, start)
        self.llm._ctx.kv_cache_seq_rm(-1, start, -1)
        n_vocab = self.llm.n_vocab()
        logprobs: list[float] = []
        for first in range(start, len(tokens) - 1, self.block):
            batch = list(tokens[first : min(first + self.block, len(tokens) - 1)])
            self.llm._batch.set_batch(batch=batch, n_past=first, logits_all=True)
            self.llm._ctx.decode(self.llm._batch)
            self.llm.input_ids[first : first + len(batch)] = batch
            self.llm.n_tokens = first + len(batch)
            rows = np.ctypeslib.as_array(
                llama_cpp.llama_get_logits(self.llm.ctx), shape=(len(batch), n_vocab)
            ).astype(np.float64)
            top = rows.max(axis=1, keepdims=True)
            norm = top[:, 0] + np.log(np.exp(rows - top).sum(axis=1))
            targets = tokens[first + 1 : first + 1 + len(batch)]
            logprobs += [float(rows[i, t] - norm[i]) for i, t in enumerate(targets)]
        return logprobs

    def end_of_turn(self) -> int:
        """The token that ends an assistant turn in the chat template."""
        return self.llm.token_eos()

    def close(self) -> None:
        self.llm.close()
