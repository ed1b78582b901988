"""Can llama.cpp's extra weight buffers (AMX, repacking) run on this machine? Ask a child.

Some CPUs advertise AMX that the OS or hypervisor has not enabled: a llama.cpp build that
puts weights in AMX buffers then dies with ``Illegal instruction`` inside ``llama_decode``
(ggml-org/llama.cpp #28328, #28756), taking the whole process down. No Python code can
catch that, so before the first model load the provider runs one decode of a long prompt
with the extra buffers in a child process. Its verdict is cached per machine, llama.cpp
build and model file; a crash in the child turns the extra buffers off, and the eval goes
on. ``-M extra_bufts=on|off`` skips the probe.
"""

from __future__ import annotations

import hashlib
import json
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
from cmi_inspect.paths import cache_dir

EXTRA_BUFTS = ("auto", "on", "off")
"""``-M extra_bufts=``: ``auto`` probes once per machine; ``on`` and ``off`` force it."""
PROBE_TOKENS = 640
"""Prompt tokens the probe decodes: a full 512-token batch and a 128-token one, where the
crash shows (on prompts of a few hundred tokens); then a few one-token decodes."""
PROBE_TIMEOUT_S = 300
VERDICT_ENV = "CMI_PROBE_VERDICT"
"""Set to ``usable`` or ``unusable`` to take that verdict instead of probing (``auto`` only):
for tests, which must hold whichever way the probe decides on the machine they run on."""


@dataclass(frozen=True)
class ProbeResult:
    """What the child reported: whether the extra buffers ran, and why not."""

    usable: bool
    reason: str
    seconds: float
    cacheable: bool
    """Only a clean exit or a death by signal says something about the machine; a
    timeout or a Python error in the child is not kept for later runs."""


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
        lines = Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
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
        return ProbeResult(False, f"the child died of {name}", seconds, cacheable=True)
    last = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
    return ProbeResult(False, f"the child exited {code}: {last[0]}", seconds, cacheable=False)


def probed(model: Path, command: Sequence[str] | None = None) -> tuple[ProbeResult, bool]:
    """The verdict for ``model`` on this machine, and whether it came from the cache."""
    path = verdict_path(probe_key(model))
    try:
        return ProbeResult(**json.loads(path.read_text())), True
    except (OSError, ValueError, TypeError):
        pass
    result = run_probe(command or child_command(model))
    if result.cacheable:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(asdict(result)))
        partial.replace(path)
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
