"""The one list of strategies and ablations, and the solvers Inspect builds from it by name."""

from __future__ import annotations

import inspect

import pytest
import tasks.causal_locomo  # noqa: F401  the checkout's task file: registers the bare names
from cmi_inspect.errors import UserError
from cmi_inspect.strategies import STRATEGIES
from cmi_inspect.strategies.arguments import strategy_arguments
from cmi_inspect.strategies.cmi import ABLATIONS
from cmi_inspect.strategies.solvers import SOLVERS, memory_strategy, solver_named
from inspect_ai.util import registry_create, registry_info


def test_every_strategy_has_a_bare_named_solver():
    assert list(STRATEGIES) == [
        "cmi",
        "reflection_memory",
        "vector_memory",
        "graph_memory",
        "summary_memory",
        "full_history",
        "no_memory",
    ]
    assert list(SOLVERS) == list(STRATEGIES)
    for name, strategy in STRATEGIES.items():
        assert strategy.name == name
        assert registry_info(registry_create("solver", name)).name == name  # the task file's bare name
        packaged = registry_info(SOLVERS[name]).name  # cmi_inspect/NAME, or bare where the
        # checkout's own egg-info shadows the install (tests/test_plugin.py runs elsewhere)
        assert packaged in (name, f"cmi_inspect/{name}")
        assert registry_info(registry_create("solver", packaged)).name == packaged
    assert registry_info(registry_create("solver", "memory_strategy", strategy="no_memory")).name == "memory_strategy"
    name = registry_info(memory_strategy).name
    assert name in ("memory_strategy", "cmi_inspect/memory_strategy")
    assert registry_info(registry_create("solver", name, strategy="no_memory")).name == name


def test_a_solver_takes_its_strategys_arguments_the_guard_and_isolation_and_documents_each_of_them():
    for name, factory in SOLVERS.items():
        arguments = strategy_arguments(STRATEGIES[name])
        signature = inspect.signature(factory)
        assert list(signature.parameters) == [*arguments.names, "guard", "isolate"]
        assert [signature.parameters[n] for n in arguments.names] == list(arguments.signature.parameters.values())
        assert signature.parameters["guard"].default == "none"
        assert signature.parameters["isolate"].default is False
        doc = inspect.getdoc(factory) or ""
        assert doc.splitlines()[0], name
        for argument in arguments.names:
            assert f"\n    {argument}: " in doc, (name, argument)


def test_a_bare_name_is_the_same_factory_with_the_same_arguments():
    bare = vars(tasks.causal_locomo)["cmi"]
    assert inspect.signature(bare) == inspect.signature(SOLVERS["cmi"])
    assert bare.__doc__ == SOLVERS["cmi"].__doc__
    solver = registry_create("solver", "cmi", k=4)
    assert registry_info(solver).name == "cmi"


BAD_ARGUMENTS = {
    "an unknown name": (
        lambda: SOLVERS["vector_memory"](topk=3),
        "^Strategy 'vector_memory' takes no -S topk; it takes top_k: int = 3, embedder: str = 'e5'.$",
    ),
    "a value of the wrong type": (
        lambda: registry_create("solver", registry_info(SOLVERS["graph_memory"]).name, top_k="three"),
        "^Strategy 'graph_memory': -S top_k='three' is not int",
    ),
    "a built-in by name": (
        lambda: memory_strategy(strategy="cmi", tau=0.1),
        "^Strategy 'cmi' takes no -S tau; it takes k: int = 3, ",
    ),
    # an installed strategy (its entry point is in pyproject.toml), checked before it is imported
    "an installed strategy's unknown name": (
        lambda: memory_strategy(strategy="mem0", topk=2),
        "^Strategy 'mem0' takes no -S topk; it takes infer: bool | str = False, top_k: int = 3",
    ),
    "an installed strategy's value, as cmi-inspect run builds it": (
        lambda: solver_named("mem0", {"top_k": "two"}),
        "^Strategy 'mem0': -S top_k='two' is not int",
    ),
}


@pytest.mark.parametrize("case", BAD_ARGUMENTS)
def test_a_bad_argument_is_one_line_before_any_run(case):
    build, message = BAD_ARGUMENTS[case]
    with pytest.raises(UserError, match=message.replace("|", r"\|")):
        build()


def test_ablations_describe_their_rule():
    assert list(ABLATIONS) == [
        "full", "no_perturb", "utility_only", "stability_only", "non_causal", "learned_non_causal", "oracle"
    ]  # fmt: skip
    assert not any((ABLATIONS["non_causal"].asks_no_memory, ABLATIONS["non_causal"].asks_with))
    assert ABLATIONS["full"].tests_utility and ABLATIONS["full"].tests_stability
    assert not ABLATIONS["utility_only"].tests_stability and not ABLATIONS["stability_only"].tests_utility
    assert ABLATIONS["no_perturb"].no_memory_as_perturbed and not ABLATIONS["no_perturb"].asks_perturbed
    assert ABLATIONS["oracle"].by_label and not ABLATIONS["oracle"].asks_with


def test_unknown_ablation():
    with pytest.raises(ValueError, match="Unknown ablation 'random'; choose from full, no_perturb"):
        registry_create("solver", "cmi", ablation="random")
