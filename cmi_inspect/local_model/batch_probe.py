"""Which rows does llama.cpp compute in a batch exactly as alone, here? Decode and compare.

A batched completion must be the completion of ``parallel=1`` bit for bit, or a benchmark's
answers would depend on which requests happened to share a batch. On CPU they are not for
long sequences: llama.cpp's flash attention attends a lone query over a long KV cache in
chunks, one per thread, and combines them, but attends each row of a batch in one pass
(``sequences.BATCH_INVARIANT_KV``); on the 87, batching every row changed 90 of 1,182
greedy completions (``docs/RESULTS.md``).

So before the first batched decoding ``-M parallel=auto`` (the default) decodes a few
sequences, short and long, on the single context one token at a time, then together in
the slots of a multi-sequence context, and compares every row's logits bit for bit: first
with every row batched, then with only the rows of at most ``BATCH_INVARIANT_KV`` tokens
batched (the others decoded alone). Its verdict, ``all``, ``short`` or ``none``, is cached
per CPU, llama.cpp build, model file, thread count and buffer choice; ``auto`` then runs
``AUTO_PARALLEL`` slots that batch the rows found exact, or one slot where none were.
``-M parallel=N`` skips the probe and batches every row of N slots (faster, answers may
differ from one slot's); ``CMI_BATCH_VERDICT=all|short|none`` takes that verdict as if the
probe had reached it (for tests, which must hold whichever way it decides).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, cast

import numpy as np

from cmi_inspect.errors import UserError, positive_int
from cmi_inspect.local_model import progress
from cmi_inspect.local_model.llamacpp import LlamaCpp
from cmi_inspect.local_model.probe import probe_key
from cmi_inspect.local_model.sequences import BATCH_INVARIANT_KV, Sequences
from cmi_inspect.paths import cache_dir

Rows = Literal["all", "short", "none"]
"""Which rows a batch computes as alone: every one, those of at most ``BATCH_INVARIANT_KV``
tokens, or not even those."""
ROWS: tuple[Rows, ...] = ("all", "short", "none")
AUTO_PARALLEL = 4
"""Slots ``parallel=auto`` runs where some rows batch exactly (issue 22 measured 4)."""
PROBE_LENGTHS = (40, 250, 270, 300)
"""Prompt tokens of the probe's sequences: one short, one that passes 256 tokens while it
decodes, two long (their lone rows attend over 512 cells, in chunks)."""
PROBE_STEPS = 8
"""Tokens each sequence decodes after its prompt."""
PROBE_CTX = 1024
VERDICT_ENV = "CMI_BATCH_VERDICT"
TEXT = (
    "Melanie painted a sunrise over the lake last summer and kept it for her kids. "
    "Caroline went to a support group on Tuesday, then signed up for a counseling course. "
    "They talked about adoption agencies, camping in the mountains and a pottery class. "
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchVerdict:
    """What the probe found: which rows batch exactly, why, and how long it took."""

    rows: Rows
    reason: str
    seconds: float

    @classmethod
    def from_json(cls, text: str) -> BatchVerdict | None:
        """A verdict as ``probed`` wrote it, or None for anything else."""
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict) or data.keys() != {"rows", "reason", "seconds"}:
            return None
        rows, reason, seconds = data["rows"], data["reason"], data["seconds"]
        if not (
            rows in ROWS
            and isinstance(reason, str)
            and type(seconds) in (int, float)
            and math.isfinite(seconds)
            and seconds >= 0
        ):
            return None
        return cls(rows, reason, float(seconds))


@dataclass(frozen=True)
class Batching:
    """How the engine decodes concurrent requests, and what chose it (recorded in every
    output)."""

    parallel: int
    batch_kv: int | None
    """Rows of sequences holding at most this many tokens share a batch; None: every row."""
    exact: bool
    """Whether the probe found the batched rows computed as alone (one slot always is)."""
    chosen_by: str


def parse_parallel(value: object) -> int | Literal["auto"]:
    """``-M parallel=``: ``auto`` or a number of slots of at least 1."""
    if str(value).strip().lower() == "auto":
        return "auto"
    try:
        return positive_int("parallel", value)
    except UserError:
        message = f"parallel must be auto or an integer of at least 1, got {value!r}."
        raise UserError(message) from None


def _agree(expected: list[list[np.ndarray]], got: list[list[np.ndarray]]) -> float:
    """The largest difference between two runs' logits (0.0: bit for bit the same)."""
    worst = 0.0
    for a, b in zip(expected, got, strict=True):
        for x, y in zip(a, b, strict=True):
            if not np.array_equal(x, y):
                worst = max(worst, float(np.abs(x - y).max()), 1e-30)
    return worst


