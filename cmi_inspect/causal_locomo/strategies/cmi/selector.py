"""CMI's learned selector: a logistic regression over label-free candidate features, as data.

A selector file is plain JSON (``SelectorFile``): the features it reads (``features.FEATURES``
by name), their standardisation, the coefficients, the threshold below which CMI keeps no
candidate, how many it keeps (``keeps``), and, for one that reads intervention answers, the
response model whose answers it was fitted on. It ranks the candidates by their probability
of being useful and keeps every one whose probability reaches the threshold (``every_above``,
what fits write now) or only the most probable (``top``, the files fitted before). Two ship
with the package (``SHIPPED``): ``learned`` (every feature; fitted on the embedded model's
answers) and ``learned_non_causal`` (no intervention feature, so any response model can use
it), both ``top``. ``cmi-inspect fit-selector`` fits others (``fitting``).

A cross-fit file (``CrossFitFile``) holds one selector per fold: each fitted on some
conversations, its threshold chosen on another, and applied only to the one it never read
(``crossfit``); CMI ranks each sample with the fold that holds out its conversation.
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

from cmi_inspect.causal_locomo.strategies.cmi.features import FEATURES
from cmi_inspect.errors import UserError
from cmi_inspect.retrieval import EMBEDDERS

FORMAT: Literal["cmi-inspect-selector/1"] = "cmi-inspect-selector/1"
CROSSFIT_FORMAT: Literal["cmi-inspect-crossfit/1"] = "cmi-inspect-crossfit/1"
SHIPPED = {"learned": "learned.json", "learned_non_causal": "learned_non_causal.json"}
"""The fitted selectors the package ships, by name (files in ``selectors/``)."""
CROSSFIT_SHIPPED = {
    "crossfit": "crossfit.json",
    "crossfit_non_causal": "crossfit_non_causal.json",
}
"""The cross-fit files the package may ship, by name (in ``selectors/`` once fitted)."""
Keeps = Literal["top", "every_above"]
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
    """A candidate is kept only when its probability is at least this."""
    keeps: Keeps = "top"
    """``every_above``: every candidate whose probability reaches the threshold (up to the
    budget, k by default); ``top``: the most probable one, when it does (a file without
    this field: those fitted on XL v2 keep their recorded behaviour)."""
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


class Fold(BaseModel, frozen=True):
    """One fold of a cross-fit: the selector fitted on ``training``, its threshold chosen on
    ``choice``, for the samples of ``held_out`` alone, which it never read."""

    held_out: str
    choice: str
    training: list[str]
    read: list[str]
    """The conversations whose samples the fold read (its training ones and its choice one)."""
    selector: SelectorFile

    @model_validator(mode="after")
    def _apart(self) -> Fold:
        if not self.training:
            raise ValueError("a fold is trained on one conversation or more")
        if self.choice in self.training or self.held_out in (self.choice, *self.training):
            raise ValueError("held_out, choice and training must be different conversations")
        if self.read != sorted({*self.training, self.choice}):
            raise ValueError("read must be the training conversations and the choice one, sorted")
        return self


class CrossFitFile(BaseModel, frozen=True):
    """Cross-fitted selectors: one fold per held-out conversation, all of one kind (the same
    features, embedder, response model and way of keeping), so that a run's settings do not
    depend on which fold ranks a sample."""

    model_config = ConfigDict(allow_inf_nan=False)

    format: Literal["cmi-inspect-crossfit/1"] = CROSSFIT_FORMAT
    name: str
    folds: list[Fold]
    fitted_on: dict[str, Any] = {}
    """What the folds came from: data, samples, settings, command."""

    @model_validator(mode="after")
    def _one_kind(self) -> CrossFitFile:
        if not self.folds:
            raise ValueError("a cross-fit file holds one fold or more")
        held_out = [f.held_out for f in self.folds]
        twice = sorted({c for c in held_out if held_out.count(c) > 1})
        if twice:
            raise ValueError(f"conversations held out by more than one fold: {', '.join(twice)}")
        kind = {"causal", "features", "embedder", "response_model", "keeps"}
        first = self.folds[0].selector.model_dump(include=kind)
        for fold in self.folds[1:]:
            differs = sorted(
                k for k, v in fold.selector.model_dump(include=kind).items() if v != first[k]
            )
            if differs:
                which = ", ".join(differs)
                raise ValueError(f"the fold holding out {fold.held_out} differs in {which}")
        return self

    @property
    def _first(self) -> SelectorFile:
        return self.folds[0].selector

    @property
    def causal(self) -> bool:
        return self._first.causal

    @property
    def features(self) -> list[str]:
        return self._first.features

    @property
    def keeps(self) -> Keeps:
        return self._first.keeps

    def check_model(self, model: str) -> None:
        """One line unless its folds may rank candidates whose answers ``model`` gave: no
        selector stands in for a cross-fitted one, as the non_causal one does for a single
        file, since that one may have read the sample's conversation."""
        fitted = self._first
        if not fitted.holds_for(model):
            raise UserError(
                f"cross-fitted selector {self.name} was fitted on {fitted.response_model}'s "
                f"answers, not {model}'s: cross-fit on {model}'s runs, or rank without "
                "answers (-S ablation=learned_non_causal with a file of "
                "`cmi-inspect fit-selector --cross-fit --non-causal`)."
            )

    def fold_for(self, conversation: str | None) -> Fold:
        """The fold that never read ``conversation``; one line otherwise (the sample fails,
        naming its conversation and the file's folds)."""
        for fold in self.folds:
            if fold.held_out == conversation:
                return fold
        held = ", ".join(f.held_out for f in self.folds)
        raise UserError(
            f"cross-fitted selector {self.name}: no fold holds out conversation {conversation} "
            f"(its folds hold out {held}); a sample is ranked only by the fold that never "
            "read its conversation."
        )

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.model_dump(), indent=2) + "\n", encoding="utf-8")


