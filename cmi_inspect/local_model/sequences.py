"""llama.cpp's second context for batched decoding, the other half of the adapter over
llama-cpp-python (``llamacpp``): ``Sequences`` holds several sequences decoded together
(``Completion`` stops each as a completion would stop), whose operations' results an
observer can read as they are computed (``Activation``), ``BATCH_INVARIANT_KV`` says
which of its rows a batch computes exactly as alone, and ``Slot`` is a sequence as the
engine schedules it.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from cmi_inspect.local_model import llama_private
from cmi_inspect.local_model.llamacpp import Completion, LlamaCpp


class GenerationCancelled(Exception):
    """The caller set the completion's ``cancel`` flag: its client has gone, or the server
    is stopping. Generation ended at the next token (or never started)."""


BATCH_INVARIANT_KV = 256
"""A row whose sequence holds at most this many tokens (its new one included) is computed
in a batch as it is alone, bit for bit; a longer one is not. llama.cpp pads a sequence's
KV cache to a multiple of 256 cells, and its CPU flash attention
(``ggml_compute_forward_flash_attn_ext_f16``) attends a lone query row over 512 cells or
more in one chunk per thread, each summed in F16, then combines the chunks; a batch of rows
(or a shorter cache) is attended in one pass per row. ``benchmarks/batch_invariance.py``
shows it operation by operation and ``batch_probe`` checks it before any batch is decoded."""


class _GgmlTensor(ctypes.Structure):
    """The head of ggml's ``struct ggml_tensor`` (``ggml.h``), up to its name: what an
    observer of a decode reads."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * 16),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * 10),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * 64),
    ]


_FLOAT_TYPES = {0: np.float32, 1: np.float16}
"""ggml's F32 and F16 tensor types: the results an observer is shown."""


@dataclass(frozen=True)
class Activation:
    """One operation's result as a decode computed it: the tensor's name (``ffn_out-3`` is
    layer 3's), its operation, and its values (float32; ggml's dimensions in reverse)."""

    name: str
    op: str
    values: np.ndarray


def _eval_callback(observe: Callable[[Activation], None]) -> Any:
    """llama.cpp's ``cb_eval``: asks for every operation's result, hands each F32 or F16 one
    to ``observe`` (the CPU backend's tensors are in memory, read through their strides)."""
    import llama_cpp

    describe = llama_private.op_description()

    def seen(address: int, ask: bool, _: Any) -> bool:
        if ask:
            return True
        tensor = _GgmlTensor.from_address(address)
        dtype = _FLOAT_TYPES.get(tensor.type)
        if dtype is not None and tensor.data:
            shape, strides = list(tensor.ne)[::-1], list(tensor.nb)[::-1]
            span = sum((n - 1) * b for n, b in zip(shape, strides, strict=True))
            raw = (ctypes.c_uint8 * (span + np.dtype(dtype).itemsize)).from_address(tensor.data)
            values = np.ndarray(shape, dtype=dtype, buffer=raw, strides=strides)
            name, op = tensor.name.decode(errors="replace"), describe(address).decode()
            observe(Activation(name, op, values.astype(np.float32)))
        return True

    return llama_cpp.ggml_backend_sched_eval_callback(seen)


