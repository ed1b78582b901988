"""The documentation's command blocks run as written, so that the docs cannot drift.

A fenced block's info string marks it: ``sh doctest`` runs as it stands; ``sh doctest
fake-model`` runs with every ``inspect eval`` and ``cmi-inspect run`` on the scripted model
(``--model fixed_latency/0``, ``--limit 2``) instead of the embedded one; ``python doctest``
blocks of a page run together as one script, its ``test_*`` functions called; ``sh ci`` is
a command CI runs (``.ci/run``), checked to be there as written. A page's blocks run in
order in one fresh folder, with the checkout's ``tasks``, ``examples`` and ``.env`` and
this environment's ``.venv``, so one block can use what an earlier one wrote.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

from conftest import REPO, require_data

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "cmi_inspect/causal_locomo/README.md"]
MARKS = {"doctest", "fake-model", "ci"}
FENCE = re.compile(r"^```(\S*)[ \t]*(.*)$")
RUN = re.compile(r"^(\S*/)?(inspect eval|cmi-inspect run)\s")
INSTALL = re.compile(r"^(python3 -m venv |\S*pip install )")
"""A step that sets the environment up: CI does it (``.ci/run``), so a block's test only checks it is there."""
FAKE_MODEL = " --model fixed_latency/0 --limit 2"
CI = REPO / ".ci" / "run"
CALL_TESTS = """
for _name, _test in list(globals().items()):
    if _name.startswith("test_") and callable(_test):
        _test()
"""
"""What a page's python blocks end with: a ``test_*`` function a block defines is called."""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    marks: frozenset[str]
    text: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, with their info strings' marks."""
    found, lines = [], page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        marks = frozenset(opening[2].split())
        found.append(Block(page, i + 1, opening[1], marks, "\n".join(lines[i + 1 : end])))
        i = end + 1
    return found


def marked(mark: str) -> list[Block]:
    return [b for page in PAGES for b in blocks(page) if mark in b.marks]


def ci_lines() -> set[str]:
    """What CI runs, a command a line, with pip's ``--quiet`` left out."""
    return {" ".join(line.replace(" --quiet", "").split()) for line in CI.read_text().splitlines()}


def runnable(block: Block) -> str:
    """A shell block as the test runs it: install steps left out (CI has done them), and on
    the scripted model when the block says ``fake-model``."""
    lines = []
    for line in block.text.splitlines():
        steps = []
        for step in line.split(" && "):
            if INSTALL.match(step.strip()):
                continue
            if "fake-model" in block.marks and RUN.match(step.strip()):
                step = re.sub(r"\s--(model|limit)\s+\S+", "", step) + FAKE_MODEL
            steps.append(step)
        lines.append(" && ".join(steps))
    return "\n".join(lines)


def test_every_mark_is_one_the_test_knows_and_runs_a_language_it_can():
    found = [b for page in PAGES for b in blocks(page) if b.marks]
    assert found, "no marked block"
    for b in found:
        assert b.marks <= MARKS, f"{b}: unknown mark {sorted(b.marks - MARKS)}"
        assert (b.language, "doctest" in b.marks) in {("sh", True), ("python", True), ("sh", False)}, str(b)


def test_the_readmes_two_commands_are_the_ones_ci_and_this_test_run():
    readme = blocks(REPO / "README.md")
    [install_and_run] = [b for b in readme if "doctest" in b.marks][:1]
    [tests] = [b for b in readme if "ci" in b.marks]
    assert tests.text in ci_lines()
    steps = [s.strip() for s in install_and_run.text.split(" && ")]
    install = '.venv/bin/pip install -e ".[all,dev]"'
    assert [s for s in steps if INSTALL.match(s)] == ["python3 -m venv .venv", install]
    assert all(s in ci_lines() for s in steps if INSTALL.match(s))
    assert any("cmi-inspect run" in s for s in steps) and any("cmi-inspect report" in s for s in steps)


def test_fake_model_sets_the_model_and_limit_of_each_run_and_nothing_else():
    block = Block(
        REPO,
        1,
        "sh",
        frozenset({"doctest", "fake-model"}),
        "python3 -m venv .venv && .venv/bin/cmi-inspect run logs/a --limit 5 && cmi-inspect report logs/a\n"
        "inspect eval tasks/causal_locomo.py --solver cmi --model gguf/smollm2 -T protocol=blind",
    )
    assert runnable(block).splitlines() == [
        f".venv/bin/cmi-inspect run logs/a{FAKE_MODEL} && cmi-inspect report logs/a",
        f"inspect eval tasks/causal_locomo.py --solver cmi -T protocol=blind{FAKE_MODEL}",
    ]


HEAVY_PAGES = ("docs/options.md", "docs/xl.md")
"""Pages whose blocks take most of a minute on two busy cores: run with ``-m heavy``."""


def pages_with_runnable_blocks() -> list[Any]:
    """Each page with a runnable block, as a test parameter (the heavy ones marked)."""
    return [
        pytest.param(page, id=str(page.relative_to(REPO)), marks=[pytest.mark.heavy] * (name in HEAVY_PAGES))
        for page in PAGES
        if any("doctest" in b.marks for b in blocks(page))
        for name in [page.relative_to(REPO).as_posix()]
    ]


@pytest.mark.slow  # every runnable block of a page, in subprocesses (up to a few minutes a page)
@pytest.mark.parametrize("page", pages_with_runnable_blocks())
def test_a_pages_runnable_blocks_run_as_written(page, tmp_path):
    runs = [b for b in blocks(page) if "doctest" in b.marks]
    words = " ".join(b.text for b in runs)
    require_data(words.replace("build-xl", "dataset=xl"))
    for name in ("tasks", "examples", ".env"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in ("INSPECT_EVAL_MODEL", "INSPECT_LOG_DIR")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    script = [b.text for b in runs if b.language == "python"]
    for b in runs:
        if b.language != "sh":
            continue
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", runnable(b)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"{b} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    if script:
        (tmp_path / "page.py").write_text("\n\n".join(script) + "\n" + CALL_TESTS, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "page.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"{page}'s python blocks failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    for log in tmp_path.rglob("*.eval"):  # inspect eval exits 0 even when every sample failed
        if not log.is_symlink():
            assert read_eval_log(str(log), header_only=True).status == "success", str(log)


ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"
ROW = re.compile(r"^\| `([^`|]+)` \|", re.M)
"""A table row of ARCHITECTURE.md whose first cell is one path."""


def architecture_rows(text: str) -> set[str]:
    """The paths ARCHITECTURE.md gives a row of their own: from ``cmi_inspect/``, or from the
    repository's root for ``benchmarks/`` and what lies outside the package."""
    return set(ROW.findall(text))


def test_every_module_and_benchmark_has_its_row_in_the_architecture_page():
    rows = architecture_rows(ARCHITECTURE.read_text(encoding="utf-8"))
    package = REPO / "cmi_inspect"
    modules = {str(p.relative_to(package)) for p in package.rglob("*.py")}
    modules |= {str(p.relative_to(REPO)) for p in (REPO / "benchmarks").glob("*.py") if p.name != "__init__.py"}
    assert sorted(modules - rows) == []  # add a row for each
    gone = [r for r in rows if r.endswith(".py") and not ((package / r).exists() or (REPO / r).exists())]
    assert gone == []  # a row for a module that is no more


def test_the_row_check_reads_a_row_and_nothing_else():
    page = "| module | what it is |\n| --- | --- |\n| `a/b.py` | one |\n| `c.py`, `d.py` | two |\nsee `e.py` |\n"
    assert architecture_rows(page) == {"a/b.py"}
