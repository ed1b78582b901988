"""The package's imports, read from its source with ``ast``: no cycle between its packages or
between its modules (``TYPE_CHECKING`` imports and imports inside functions count: a cycle
is one whether or not it runs at import time), Inspect's and llama-cpp-python's private
names reached only through their adapters, a root package that loads nothing heavy, and an
eval folder whose strategies only its task imports.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "cmi_inspect"
LIBRARIES = ("inspect_ai", "llama_cpp")
ADAPTERS = {"cmi_inspect.inspect_private": "inspect_ai", "cmi_inspect.local_model.llama_private": "llama_cpp"}
"""The one module that may reach each library's private names."""
SOURCES = ("cmi_inspect", "tasks", "benchmarks", "datasets", "examples")
"""Where no other module may; tests may, where they test Inspect-facing behaviour: the two
adapters' smoke tests, ``tests/causal_locomo/strategies/hostile.py`` (a strategy that reaches for
Inspect's ``sample_state()``, which the sealing must refuse) and
``tests/causal_locomo/test_log_tags.py`` (how Inspect names a log file)."""
PUBLIC_UNDERSCORED = {"os._exit"}
"""Underscored names that are public API."""


def module_name(path: Path) -> str:
    """The dotted name of a module at ``path``, relative to the repository."""
    parts = list(path.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p.relative_to(REPO)): p for p in sorted(PACKAGE.rglob("*.py"))}


def targets(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[str]:
    """The dotted names an import statement names: ``from X import n`` names ``X.n`` (a
    module, or a name in module ``X``); ``package`` anchors a relative import."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
        base = f"{anchor}.{base}" if base else anchor
    yield from (f"{base}.{alias.name}" for alias in node.names)


def imports(path: Path, package: str = "") -> Iterator[tuple[int, str]]:
    """Every import of ``path``, anywhere in the file: its line and the dotted name
    (``package``: the package a relative one is in)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield from ((node.lineno, target) for target in targets(node, package))


def own_module(name: str) -> str | None:
    """The module of ours that an imported name is, or is in (None: not ours)."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


@cache
def module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in modules().items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = {own_module(target) for _, target in imports(path, package)}
        graph[name] = {t for t in found if t is not None and t != name}
    return graph


def unit(module: str) -> str:
    """A module's package for the package graph: ``cmi_inspect.X`` (a subpackage, or a module
    of the root), or the root package ``cmi_inspect`` itself."""
    return ".".join(module.split(".")[:2])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one node (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                found.append(sorted([v, *component]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source, targets in module_graph().items():
        for target in targets:
            if unit(source) != unit(target):
                graph.setdefault(unit(source), set()).add(unit(target))
    return graph


def test_no_two_modules_import_each_other_even_through_others():
    assert cycles(module_graph()) == []


def test_no_two_packages_import_each_other():
    assert cycles(package_graph()) == []


EVAL = "cmi_inspect.causal_locomo"
TASK = f"{EVAL}.causal_locomo"


def test_in_the_eval_folder_only_the_task_imports_a_strategy():
    # the folder's data and scoring modules and XL's builder sit below its strategies, the
    # task above them (its __init__ serves the task on first use)
    strategies = f"{EVAL}.strategies"
    below = [m for m in modules() if m.startswith(f"{EVAL}.") and not m.startswith(strategies) and m != TASK]
    reaching = {m: sorted(t for t in module_graph()[m] if t.startswith(strategies)) for m in below}
    assert {m: t for m, t in reaching.items() if t} == {}
    assert not any(TASK in module_graph()[m] for m in modules() if m.startswith(EVAL) and m != EVAL)


def test_the_cycle_test_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_root_package_imports_ours_for_type_checkers_alone():
    tree = ast.parse(modules()["cmi_inspect"].read_text(encoding="utf-8"))
    run_time = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]  # not under an if
    assert run_time and not [t for n in run_time for t in targets(n, "cmi_inspect") if own_module(t)]


def private_uses(path: Path, adapter_of: str | None = None) -> Iterator[str]:
    """In ``path``: imports of Inspect's or llama-cpp-python's modules or names that start
    with ``_`` (but ``adapter_of``'s, in its adapter), and attributes that start with ``_``
    reached on anything but ``self`` or ``cls`` (in an adapter, its job)."""
    for line, target in imports(path):
        parts = target.split(".")
        private = any(p.startswith("_") and not p.startswith("__") for p in parts[1:])
        if parts[0] in LIBRARIES and parts[0] != adapter_of and private:
            yield f"{line}: imports {target}"
    if adapter_of is not None:
        return
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner, text = node.value, ast.unparse(node)
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")) and text not in PUBLIC_UNDERSCORED:
                yield f"{node.lineno}: reaches {text}"


def test_only_the_adapters_reach_inspects_and_llama_cpps_private_names():
    found = [
        f"{path.relative_to(REPO)}:{use}"
        for root in SOURCES
        for path in sorted((REPO / root).rglob("*.py"))
        for use in private_uses(path, ADAPTERS.get(module_name(path.relative_to(REPO))))
    ]
    assert found == [], "\n".join(found)


def test_the_scan_sees_private_imports_and_reached_attributes(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from inspect_ai.util._store import init_subtask_store\nimport llama_cpp._internals\n"
        "from inspect_ai.util import Store\nimport os\n"
        "def f(llm, store):\n    os._exit(0)\n    return self._a, llm._ctx, store._data\n",
        encoding="utf-8",
    )
    assert list(private_uses(probe)) == [
        "1: imports inspect_ai.util._store.init_subtask_store",
        "2: imports llama_cpp._internals",
        "7: reaches llm._ctx",
        "7: reaches store._data",
    ]
    assert list(private_uses(probe, "llama_cpp")) == ["1: imports inspect_ai.util._store.init_subtask_store"]


def test_importing_the_error_type_loads_no_strategy_scikit_learn_or_llama_cpp():
    code = (
        "import sys, cmi_inspect.errors\n"
        "heavy = ('sklearn', 'llama_cpp', 'matplotlib', 'cmi_inspect.causal_locomo')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(heavy)))\n"
        "print(sorted(m for m in sys.modules if m.startswith('cmi_inspect')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded, ours = done.stdout.splitlines()
    assert loaded == "[]"
    assert ours == "['cmi_inspect', 'cmi_inspect.errors', 'cmi_inspect.inspect_private']"


def test_the_public_names_load_on_first_use_and_unknown_ones_say_so():
    import cmi_inspect

    assert cmi_inspect.MemoryGuard.__module__ == "cmi_inspect.causal_locomo.strategies.guard"
    assert cmi_inspect.MemoryStrategy.__name__ == "MemoryStrategy"
    assert sorted(cmi_inspect.__all__) == sorted(cmi_inspect._MODULES)
    assert all(getattr(cmi_inspect, name) is not None for name in cmi_inspect.__all__)
    try:
        cmi_inspect.NoSuchName  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as ex:
        assert str(ex) == "module 'cmi_inspect' has no attribute 'NoSuchName'"
    else:
        raise AssertionError("an unknown name was found")
