"""CMI's learned selector: a logistic regression over label-free candidate features, as data.

A selector file is plain JSON (``SelectorFile``): the features it reads (``features.FEATURES``
by name), their standardisation, the coefficients, the threshold below which CMI keeps no
candidate, and, for one that reads intervention answers, the response model whose answers it
was fitted on. It ranks the candidates by their probability of being useful and keeps the
most probable one when that probability reaches the threshold. Two ship with the package
(``SHIPPED``): ``learned`` (every feature; fitted on the embedded model's answers) and
``learned_non_causal`` (no intervention feature, so any response model can use it).
``cmi-inspect fit-selector`` fits others (``fitting``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from cmi_inspect.errors import UserError
from cmi_inspect.retrieval import EMBEDDERS
from cmi_inspect.strategies.cmi.features import FEATURES

FORMAT: Literal["cmi-inspect-selector/1"] = "cmi-inspect-selector/1"
SHIPPED = {"learned": "learned.json", "learned_non_causal": "learned_non_causal.json"}
"""The fitted selectors the package ships, by name (files in ``selectors/``)."""
RULE = "rule"
"""``-S selector=rule``: no learned selector; CMI's utility and stability rule decides."""


class SelectorFile(BaseModel, frozen=True):
    """A fitted selector: p(useful) = sigmoid(intercept + sum coef * (x - mean) / scale).
    Every number is finite (a NaN or an infinity would make every probability NaN, and CMI
    would still keep a candidate), each feature is listed once, the embedder is one there is."""

    model_config = ConfigDict(allow_inf_nan=False)

    format: Literal["cmi-inspect-selector/1"] = FORMAT
    name: str
    causal: bool
    """Whether it reads intervention answers (then it holds for ``response_model`` only)."""
    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float
    """Keep the most probable candidate only when its probability is at least this."""
    embedder: str = "e5"
    """The embedder its ``cosine`` features were measured with."""
    response_model: str | None = None
    """The model whose answers its causal features were measured on (None: not causal)."""
    fitted_on: dict[str, Any] = {}
    """Where it came from: data, split, samples, conversations, settings, command."""

    @model_validator(mode="after")
    def _consistent(self) -> SelectorFile:
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"unknown features {unknown}; known: {', '.join(FEATURES)}")
        twice = sorted({f for f in self.features if self.features.count(f) > 1})
        if twice:
            raise ValueError(f"features listed more than once: {', '.join(twice)}")
        if self.embedder not in EMBEDDERS:
            raise ValueError(f"unknown embedder {self.embedder!r}; known: {', '.join(EMBEDDERS)}")
        n = len(self.features)
        if not len(self.mean) == len(self.scale) == len(self.coef) == n:
            raise ValueError(f"mean, scale and coef must each have one value per feature ({n})")
        if any(s <= 0 for s in self.scale):
            raise ValueError("every scale must be positive")
        reads_answers = any(FEATURES[f].causal for f in self.features)
        if reads_answers != self.causal:
            raise ValueError(f"causal is {self.causal} but its features say {reads_answers}")
        if self.causal and not self.response_model:
            raise ValueError("a causal selector names the response_model it was fitted on")
        return self

    def probability(self, row: Mapping[str, float]) -> float:
        """Its probability that the candidate with these features is useful."""
        z = self.intercept + sum(
            c * (row[f] - m) / s
            for f, m, s, c in zip(self.features, self.mean, self.scale, self.coef, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def holds_for(self, model: str) -> bool:
        """Whether it may rank candidates whose answers ``model`` gave."""
        return not self.causal or self.response_model == model

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.model_dump(), indent=2) + "\n", encoding="utf-8")


def read_selector(path: str | Path) -> SelectorFile:
    """A selector file; one line naming the file and what is wrong with it otherwise."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as ex:  # missing, a folder, a link loop, unreadable
        raise UserError(f"-S selector={path}: cannot read it ({ex.strerror or ex}).") from None
    except UnicodeDecodeError as ex:
        raise UserError(
            f"-S selector={path}: not UTF-8 text (byte {ex.start}: {ex.reason})."
        ) from None
    except json.JSONDecodeError as ex:
        raise UserError(f"-S selector={path}: not JSON (line {ex.lineno}: {ex.msg}).") from None
    try:
        return SelectorFile.model_validate(data)
    except ValidationError as ex:
        error = ex.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "file"
        raise UserError(f"-S selector={path}: {where}: {error['msg']}.") from None


@cache
def shipped(name: str) -> SelectorFile:
    """One of the selectors the package ships (``SHIPPED``)."""
    text = (
        resources.files("cmi_inspect.strategies.cmi")
        .joinpath("selectors", SHIPPED[name])
        .read_text("utf-8")
    )
    return SelectorFile.model_validate_json(text)


def selector_named(name: str) -> SelectorFile | None:
    """``-S selector=``: None for the rule, a shipped selector by name, else a file's."""
    if name == RULE:
        return None
    if name in SHIPPED:
        return shipped(name)
    path = Path(name).expanduser()
    try:
        version = path.stat().st_mtime_ns
    except OSError:  # read_selector says why, in one line
        version = 0
    return _read_version(os.path.realpath(path), version)


@cache
def _read_version(path: str, mtime_ns: int) -> SelectorFile:
    """A selector file read once per version (its modification time) in a process."""
    return read_selector(path)
