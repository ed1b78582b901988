"""The one list of strategies and ablations, and their strategy solvers: made from what each
strategy declares, documented as it documents them, and found by the names users type."""

from __future__ import annotations

import inspect

import pytest
import tasks.causal_locomo  # noqa: F401  the checkout's task file: registers the bare names
from cmi_inspect.causal_locomo.strategies import STRATEGIES
from cmi_inspect.causal_locomo.strategies.arguments import strategy_arguments
from cmi_inspect.causal_locomo.strategies.cmi import ABLATIONS
from cmi_inspect.causal_locomo.strategies.solvers import STRATEGY_SOLVERS, memory_strategy, strategy_solver_named
from cmi_inspect.errors import UserError
from inspect_ai.util import registry_create, registry_info


def test_every_strategy_has_a_strategy_solver_of_its_name():
    assert list(STRATEGIES) == [
        "cmi",
        "reflection_memory",
        "vector_memory",
        "graph_memory",
        "summary_memory",
        "full_history",
        "no_memory",
    ]
    assert list(STRATEGY_SOLVERS) == list(STRATEGIES)
    for name, strategy in STRATEGIES.items():
        assert strategy.name == name and STRATEGY_SOLVERS[name].__name__ == name


def test_the_checkouts_task_file_registers_each_under_its_bare_name():
    # the package's own names (cmi_inspect/NAME) are tested as users type them, in
    # subprocesses: tests/causal_locomo/test_causal_locomo.py and tests/test_plugin.py
    for name in [*STRATEGIES, "memory_strategy"]:
        args = {"strategy": "no_memory"} if name == "memory_strategy" else {}
        assert registry_info(registry_create("solver", name, **args)).name == name


def test_a_strategy_solver_takes_its_strategys_arguments_the_guard_and_isolation_and_documents_each():
    for name, factory in STRATEGY_SOLVERS.items():
        arguments = strategy_arguments(STRATEGIES[name])
        signature = inspect.signature(factory, eval_str=True)
        # and any other name, which the strategy's check refuses in one line (not a TypeError)
        assert list(signature.parameters) == [*arguments.names, "guard", "isolate", "unknown"]
        assert [signature.parameters[n] for n in arguments.names] == list(arguments.signature.parameters.values())
        assert signature.parameters["guard"].default == "none"
        assert signature.parameters["isolate"].default is False
        doc = inspect.getdoc(factory) or ""
        assert doc.splitlines()[0], name
        for argument in [*arguments.names, "guard", "isolate", "**unknown"]:
            assert f"\n    {argument}: " in doc, (name, argument)


BAD_ARGUMENTS = {
    "an unknown name": (
        lambda: STRATEGY_SOLVERS["vector_memory"](topk=3),
        "^Strategy 'vector_memory' takes no -S topk; it takes top_k: int = 3, embedder: str = 'e5'.$",
    ),
    "a value of the wrong type": (
        lambda: registry_create("solver", "graph_memory", top_k="three"),
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
        lambda: strategy_solver_named("mem0", {"top_k": "two"}),
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