LearnedSelector = SelectorFile | CrossFitFile
"""What ``-S selector=`` names, short of the rule: one selector, or cross-fitted ones."""


def read_selector(path: str | Path) -> LearnedSelector:
    """A selector file, or a cross-fit file (by its ``format``); one line naming the file
    and what is wrong with it otherwise."""
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
    crossfit = isinstance(data, dict) and data.get("format") == CROSSFIT_FORMAT
    try:
        return (CrossFitFile if crossfit else SelectorFile).model_validate(data)
    except ValidationError as ex:
        error = ex.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "file"
        raise UserError(f"-S selector={path}: {where}: {error['msg']}.") from None


def _package_file(name: str) -> Any:
    return resources.files("cmi_inspect.causal_locomo.strategies.cmi").joinpath("selectors", name)


@cache
def shipped(name: str) -> SelectorFile:
    """One of the selectors the package ships (``SHIPPED``)."""
    return SelectorFile.model_validate_json(_package_file(SHIPPED[name]).read_text("utf-8"))


@cache
def shipped_crossfit(name: str) -> CrossFitFile:
    """A cross-fit file the package ships (``CROSSFIT_SHIPPED``); one line while none does."""
    found = _package_file(CROSSFIT_SHIPPED[name])
    if not found.is_file():
        raise UserError(
            f"-S selector={name}: no cross-fitted selector ships yet; fit one with "
            "`cmi-inspect fit-selector LOGS --cross-fit --out FILE` (--non-causal for one "
            "any model can use) and pass -S selector=FILE."
        )
    return CrossFitFile.model_validate_json(found.read_text("utf-8"))


def selector_named(name: str) -> LearnedSelector | None:
    """``-S selector=``: None for the rule, a shipped selector or cross-fit by name, else a
    file's."""
    if name == RULE:
        return None
    if name in SHIPPED:
        return shipped(name)
    if name in CROSSFIT_SHIPPED:
        return shipped_crossfit(name)
    path = Path(name).expanduser()
    try:
        version = path.stat().st_mtime_ns
    except OSError:  # read_selector says why, in one line
        version = 0
    return _read_version(os.path.realpath(path), version)


@cache
def _read_version(path: str, mtime_ns: int) -> LearnedSelector:
    """A selector file read once per version (its modification time) in a process."""
    return read_selector(path)
