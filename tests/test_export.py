"""The compact export: written from a log folder, it gives the report the folder gives, with
no log; bad files are one line."""

from __future__ import annotations

import gzip
import json

import pytest
from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
from cmi_inspect.causal_locomo.strategies.solvers import cmi, no_memory, vector_memory
from cmi_inspect.cli import main
from cmi_inspect.errors import UserError
from cmi_inspect.report import build_report
from cmi_inspect.report.export import make_export, read_export, write_export
from inspect_ai import eval as inspect_eval

from conftest import SYNTHETIC, mock_model


def answer_3_march(prompt: str) -> str:
    return "3 March 2022" if "Comet on 3 March 2022" in prompt else "I do not know."


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    """Three runs, each in its own row folder, as ``cmi-inspect run --plan`` writes them."""
    path = tmp_path_factory.mktemp("plan-logs")
    for row, solver in (("none", no_memory()), ("vector", vector_memory(embedder="hashing")), ("cmi", cmi(k=4))):
        [log] = inspect_eval(
            causal_locomo(data_file=str(SYNTHETIC)),
            solver=solver,
            model=mock_model(answer_3_march),
            display="none",
            log_dir=str(path / row),
        )
        assert log.status == "success"
    return path


def test_the_report_of_an_export_is_the_report_of_its_logs(log_dir, tmp_path, capsys):
    out = tmp_path / "runs.json.gz"
    assert main(["report", str(log_dir), "--export", str(out)]) == 0
    from_logs = capsys.readouterr().out
    assert f"wrote {out} ({out.stat().st_size:,} bytes)" in from_logs
    assert main(["report", str(out)]) == 0
    from_export = capsys.readouterr().out
    body = lambda text: text.split("# Causal-LoCoMo report: ", 1)[1].split("\n", 1)[1]  # noqa: E731
    assert body(from_logs) == body(from_export)
    assert "| cmi[k=4] |" in from_export and "0.333" in from_export


def test_an_export_keeps_what_each_sample_showed_and_cost_and_no_path_of_this_machine(log_dir, tmp_path):
    export = make_export(str(log_dir))
    assert {r.location.split("/")[0] for r in export.runs} == {"none", "vector", "cmi"}
    cmi_run = next(r for r in export.runs if r.strategy.startswith("cmi"))
    assert cmi_run.verified and cmi_run.candidates
    rows = {row.sample: row for row in cmi_run.rows}
    assert all(row.calls >= 1 and row.input_tokens > 0 for row in rows.values())
    assert any(row.selected for row in rows.values())
    path = tmp_path / "a.json.gz"
    size = write_export(export, path)
    text = gzip.decompress(path.read_bytes()).decode()
    assert str(log_dir.parent) not in text.replace(f'"source":"{log_dir}"', "")
    again = read_export(path)
    assert [r.rows for r in again.runs] == [r.rows for r in export.runs] and size == path.stat().st_size
    write_export(again, tmp_path / "b.json.gz")  # NaN included: what was read writes the same bytes
    assert (tmp_path / "b.json.gz").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not gzip", "not a cmi-inspect export"),
        ({"format": "other/1"}, "format 'other/1', expected 'cmi-inspect-runs/1'"),
        ({"format": "cmi-inspect-runs/1", "source": "x", "runs": [{}]}, "field runs.0."),
    ],
    ids=["not-gzip", "other-format", "missing-field"],
)
def test_a_file_that_is_no_export_is_one_line_naming_it(tmp_path, content, message):
    path = tmp_path / "bad.json.gz"
    path.write_bytes(content if isinstance(content, bytes) else gzip.compress(json.dumps(content).encode()))
    with pytest.raises(UserError, match=message) as raised:
        build_report(str(path))
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_an_export_is_named_as_one_and_made_from_a_folder(log_dir, tmp_path):
    with pytest.raises(UserError, match=r"ends in \.json\.gz"):
        write_export(make_export(str(log_dir)), tmp_path / "runs.json")
    out = tmp_path / "runs.json.gz"
    assert main(["report", str(log_dir), "--export", str(out)]) == 0
    assert main(["report", str(out), "--export", str(tmp_path / "again.json.gz")]) == 2
