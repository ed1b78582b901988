"""Selector files: their probability, the model they hold for, and one line for a bad file."""

from __future__ import annotations

import json
import math
import re
from importlib import resources

import pytest
from cmi_inspect.causal_locomo.strategies.cmi.features import CAUSAL, NON_CAUSAL
from cmi_inspect.causal_locomo.strategies.cmi.selector import (
    RULE,
    SHIPPED,
    CrossFitFile,
    Fold,
    SelectorFile,
    read_selector,
    selector_named,
    shipped,
)
from cmi_inspect.errors import UserError


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
    from cmi_inspect.causal_locomo.strategies.cmi.rules import CMIConfig

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
    from cmi_inspect.causal_locomo.strategies.cmi.rules import CMIConfig

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


def test_the_shipped_selectors_keep_their_top_candidate_as_when_they_were_fitted():
    """Fitted on XL v2 before a selector said how it keeps: no field, so ``top``, and the
    figures made with them reproduce."""
    for name in SHIPPED:
        text = (
            resources.files("cmi_inspect.causal_locomo.strategies.cmi")
            .joinpath("selectors", SHIPPED[name])
            .read_text("utf-8")
        )
        assert "keeps" not in json.loads(text) and shipped(name).keeps == "top"
    assert SelectorFile.model_validate(selector().model_dump() | {"keeps": "every_above"}).keeps == "every_above"


def test_a_selector_keeps_top_or_every_above_and_nothing_else(tmp_path):
    with pytest.raises(UserError, match="^-S selector=.*: keeps: Input should be 'top' or 'every_above'.$"):
        read_selector(written(tmp_path, json.dumps(selector().model_dump() | {"keeps": "all"})))


def fold(held_out: str, choice: str, training: list[str], **kw) -> Fold:
    return Fold(held_out=held_out, choice=choice, training=training, read=sorted([*training, choice]),
                selector=selector(keeps="every_above", **kw))  # fmt: skip


def crossfit(**kw) -> CrossFitFile:
    folds = [fold("c1", "c2", ["c3"]), fold("c2", "c3", ["c1"]), fold("c3", "c1", ["c2"])]
    return CrossFitFile(**{"name": "cf", "folds": folds, **kw})


def test_a_cross_fit_file_reads_back_as_one_by_its_format(tmp_path):
    cf = crossfit(fitted_on={"samples": 9})
    cf.save(tmp_path / "cf.json")
    assert json.loads((tmp_path / "cf.json").read_text())["format"] == "cmi-inspect-crossfit/1"
    assert read_selector(tmp_path / "cf.json") == cf
    assert selector_named(str(tmp_path / "cf.json")) == cf
    assert cf.fold_for("c2").selector == cf.folds[1].selector and cf.keeps == "every_above"


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda d: d["folds"][0].update(training=["c1", "c3"]), "held_out, choice and training must be different"),
        (lambda d: d["folds"][0].update(choice="c1"), "held_out, choice and training must be different"),
        (lambda d: d["folds"][0].update(read=["c1", "c2", "c3"]), "read must be the training conversations"),
        (lambda d: d["folds"][1].update(held_out="c1", choice="c3", training=["c2"], read=["c2", "c3"]),
         "conversations held out by more than one fold: c1"),
        (lambda d: d["folds"][2]["selector"].update(keeps="top"), "the fold holding out c3 differs in keeps"),
        (lambda d: d["folds"][1]["selector"].update(embedder="e5"), "the fold holding out c2 differs in embedder"),
        (lambda d: d.update(folds=[]), "a cross-fit file holds one fold or more"),
        (lambda d: d["folds"][1]["selector"].update(threshold="@"),
         "folds.1.selector.threshold: Input should be a finite number"),
    ],
)  # fmt: skip
def test_a_bad_cross_fit_file_is_one_line_naming_it(tmp_path, change, says):
    data = json.loads(crossfit().model_dump_json())
    data["folds"][1]["selector"]["embedder"] = "hashing"
    for f in data["folds"]:
        f["selector"]["embedder"] = "hashing"
    change(data)
    path = written(tmp_path, json.dumps(data).replace('"@"', "NaN"))
    with pytest.raises(UserError) as raised:
        read_selector(path)
    message = str(raised.value)
    assert message.startswith(f"-S selector={path}: ") and says in message and "\n" not in message
