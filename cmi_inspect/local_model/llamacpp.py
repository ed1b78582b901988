"""The one adapter over llama-cpp-python: the engine and the benchmarks speak to llama.cpp
only through it.

``LlamaCpp`` gives tokens of a chat prompt, a greedy completion that may start from tokens
already in the context, the KV state saved and restored, the last token's logits, the
log-probabilities of forced tokens (``Completion`` stops a completion); ``sequences``
beside it, ``Sequences``, a second context holding several sequences decoded together. The
names llama-cpp-python does not document are reached through ``llama_private`` alone
(``model_params`` there loads a model with or without llama.cpp's extra weight-buffer types,
AMX and repacking; see ``probe``).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cmi_inspect.errors import UserError
from cmi_inspect.local_model import llama_private


def build_identity() -> dict[str, str]:
    """What identifies the installed llama.cpp build: version, CPU features, library file."""
    import llama_cpp

    library = llama_private.library_file()
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

        with llama_private.model_params(extra_bufts):
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

    def stops(self, stop: list[str] | None) -> list[str]:
        """The stop strings ``create_chat_completion`` uses: the caller's, then the text of
        the end-of-turn token (as its own chat handler spells it)."""
        return [*(stop or []), llama_private.token_text(self.llm, self.llm.token_eos())]

    def completion(
        self,
        prompt: list[int],
        max_tokens: int,
        stop: list[str] | None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        """An empty greedy completion of ``prompt``, stopped as ``complete`` stops."""
        stops = [s.encode() for s in self.stops(stop)]
        return Completion(self, prompt, max_tokens, stops, cancel=cancel)

    def detokenize(self, tokens: list[int], prev: list[int]) -> bytes:
        return self.llm.detokenize(tokens, prev_tokens=prev)

    def is_end(self, token: int) -> bool:
        """Whether the token ends generation (an end-of-generation token of the vocabulary)."""
        return llama_private.is_end_of_generation(self.llm, token)

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
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        stop: list[str] | None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """A greedy chat completion, in llama-cpp-python's OpenAI-style response dict; once
        ``cancel`` is set, it ends at its next token."""
        return self.llm.create_chat_completion(  # type: ignore[return-value]
            messages=messages,  # type: ignore[arg-type]
            temperature=0.0,
            max_tokens=max_tokens,
            stop=stop,
            logits_processor=self._ended_by(cancel) if cancel is not None else None,
        )

    def _ended_by(self, cancel: threading.Event) -> Any:
        """A logits processor that leaves the logits as they are until ``cancel`` is set,
        then leaves the end-of-turn token alone possible (the one hook into
        ``create_chat_completion``'s loop: an exception raised there would be lost in
        llama.cpp's sampler callback)."""
        from llama_cpp import LogitsProcessorList

        end = self.end_of_turn()

        def processor(_: Any, logits: np.ndarray) -> np.ndarray:
            if cancel.is_set():
                logits[:] = -np.inf
                logits[end] = 0.0
            return logits

        return LogitsProcessorList([processor])

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
        logits = llama_private.logits_buffer(self.llm)
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
        llama_private.forget_after(self.llm, start)
        n_vocab = self.llm.n_vocab()
        logprobs: list[float] = []
        for first in range(start, len(tokens) - 1, self.block):
            batch = list(tokens[first : min(first + self.block, len(tokens) - 1)])
            llama_private.decode_all_logits(self.llm, batch, first)
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


@dataclass
class Completion:
    """One greedy completion's tokens and text, stopped where llama-cpp-python's
    ``create_completion`` stops (an end-of-generation token, a stop string, whose text is
    cut before it, or ``max_tokens``), so that decoding it in a batch answers the same."""

    llm: LlamaCpp
    prompt: list[int]
    max_tokens: int
    stop: list[bytes]
    tokens: list[int] = field(default_factory=list)
    text: bytes = b""
    finish_reason: str | None = None
    """None while it goes on; then ``stop`` or ``length``."""
    cancel: threading.Event | None = None
    """Once set, the completion ends at its next token."""
    _multibyte: int = 0

    def add(self, token: int) -> bool:
        """Take the next greedy token; True when the completion has ended."""
        if self.llm.is_end(token) or (self.cancel is not None and self.cancel.is_set()):
            self.text, self.finish_reason = self.llm.detokenize(self.tokens, self.prompt), "stop"
            return True
        self.tokens.append(token)
        text = self.llm.detokenize(self.tokens, self.prompt)
        for k, char in enumerate(text[-3:]):  # an unfinished UTF-8 character waits
            k = 3 - k
            for num, pattern in ((2, 192), (3, 224), (4, 240)):
                if num > k and pattern & char == pattern:
                    self._multibyte = num - k
        if self._multibyte > 0:
            self._multibyte -= 1
            return False
        found = [s for s in self.stop if s in text]
        if found:
            self.text, self.finish_reason = text[: text.index(found[0])], "stop"
            return True
        if len(self.tokens) >= self.max_tokens:
            self.text, self.finish_reason = text, "length"
            return True
        return False

    def response(self) -> dict[str, Any]:
        """The completion in ``create_chat_completion``'s response shape."""
        n_prompt, n_reply = len(self.prompt), len(self.tokens)
        return {
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.text.decode(errors="ignore")},
                    "logprobs": None,
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": n_prompt,
                "completion_tokens": n_reply,
                "total_tokens": n_prompt + n_reply,
            },
        }
