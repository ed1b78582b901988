"""The engine's configuration: one type, built in one place from the provider's ``-M`` arguments.

``EngineConfig.from_model_args`` checks the ``-M`` values (one line naming a bad one, before
any probe runs), resolves the model's file, chooses llama.cpp's extra buffers (``probe``)
and how concurrent requests are batched (``batch_probe``); the provider, ``engine_for`` and
``engine_server`` all take the ``EngineConfig`` it returns.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from cmi_inspect.errors import UserError, positive_int
from cmi_inspect.local_model.batch_probe import choose_batching, parse_parallel
from cmi_inspect.local_model.files import resolve_gguf
from cmi_inspect.local_model.probe import choose_extra_bufts

DEFAULT_N_CTX = 4096
"""Context window the embedded default runs with: SmolLM2 supports 8192, but
prompt processing on a small CPU slows down with the window, so the default
stays at 4096; raise it with ``-M n_ctx=8192``."""
DEFAULT_PREFIX_CACHE_MB = 2048
"""Memory for the KV states of earlier prompts, so that a prompt sharing a prefix with
one of them (an instruction, a conversation's history) skips re-evaluating it; SmolLM2-135M's
state takes about 23 KB a token, so this holds some 20 to 40 full-history prompts: in the
release, two examples sharing a history are up to 30 other histories apart.
``-M prefix_cache_mb=0`` turns prefix reuse off."""


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """One engine's model file and settings, named as the ``-M`` arguments name them.

    Equal configurations share one engine (``engine_for``); ``chosen_by``, ``batching_by``
    and ``exact_batches`` are recorded in every output but take no part in that equality:
    they change nothing computed."""

    path: Path
    extra_bufts: bool
    """Whether llama.cpp's extra weight buffers (AMX, repacking) are used."""
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int | None = None
    """None: as many as the machine has cores."""
    prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB
    """Memory for saved KV states; 0 turns prefix reuse off."""
    parallel: int = 1
    """Requests decoded together (``engine``); 1 decodes one at a time."""
    batch_kv: int | None = None
    """Rows of sequences holding at most this many tokens share a batch, longer ones are
    decoded alone; None: every row shares."""
    chosen_by: str = field(default="", compare=False)
    """What chose ``extra_bufts``: the ``-M`` value, or the probe and its verdict."""
    batching_by: str = field(default="", compare=False)
    """What chose ``parallel`` and ``batch_kv``: the ``-M`` value, or the batch probe."""
    exact_batches: bool = field(default=True, compare=False)
    """Whether a batched row was found computed as alone (``batch_probe``): False only for
    a forced ``-M parallel=N``, whose answers may differ from one slot's."""

    @property
    def threads(self) -> int:
        """llama.cpp's threads: ``n_threads``, else the machine's cores. A long prompt's
        answer can depend on it (flash attention splits a lone row's KV cache by thread)."""
        return self.n_threads or os.cpu_count() or 1

    @classmethod
    def from_model_args(
        cls,
        model_name: str,
        n_ctx: int | str = DEFAULT_N_CTX,
        n_threads: int | str | None = None,
        prefix_cache_mb: int | str = DEFAULT_PREFIX_CACHE_MB,
        extra_bufts: object = "auto",
        parallel: int | str = "auto",
        **unknown: object,
    ) -> EngineConfig:
        """The configuration of ``gguf/NAME`` with these ``-M`` arguments; a bad or unknown one
        is one line naming it, before the probe runs."""
        if unknown:
            raise UserError(f"Unknown arguments for the gguf provider: {sorted(unknown)}")
        window = positive_int("n_ctx", n_ctx)  # all checked before the probe runs
        threads = positive_int("n_threads", n_threads) if n_threads is not None else None
        cache_mb = positive_int("prefix_cache_mb", prefix_cache_mb, minimum=0)
        parse_parallel(parallel)
        path = resolve_gguf(model_name)
        choice = choose_extra_bufts(extra_bufts, path)
        batching = choose_batching(parallel, path, choice.extra_bufts, threads)
        return cls(
            path=path,
            extra_bufts=choice.extra_bufts,
            n_ctx=window,
            n_threads=threads,
            prefix_cache_mb=cache_mb,
            parallel=batching.parallel,
            batch_kv=batching.batch_kv,
            chosen_by=choice.chosen_by,
            batching_by=batching.chosen_by,
            exact_batches=batching.exact,
        )
