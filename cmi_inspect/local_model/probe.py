"""Can llama.cpp's extra weight buffers (AMX, repacking) run on this machine? Ask a child.

Some CPUs advertise AMX that the OS or hypervisor has not enabled: a llama.cpp build that
puts weights in AMX buffers then dies with ``Illegal instruction`` inside ``llama_decode``
(ggml-org/llama.cpp #28328, #28756), taking the whole process down. No Python code can
catch that, so before the first model load the provider runs one decode of a long prompt
with the extra buffers in a child process. Its verdict is cached per machine, llama.cpp
build and model file; a crash in the child turns the extra buffers off, and the eval goes
on. ``-M extra_bufts=on|off`` skips the probe.

Only a verdict the machine gave is kept: a clean exit, or a crash the CPU causes (SIGILL,
SIGSEGV, SIGBUS, SIGFPE); a child killed (SIGKILL, as the out-of-memory killer does, or
SIGTERM), timed out or failed in Python is probed again by the next run. A cached file that
is not exactly a verdict (a field missing or of another type) counts as none, and a cache
folder that cannot be written leaves the verdict uncached with a one-line warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from cmi_inspect.errors import UserError
from cmi_inspect.local_model.progress import step
from cmi_inspect.paths import cache_dir

EXTRA_BUFTS = ("auto", "on", "off")
"""``-M extra_bufts=``: ``auto`` probes once per machine; ``on`` and ``off`` force it."""
PROBE_TOKENS = 640
"""Prompt tokens the probe decodes: a full 512-token batch and a 128-token one, where the
crash shows (on prompts of a few hundred tokens); then a few one-token decodes."""
PROBE_TIMEOUT_S = 300
CPU_SIGNALS = frozenset({signal.SIGILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE})
"""The deaths that say the CPU cannot run the extra buffers (an instruction it lacks, an
access its buffers' layout breaks): the only ones kept as the machine's verdict."""
VERDICT_ENV = "CMI_PROBE_VERDICT"
"""Set to ``usable`` or ``unusable`` to take that verdict instead of probing (``auto`` only):
for tests, which must hold whichever way the probe decides on the machine they run on."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProbeResult:
    """What the child reported: whether the extra buffers ran, and why not."""

    usable: bool
    reason: str
    seconds: float
    cacheable: bool
    """Only a clean exit or a crash the CPU causes (``CPU_SIGNALS``) says something about the
    machine; a timeout, a Python error or a kill (the out-of-memory killer's SIGKILL, a
    SIGTERM) in the child is not kept for later runs."""

    @classmethod
    def from_json(cls, text: str) -> ProbeResult | None:
        """A verdict as ``probed`` wrote it, or None for anything else: a field missing,
        extra or of another type (``"usable": "false"`` is not a verdict)."""
        try:
            data = json.loads(text)
        except ValueError:
            return None
        fields = ("usable", "reason", "seconds", "cacheable")
        if not isinstance(data, dict) or data.keys() != set(fields):
            return None
        usable, reason, seconds, cacheable = (data[name] for name in fields)
        if not (
            isinstance(usable, bool)
            and isinstance(reason, str)
            and type(seconds) in (int, float)
            and math.isfinite(seconds)
            and seconds >= 0
            and cacheable is True  # only cacheable verdicts are written
        ):
            return None
        return cls(usable, reason, float(seconds), cacheable)


@dataclass(frozen=True)
class EngineChoice:
    """Which engine configuration runs, and what chose it (recorded in every output)."""

    extra_bufts: bool
    chosen_by: str


def parse_option(value: object) -> str:
    """``-M extra_bufts=`` as ``auto``, ``on`` or ``off`` (Inspect reads on/off as booleans)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    text = str(value).strip().lower()
    text = {"true": "on", "false": "off", "1": "on", "0": "off"}.get(text, text)
    if text not in EXTRA_BUFTS:
        raise UserError(f"extra_bufts must be one of {', '.join(EXTRA_BUFTS)}, got {value!r}.")
    return text


def _cpu() -> str:
    """The CPU's model name and feature flags, as the kernel reports them."""
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    wanted = ("model name", "flags", "Features", "CPU implementer", "CPU part")
    seen: dict[str, str] = {}
    for line in lines:
        key, _, value = line.partition(":")
        key = key.strip()
        if key in wanted and key not in seen:
            seen[key] = value.strip()
    return json.dumps(seen, sort_keys=True)


def probe_key(model: Path) -> str:
    """The cache key of a verdict: this CPU, this llama.cpp build, this model file."""
    from cmi_inspect.local_model.files import gguf_identity
    from cmi_inspect.local_model.llamacpp import build_identity

    parts = {"cpu": _cpu(), "build": build_identity(), "model": gguf_identity(model)}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]


def verdict_path(key: str) -> Path:
    return cache_dir() / "engine-probe" / f"extra-bufts-{key}.json"


def child_command(model: Path) -> list[str]:
    return [sys.executable, "-m", "cmi_inspect.local_model.probe_child", str(model)]


def run_probe(command: Sequence[str], timeout: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """Run the probe's child; it must exit 0 for the extra buffers to count as usable."""
    start = time.monotonic()
    try:
        done = subprocess.run(
            list(command), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(False, f"timed out after {timeout:.0f} s", timeout, cacheable=False)
    seconds = time.monotonic() - start
    code = done.returncode
    if code == 0:
        return ProbeResult(True, "decoded a long prompt", seconds, cacheable=True)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        cpu = -code in CPU_SIGNALS
        return ProbeResult(False, f"the child died of {name}", seconds, cacheable=cpu)
    last = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
    return ProbeResult(False, f"the child exited {code}: {last[0]}", seconds, cacheable=False)


def probed(model: Path, command: Sequence[str] | None = None) -> tuple[ProbeResult, bool]:
    """The verdict for ``model`` on this machine, and whether it came from the cache."""
    path = verdict_path(probe_key(model))
    try:
        cached = ProbeResult.from_json(path.read_text())
    except (OSError, UnicodeDecodeError):
        cached = None
    if cached is not None:
        return cached, True
    with step(
        "probing whether llama.cpp's extra weight buffers (AMX) run on this CPU, once per machine",
        "usually 10-60 s",
    ):
        result = run_probe(command or child_command(model))
    if result.cacheable:
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(asdict(result)))
            partial.replace(path)
        except OSError as ex:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            logger.warning(
                "The extra-buffers probe's verdict is not cached (%s: %s); the next run "
                "probes again.",
                path.parent,
                ex.strerror or ex,
            )
    return result, False


def choose_extra_bufts(
    option: object, model: Path, command: Sequence[str] | None = None
) -> EngineChoice:
    """The engine configuration for ``model``: forced by ``-M extra_bufts``, or probed."""
    chosen = parse_option(option)
    if chosen != "auto":
        return EngineChoice(chosen == "on", f"-M extra_bufts={chosen}")
    forced = os.environ.get(VERDICT_ENV, "").strip().lower()
    if forced:
        if forced not in ("usable", "unusable"):
            raise UserError(f"{VERDICT_ENV} must be usable or unusable, got {forced!r}.")
        result, how = ProbeResult(forced == "usable", "forced", 0.0, False), f"{VERDICT_ENV}"
    else:
        result, cached = probed(model, command)
        how = "cached probe" if cached else "probe"
    verdict = "usable" if result.usable else f"turned off ({result.reason})"
    return EngineChoice(result.usable, f"{how}: extra buffers {verdict}")