class Sequences:
    """A second context of the same model with ``n`` sequences, each in its own KV stream,
    for decoding several requests together.

    A prompt is decoded alone, in the blocks a fresh run uses; then each batch holds one
    token of every running sequence, or of those short enough to be computed there as alone
    (``step``'s ``batch_kv``: see ``BATCH_INVARIANT_KV``). A sequence decoded alone gets the
    single context's logits bit for bit; a long one batched with others does not (one
    617-token prompt's next-token logits moved by up to 0.61 beside any second sequence),
    so a near tie can flip: ``benchmarks/compare_completions.py`` counts the completions
    that change.

    ``settings`` overrides fields of llama.cpp's context parameters by name (``kv_unified``,
    ``n_threads``, ...) and ``observe`` sees every operation's result, for the diagnosis in
    ``benchmarks/batch_invariance.py``; the engine uses neither.
    """

    def __init__(
        self,
        llm: LlamaCpp,
        n: int,
        n_ctx: int,
        settings: Mapping[str, Any] | None = None,
        observe: Callable[[Activation], None] | None = None,
    ) -> None:
        import llama_cpp

        base = llm.llm.context_params
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx * n
        params.n_batch, params.n_ubatch = base.n_batch, base.n_ubatch
        params.n_seq_max, params.kv_unified = n, False
        params.n_threads, params.n_threads_batch = base.n_threads, base.n_threads_batch
        params.flash_attn_type = base.flash_attn_type
        for name, value in (settings or {}).items():
            setattr(params, name, value)
        self._observer = _eval_callback(observe) if observe is not None else None
        if self._observer is not None:
            params.cb_eval = self._observer  # kept alive with the context
        self.ctx = llama_private.second_context(llm.llm, params)
        self.batch = llama_cpp.llama_batch_init(max(llm.block, n), 0, 1)
        self.block = llm.block
        self.n = n
        self.n_vocab = llm.llm.n_vocab()

    def _decode(self, rows: Sequence[tuple[int, int, int, bool]]) -> None:
        """Decode one batch of (token, position, sequence, wants logits) rows."""
        import llama_cpp

        b = self.batch
        b.n_tokens = len(rows)
        for i, (token, pos, seq, logits) in enumerate(rows):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = token, pos, 1, logits
            b.seq_id[i][0] = seq
        if llama_cpp.llama_decode(self.ctx.ctx, b) != 0:
            raise RuntimeError("llama.cpp could not decode a batch")

    def _logits(self, row: int) -> np.ndarray:
        """The last batch's logits of ``row`` (a view into llama.cpp's buffer)."""
        import llama_cpp

        logits = llama_cpp.llama_get_logits_ith(self.ctx.ctx, row)
        return np.ctypeslib.as_array(logits, shape=(self.n_vocab,))

    def prompt(
        self, seq: int, tokens: Sequence[int], start: int, cancel: threading.Event | None = None
    ) -> int:
        """Decode ``tokens[start:]`` onto the sequence's first ``start`` tokens in
        ``block``-token batches, as llama-cpp-python decodes a prompt; the greedy next token.
        ``GenerationCancelled`` between batches once ``cancel`` is set (a long prompt is no
        wait for a Ctrl-C)."""
        self.keep(seq, start)
        last = 0
        for first in range(start, len(tokens), self.block):
            if cancel is not None and cancel.is_set():
                raise GenerationCancelled("the completion was cancelled")
            chunk = tokens[first : first + self.block]
            self._decode([(t, first + i, seq, i == len(chunk) - 1) for i, t in enumerate(chunk)])
            last = len(chunk) - 1
        return int(np.argmax(self._logits(last)))

    def keep(self, seq: int, n: int) -> None:
        """Keep the sequence's first ``n`` tokens; the next row decoded goes at position ``n``."""
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(self.ctx.ctx), seq, n, -1)

    def step_logits(
        self, rows: Sequence[tuple[int, int, int]], batch_kv: int | None = None
    ) -> np.ndarray:
        """Decode one (sequence, token, position) row per running sequence; each row's
        logits. The rows whose sequence then holds at most ``batch_kv`` tokens (all of them
        where it is None) share one batch; every other row is decoded in a batch of its own."""
        logits = np.empty((len(rows), self.n_vocab), dtype=np.float32)
        shared = [i for i, (_, _, pos) in enumerate(rows) if batch_kv is None or pos < batch_kv]
        alone = [[i] for i in range(len(rows)) if i not in shared]
        for batch in ([shared] if shared else []) + alone:
            self._decode([(rows[i][1], rows[i][2], rows[i][0], True) for i in batch])
            for k, i in enumerate(batch):
                logits[i] = self._logits(k)
        return logits

    def step(self, rows: Sequence[tuple[int, int, int]], batch_kv: int | None = None) -> list[int]:
        """``step_logits``'s rows, as the greedy next token of each."""
        return [int(t) for t in np.argmax(self.step_logits(rows, batch_kv), axis=1)]

    def save_state(self, seq: int) -> ctypes.Array[ctypes.c_uint8]:
        import llama_cpp

        size = llama_cpp.llama_state_seq_get_size(self.ctx.ctx, seq)
        state = (ctypes.c_uint8 * size)()
        llama_cpp.llama_state_seq_get_data(self.ctx.ctx, state, size, seq)
        return state

    def load_state(self, seq: int, state: ctypes.Array[ctypes.c_uint8]) -> None:
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(self.ctx.ctx), seq, -1, -1)
        if not llama_cpp.llama_state_seq_set_data(self.ctx.ctx, state, len(state), seq):
            raise RuntimeError("llama.cpp could not restore a saved prompt state")

    def close(self) -> None:
        import llama_cpp

        llama_cpp.llama_batch_free(self.batch)
        self.ctx.close()


@dataclass
class Slot:
    """One sequence of the multi-sequence context: the prompt it holds, and the completion
    it is decoding (None: free)."""

    seq: int
    live: tuple[int, ...] = ()
    live_large: int = 0
    completion: Completion | None = None
    future: Future[dict[str, Any]] | None = None
    reused: int = 0
    next_token: int = 0
    position: int = 0
