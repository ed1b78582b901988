"""The one list of strategies and ablations, and the solvers Inspect builds from it by name."""

from __future__ import annotations

import inspect

import pytest
import tasks.causal_locomo  # noqa: F401  the checkout's task file: registers the bare names
from cmi_inspect.solvers import SOLVERS
from cmi_inspect.strategies import STRATEGIES
from cmi_inspect.strategies.cmi import ABLATIONS
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
    assert sorted(SOLVERS) == sorted(STRATEGIES)
    for name, strategy in STRATEGIES.items():
        assert strategy.name == name
        assert registry_info(registry_create("solver", name)).name == name  # the task file's bare name


def test_a_bare_name_is_the_same_factory_with_the_same_arguments():
    bare = vars(tasks.causal_locomo)["cmi"]
    assert inspect.signature(bare) == inspect.signature(SOLVERS["cmi"])
    assert bare.__doc__ == SOLVERS["cmi"].__doc__
    solver = registry_create("solver", "cmi", k=4)
    assert registry_info(solver).name == "cmi"


def test_ablations_describe_their_rule():
    assert list(ABLATIONS) == ["full", "no_perturb", "utility_only", "stability_only", "non_causal", "oracle"]
    assert not any((ABLATIONS["non_causal"].asks_no_memory, ABLATIONS["non_causal"].asks_with))
    assert ABLATIONS["full"].tests_utility and ABLATIONS["full"].tests_stability
    assert not ABLATIONS["utility_only"].tests_stability and not ABLATIONS["stability_only"].tests_utility
    assert ABLATIONS["no_perturb"].no_memory_as_perturbed and not ABLATIONS["no_perturb"].asks_perturbed
    assert ABLATIONS["oracle"].by_label and not ABLATIONS["oracle"].asks_with


def test_unknown_ablation():
    with pytest.raises(ValueError, match="Unknown ablation 'random'; choose from full, no_perturb"):
        registry_create("solver", "cmi", ablation="random")