def probe_prompts(llm: LlamaCpp) -> list[list[int]]:
    """The probe's prompts: ``PROBE_LENGTHS`` tokens of plain text, each from its own start."""
    words = TEXT.split()
    prompts = []
    for i, n in enumerate(PROBE_LENGTHS):
        text = " ".join(words[i * 7 :] + words * (n // 10 + 2))
        prompts.append(llm.tokenize(text)[:n])
    return prompts


def alone(llm: LlamaCpp, prompt: list[int], steps: int) -> list[np.ndarray]:
    """Logits of each of ``steps`` greedy tokens after ``prompt`` on the single context, as
    ``parallel=1`` decodes: the prompt in its blocks, then one token at a time."""
    llm.reset()
    tokens = list(prompt)
    logits = [llm.logits_after(tokens, 0)]
    for _ in range(steps - 1):
        tokens.append(int(np.argmax(logits[-1])))
        logits.append(llm.logits_after(tokens, len(tokens) - 1))
    return logits[1:]


def together(
    sequences: Sequences,
    prompts: list[list[int]],
    firsts: list[int],
    steps: int,
    batch_kv: int | None,
) -> list[list[np.ndarray]]:
    """The same sequences in the slots, their prompts decoded (each's greedy token
    ``firsts``), every step one row each (``Sequences.step_logits``)."""
    nexts = list(firsts)
    logits: list[list[np.ndarray]] = [[] for _ in prompts]
    for step in range(steps - 1):
        rows = [(seq, nexts[seq], len(p) + step) for seq, p in enumerate(prompts)]
        batch = sequences.step_logits(rows, batch_kv)
        for seq, row in enumerate(batch):
            logits[seq].append(row.copy())
            nexts[seq] = int(np.argmax(row))
    return logits


def measure(llm: LlamaCpp) -> BatchVerdict:
    """Decode the probe's sequences alone and together, and say which rows agree bit for bit."""
    start = time.monotonic()
    prompts = probe_prompts(llm)
    expected = [alone(llm, p, PROBE_STEPS) for p in prompts]
    sequences = Sequences(llm, len(prompts), PROBE_CTX)
    try:
        firsts = [sequences.prompt(seq, p, 0) for seq, p in enumerate(prompts)]
        states = [sequences.save_state(seq) for seq in range(len(prompts))]
        every = _agree(expected, together(sequences, prompts, firsts, PROBE_STEPS, None))
        for seq, state in enumerate(states):
            sequences.load_state(seq, state)
        short = _agree(
            expected, together(sequences, prompts, firsts, PROBE_STEPS, BATCH_INVARIANT_KV)
        )
    finally:
        sequences.close()
    seconds = time.monotonic() - start
    lengths = "/".join(map(str, PROBE_LENGTHS))
    if every == 0.0:
        return BatchVerdict("all", f"every row of {lengths}-token prompts as alone", seconds)
    if short == 0.0:
        return BatchVerdict(
            "short",
            f"rows up to {BATCH_INVARIANT_KV} tokens as alone; longer ones differ by up to "
            f"{every:.3g}",
            seconds,
        )
    return BatchVerdict("none", f"short rows differ by up to {short:.3g}", seconds)


def verdict_path(model: Path, extra_bufts: bool, n_threads: int) -> Path:
    """Where the verdict for this model, build, CPU, thread count and buffers is kept."""
    parts = [probe_key(model), extra_bufts, n_threads, BATCH_INVARIANT_KV, PROBE_LENGTHS]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]
    return cache_dir() / "engine-probe" / f"batch-{key}.json"


def probed(model: Path, extra_bufts: bool, n_threads: int) -> tuple[BatchVerdict, bool]:
    """The verdict for this engine on this machine, and whether it came from the cache."""
    path = verdict_path(model, extra_bufts, n_threads)
    try:
        cached = BatchVerdict.from_json(path.read_text())
    except (OSError, UnicodeDecodeError):
        cached = None
    if cached is not None:
        return cached, True
    with progress.step(
        "probing which batched rows this CPU computes exactly as alone, once per machine and "
        "thread count",
        "usually 1-3 min on two cores",
    ):
        llm = LlamaCpp(model, PROBE_CTX, n_threads, extra_bufts)
        try:
            verdict = measure(llm)
        finally:
            llm.close()
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(asdict(verdict)))
        partial.replace(path)
    except OSError as ex:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        logger.warning(
            "The batch probe's verdict is not cached (%s: %s); the next run probes again.",
            path.parent,
            ex.strerror or ex,
        )
    return verdict, False


def choose_batching(
    option: object, model: Path, extra_bufts: bool, n_threads: int | None
) -> Batching:
    """How the engine for ``model`` batches: forced by ``-M parallel=N``, or probed."""
    chosen = parse_parallel(option)
    if chosen != "auto":
        if chosen == 1:
            return Batching(1, None, True, "-M parallel=1")
        return Batching(chosen, None, False, f"-M parallel={chosen}: every row batched, not probed")
    forced = os.environ.get(VERDICT_ENV, "").strip().lower()
    if forced:
        if forced not in ROWS:
            raise UserError(f"{VERDICT_ENV} must be one of {', '.join(ROWS)}, got {forced!r}.")
        verdict, how = BatchVerdict(cast(Rows, forced), "forced", 0.0), VERDICT_ENV
    else:
        try:
            verdict, cached = probed(model, extra_bufts, n_threads or os.cpu_count() or 1)
        except (RuntimeError, OSError, ValueError) as ex:  # llama.cpp's load or decode failed
            logger.warning("The batch probe failed (%s): this run decodes one at a time.", ex)
            return Batching(1, None, True, f"batch probe failed ({ex}): one slot")
        how = "cached batch probe" if cached else "batch probe"
    if verdict.rows == "none":
        return Batching(1, None, True, f"{how}: one slot ({verdict.reason})")
    limit = BATCH_INVARIANT_KV if verdict.rows == "short" else None
    which = "every row" if limit is None else f"rows up to {limit} tokens"
    return Batching(
        AUTO_PARALLEL,
        limit,
        True,
        f"{how}: {AUTO_PARALLEL} slots, {which} batched ({verdict.reason})",
    )
