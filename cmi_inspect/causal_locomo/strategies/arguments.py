"""A strategy's ``-S`` arguments, declared once: names, types and defaults, and their check.

A strategy declares them either as one typed record, ``MemoryStrategy.Args`` (a dataclass
or a pydantic model, built into the strategy by ``from_args``), or, by default, as its
constructor's keyword parameters (``__init__(self, top_k: int = 3)``), so that a memory
system of someone else's needs nothing more than a typed constructor. From that one
declaration come the check of what ``-S`` hands over (an unknown name or a value of the
wrong type is one line naming the strategy and every argument it takes, before the run
starts), the values the strategy is built with, and the signature and docstring of a
built-in strategy's strategy solver (``strategies.solvers``). Each argument's
documentation is where it is declared: a field's docstring in a pydantic ``Args``, else the
``Args:`` section of the record's or the strategy's docstring.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from cmi_inspect.causal_locomo.strategies.base import MemoryStrategy
from cmi_inspect.errors import UserError

Parameter = inspect.Parameter


@dataclass(frozen=True)
class StrategyArguments:
    """What one strategy takes with ``-S``."""

    strategy: str
    parameters: tuple[Parameter, ...]
    """Keyword parameters, each with its type (``Parameter.empty``: any) and default."""
    open: bool
    """It also takes any other name (its constructor has ``**kwargs``): those go unchecked."""
    docs: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Each documented argument's text, on one line."""
    model: type[BaseModel] = field(init=False, repr=False, compare=False)
    """Parses the declared arguments, in pydantic's lax mode: ``-S k=4`` and ``-S
    tau_u=1e-3`` arrive as numbers or as text, as Inspect's YAML reads them."""

    def __post_init__(self) -> None:
        # each field under a name of its own and the argument's as its alias, so that no
        # argument's name (``json``, ``_private``) can clash with pydantic's
        fields: dict[str, Any] = {
            f"arg{i}": (
                Any if p.annotation is Parameter.empty else p.annotation,
                Field(... if p.default is Parameter.empty else p.default, alias=p.name),
            )
            for i, p in enumerate(self.parameters)
        }
        config = ConfigDict(extra="allow" if self.open else "forbid", arbitrary_types_allowed=True)
        model = create_model(f"{self.strategy}_arguments", __config__=config, **fields)
        object.__setattr__(self, "model", model)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def signature(self) -> inspect.Signature:
        """Its arguments as its strategy solver takes them: keyword arguments only."""
        extra = [Parameter("kwargs", Parameter.VAR_KEYWORD)] if self.open else []
        return inspect.Signature([*self.parameters, *extra])

    def describe(self) -> str:
        """Every argument with its type and default, as one line says it."""
        described = [str(p) for p in self.parameters] + (["**kwargs"] if self.open else [])
        return ", ".join(described) or "no arguments"

    def check(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` with each declared argument parsed to its type; one line naming the
        strategy and every argument it takes for a name it does not take, or the one argument
        at fault for a value of the wrong type or a missing argument it needs."""
        unknown = [name for name in given if name not in self.names]
        if unknown and not self.open:
            raise UserError(
                f"Strategy {self.strategy!r} takes no -S {', '.join(unknown)}; "
                f"it takes {self.describe()}."
            )
        try:
            parsed = self.model.model_validate(dict(given))
        except ValidationError as ex:
            error = ex.errors()[0]
            name = str(error["loc"][0]) if error["loc"] else ""
            declared = next(p for p in self.parameters if p.name == name)
            if error["type"] == "missing":
                why = f"needs -S {name}=VALUE"
            else:
                kind = inspect.formatannotation(declared.annotation)
                why = f"-S {name}={given[name]!r} is not {kind}"
            # the one argument at fault, as the strategy declares it
            raise UserError(f"Strategy {self.strategy!r}: {why}; it takes {declared}.") from None
        values = {name: getattr(parsed, f"arg{i}") for i, name in enumerate(self.names)}
        return {name: values[name] if name in values else v for name, v in given.items()}


def _hints(of: Any) -> dict[str, Any]:
    """The resolved annotations of a class or function (none where they cannot be resolved:
    those arguments are then of any type)."""
    try:
        return typing.get_type_hints(of)
    except Exception:  # an annotation naming what its module cannot import
        return {}


@cache
def strategy_arguments(cls: type[MemoryStrategy]) -> StrategyArguments:
    """The arguments ``cls`` declares: its ``Args`` record's fields (a pydantic model's or a
    dataclass's), else its constructor's keyword parameters."""
    if cls.Args is not None and issubclass(cls.Args, BaseModel):
        hints = _hints(cls.Args)
        fields = cls.Args.model_fields.items()
        named = [(name, _model_default(f)) for name, f in fields]
        docs = {name: " ".join(f.description.split()) for name, f in fields if f.description}
        opened = False
    elif cls.Args is not None:
        hints = _hints(cls.Args)
        declared_fields = [f for f in dataclasses.fields(cls.Args) if f.init]
        named = [(f.name, _default(f)) for f in declared_fields]
        docs = documented(cls.Args.__doc__)
        opened = False
    else:
        docs = documented(cls.__doc__)
        hints = _hints(cls.__init__)
        declared = inspect.signature(cls).parameters.values()
        keywords = (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY)
        named = [(p.name, p.default) for p in declared if p.kind in keywords]
        opened = any(p.kind is Parameter.VAR_KEYWORD for p in declared)
    parameters = tuple(
        Parameter(
            name,
            Parameter.KEYWORD_ONLY,
            default=default,
            annotation=hints.get(name, Parameter.empty),
        )
        for name, default in named
    )
    return StrategyArguments(cls.name, parameters, open=opened, docs=docs)


def documented(docstring: str | None) -> dict[str, str]:
    """The ``Args:`` section of a Google-style docstring: each name's text, on one line."""
    docs: dict[str, str] = {}
    lines = inspect.cleandoc(docstring or "").splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.strip() == "Args:"), len(lines))
    name = ""
    for line in lines[start:]:
        if line.strip() and not line.startswith(" "):
            break  # the section's end: a line back at the docstring's margin
        entry = re.fullmatch(r" {4}(\*{0,2}\w+): (.*)", line)
        if entry:
            name, docs[entry[1]] = entry[1], entry[2]
        elif line.strip() and name:
            docs[name] += " " + line.strip()
    return docs


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return Parameter.empty


def _model_default(f: FieldInfo) -> Any:
    return Parameter.empty if f.is_required() else f.get_default(call_default_factory=True)


def build_strategy(cls: type[MemoryStrategy], given: Mapping[str, Any]) -> MemoryStrategy:
    """``cls`` built with the ``-S`` arguments ``given``, once they are checked."""
    values = strategy_arguments(cls).check(given)
    if cls.Args is not None:
        return cls.from_args(cls.Args(**values))
    return cls(**values)
