"""Selector files: their probability, the model they hold for, and one line for a bad file."""

from __future__ import annotations

import json
import math
import re

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.strategies.cmi.features import CAUSAL, NON_CAUSAL
from cmi_inspect.strategies.cmi.selector import (
    RULE,
    SHIPPED,
    SelectorFile,
    read_selector,
    selector_named,
    shipped,
)


def selector(causal: bool = False, **kw) -> SelectorFile:
    names = list(CAUSAL if causal else NON_CAUSAL)
    fields = dict(
        name="test",
        causal=causal,
        features=names,
        mean=[0.0] * len(names),
        scale=[1.0] * len(names),
        coef=[0.0] * len(names),
        intercept=0.0,
        threshold=0.5,
        response_model="mockllm/model" if causal else None,
    )
    return SelectorFile(**{**fields, **kw})


def test_probability_is_the_logistic_of_the_standardised_features():
    s = selector(features=["memory_support"], mean=[0.5], scale=[0.25], coef=[2.0], intercept=-1.0)
    assert s.probability({"memory_support": 0.5}) == pytest.approx(1 / (1 + math.e))
    assert s.probability({"memory_support": 1.0}) == pytest.approx(1 / (1 + math.exp(-3.0)))
    assert s.probability({"memory_support": -1e6}) == pytest.approx(0.0)  # no overflow


def test_a_causal_selector_holds_for_its_response_model_only():
    assert selector(causal=True).holds_for("mockllm/model")
    assert not selector(causal=True).holds_for("gguf/smollm2")
    assert selector().holds_for("anything/at-all")


@pytest.mark.parametrize(
    "change, says",
    [
        ({"features": ["memory_support", "no_such_feature"]}, "no_such_feature"),
        ({"coef": [1.0]}, "one value per feature"),
        ({"scale": [0.0] * len(NON_CAUSAL)}, "scale must be positive"),
        ({"causal": True, "response_model": "m"}, "causal is True but its features say False"),
    ],
)
def test_an_inconsistent_file_is_one_line_naming_it(tmp_path, change, says):
    good = selector().model_dump()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**good, **change}))
    with pytest.raises(UserError, match=says) as raised:
        read_selector(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_a_causal_file_must_name_its_response_model(tmp_path):
    path = tmp_path / "causal.json"
    path.write_text(json.dumps(selector(causal=True).model_dump() | {"response_model": None}))
    with pytest.raises(UserError, match="response_model"):
        read_selector(path)


def test_a_file_that_is_no_selector_is_one_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(UserError, match="not JSON"):
        read_selector(path)
    with pytest.raises(UserError, match="cannot read it"):
        read_selector(tmp_path / "missing.json")
    path.write_text(json.dumps({"name": "x"}))
    with pytest.raises(UserError, match="causal"):
        read_selector(path)


def test_a_saved_selector_reads_back_the_same(tmp_path):
    s = selector(causal=True, fitted_on={"samples": 3})
    s.save(tmp_path / "s.json")
    assert read_selector(tmp_path / "s.json") == s


def test_names_rule_shipped_and_files(tmp_path):
    assert selector_named(RULE) is None
    s = selector()
    s.save(tmp_path / "s.json")
    assert selector_named(str(tmp_path / "s.json")) == s
    for name in SHIPPED:
        assert selector_named(name) == shipped(name)


def test_the_shipped_selectors_are_the_causal_one_and_the_one_any_model_can_use():
    causal, non_causal = shipped("learned"), shipped("learned_non_causal")
    assert causal.causal and causal.response_model == "gguf/smollm2"
    assert not non_causal.causal and non_causal.response_model is None
    assert set(non_causal.features) <= set(NON_CAUSAL)
    for s in (causal, non_causal):  # fitted on XL's training split, chosen on dev
        assert s.fitted_on["splits"] == ["train"]
        assert s.fitted_on["development_splits"] == ["dev"]


def test_the_shipped_selectors_hold_no_example_text():
    """Names, numbers and identifiers only: no memory, request or answer was written in."""

    def strings(value) -> list[str]:
        if isinstance(value, dict):
            return [*value, *(s for v in value.values() for s in strings(v))]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    for name in SHIPPED:
        found = strings(json.loads(shipped(name).model_dump_json()))
        assert found and all(re.fullmatch(r"[\w./:\- ]{1,64}", s) and len(s.split()) <= 5 for s in found), name


def written(tmp_path, text: str) -> str:
    path = tmp_path / "selector.json"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("field", ["coef", "mean", "scale", "intercept", "threshold"])
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_number_is_refused_at_s_parsing_in_one_line(tmp_path, field, number):
    from cmi_inspect.strategies.cmi.rules import CMIConfig

    good = selector().model_dump_json()
    data = json.loads(good)
    if isinstance(data[field], list):
        data[field][0] = "@"
    else:
        data[field] = "@"
    path = written(tmp_path, json.dumps(data).replace('"@"', number))  # JSON as Python writes it
    with pytest.raises(UserError) as raised:
        CMIConfig(selector=path)  # -S selector=PATH, checked when the solver is built
    message = str(raised.value)
    assert message.startswith(f"-S selector={path}: {field}") and "finite number" in message
    assert "\n" not in message


def test_a_feature_listed_twice_is_refused_in_one_line(tmp_path):
    names = ["memory_support", "memory_support"]
    data = selector().model_dump() | {"features": names, "mean": [0.0] * 2, "scale": [1.0] * 2, "coef": [1.0] * 2}
    with pytest.raises(UserError, match="features listed more than once: memory_support.$"):
        read_selector(written(tmp_path, json.dumps(data)))


def test_an_unknown_embedder_is_refused_in_one_line(tmp_path):
    data = selector().model_dump() | {"embedder": "word2vec"}
    with pytest.raises(UserError, match="unknown embedder 'word2vec'; known: hashing, openai, e5.$"):
        read_selector(written(tmp_path, json.dumps(data)))


def test_every_file_reading_path_is_one_line(tmp_path):
    from cmi_inspect.strategies.cmi.rules import CMIConfig

    loop = tmp_path / "loop.json"
    loop.symlink_to(tmp_path / "other.json")
    (tmp_path / "other.json").symlink_to(loop)
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"name": "café"}'.encode("latin-1"))
    (tmp_path / "folder.json").mkdir()
    cases = {
        loop: "cannot read it (Too many levels of symbolic links).",
        latin: "not UTF-8 text (byte 13: invalid continuation byte).",
        tmp_path / "folder.json": "cannot read it (Is a directory).",
        tmp_path / "missing.json": "cannot read it (No such file or directory).",
    }
    for path, says in cases.items():
        with pytest.raises(UserError) as raised:
            CMIConfig(selector=str(path))
        assert str(raised.value) == f"-S selector={path}: {says}"
