"""A strategy's -S arguments from its one declaration, and the one-line check before a run."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from cmi_inspect import MemoryStrategy, MemoryTask, Selection, memory_prompt
from cmi_inspect.causal_locomo.strategies.arguments import build_strategy, strategy_arguments
from cmi_inspect.causal_locomo.strategies.cmi import CMI
from cmi_inspect.causal_locomo.strategies.no_memory import NoMemory
from cmi_inspect.causal_locomo.strategies.vector import VectorMemory
from cmi_inspect.errors import UserError


class MyMemory(MemoryStrategy):
    """The README's third-party pattern: a plain typed constructor, nothing else declared."""

    name = "my_memory"

    def __init__(self, top_k: int = 3):
        self.top_k = int(top_k)

    async def select(self, task: MemoryTask) -> Selection:
        return Selection(picks=[], prompt=memory_prompt(task.request, []))


class Untyped(MemoryStrategy):
    name = "untyped"

    def __init__(self, depth, *extra, **options):  # noqa: ANN001
        self.depth, self.options = depth, options

    async def select(self, task: MemoryTask) -> Selection:
        raise NotImplementedError


@dataclass(frozen=True)
class WindowArgs:
    """A record of arguments, documented Google-style.

    Args:
        window: Turns on each side
            of the match.
        label: Shown in the log.
    """

    window: int = 2
    label: str | None = None


class Windowed(MemoryStrategy):
    name = "windowed"
    Args = WindowArgs

    def __init__(self, args: WindowArgs) -> None:
        self.args = args

    @classmethod
    def from_args(cls, args: WindowArgs) -> Windowed:
        return cls(args)

    async def select(self, task: MemoryTask) -> Selection:
        raise NotImplementedError


def test_a_plain_constructor_is_its_strategys_declaration():
    args = strategy_arguments(MyMemory)
    assert str(args.signature) == "(*, top_k: int = 3)"
    assert args.describe() == "top_k: int = 3"
    assert build_strategy(MyMemory, {"top_k": "5"}).top_k == 5  # type: ignore[attr-defined]


def test_an_args_record_is_one_too():
    assert str(strategy_arguments(Windowed).signature) == "(*, window: int = 2, label: str | None = None)"
    built = build_strategy(Windowed, {"window": "4"})
    assert built.args == WindowArgs(window=4)  # type: ignore[attr-defined]


def test_each_argument_is_documented_where_it_is_declared():
    assert strategy_arguments(Windowed).docs == {
        "window": "Turns on each side of the match.",
        "label": "Shown in the log.",
    }
    assert strategy_arguments(MyMemory).docs == {}  # no Args: section
    assert strategy_arguments(VectorMemory).docs["top_k"] == "Memories to select."
    # a pydantic record: its fields' docstrings, the parent's too, on one line
    cmi_docs = strategy_arguments(CMI).docs
    assert cmi_docs["k"] == "Candidates proposed by the hybrid retriever."
    assert cmi_docs["embedder"].startswith("Embedder for the proposal score") and "\n" not in cmi_docs["tau_u"]


def test_a_built_in_declares_what_its_solver_takes():
    assert str(strategy_arguments(VectorMemory).signature) == "(*, top_k: int = 3, embedder: str = 'e5')"
    assert strategy_arguments(NoMemory).describe() == "no arguments"
    names = strategy_arguments(CMI).names
    assert names[:2] == ("k", "tau_u") and names[-1] == "embedder"


@pytest.mark.parametrize(
    ("cls", "given", "message"),
    [
        (MyMemory, {"topk": 5}, "^Strategy 'my_memory' takes no -S topk; it takes top_k: int = 3.$"),
        (MyMemory, {"top_k": "many"}, "^Strategy 'my_memory': -S top_k='many' is not int; it takes top_k: int = 3.$"),
        (NoMemory, {"top_k": 5}, "^Strategy 'no_memory' takes no -S top_k; it takes no arguments.$"),
        (Windowed, {"window": [1]}, r"^Strategy 'windowed': -S window=\[1\] is not int; it takes window: int = 2.$"),
        (CMI, {"k": "abc"}, "^Strategy 'cmi': -S k='abc' is not int; it takes k: int = 3.$"),
        (Untyped, {}, "^Strategy 'untyped': needs -S depth=VALUE; it takes depth.$"),
    ],
)
def test_a_bad_argument_is_one_line_naming_the_strategy_and_the_argument(cls, given, message):
    with pytest.raises(UserError, match=message):
        build_strategy(cls, given)


def test_a_constructor_with_kwargs_takes_other_names_unchecked():
    built = build_strategy(Untyped, {"depth": "2", "colour": "red"})
    assert (built.depth, built.options) == ("2", {"colour": "red"})  # type: ignore[attr-defined]
    assert str(strategy_arguments(Untyped).signature) == "(*, depth, **kwargs)"


def test_values_keep_their_meaning_once_parsed():
    cmi = build_strategy(CMI, {"tau_u": "1e-3", "budget": "2", "lazy_perturb": "true", "embedder": "hashing"})
    assert isinstance(cmi, CMI)
    assert (cmi.config.tau_u, cmi.config.budget, cmi.config.lazy_perturb) == (0.001, 2, True)
    assert cmi.embedder("blind").name == "hashing"
    with pytest.raises(UserError, match="Unknown ablation 'random'; choose from full"):
        build_strategy(CMI, {"ablation": "random"})  # the strategy's own check, after the types


class Clashing(MemoryStrategy):
    name = "clashing"

    def __init__(self, json: int = 1, _private: str = "x", model_dump: bool = False) -> None:
        self.values = (json, _private, model_dump)

    async def select(self, task: MemoryTask) -> Selection:
        raise NotImplementedError


def test_an_argument_may_have_any_name_pydantic_uses():
    built = build_strategy(Clashing, {"json": "2", "_private": "y", "model_dump": "true"})
    assert built.values == (2, "y", True)  # type: ignore[attr-defined]
    with pytest.raises(UserError, match="^Strategy 'clashing': -S json='two' is not int"):
        build_strategy(Clashing, {"json": "two"})
