"""A compact export of a log folder's runs: what the report's tables are made from, without
the logs (their transcripts and memory banks are most of their size).

``cmi-inspect report LOG_DIR --export FILE`` writes it (gzipped JSON: each run's summary,
its re-scoring in a clean process, and one record per sample with what the model saw and
what it cost; for XL runs, what the data says of each example, ``report.xl_tables``);
``cmi-inspect report FILE`` makes every table from it again with no model and no log. Runs
are verified once, when the export is made; reading the export trusts that verification.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from cmi_inspect.errors import UserError
from cmi_inspect.report.runs import Run, read_runs

FORMAT = "cmi-inspect-runs/1"
SUFFIX = ".json.gz"


@dataclass
class Export:
    """A log folder's runs, as the report reads them."""

    format: str
    source: str
    """The log folder it was made from, as it was named."""
    runs: list[Run]
    notes: list[str] = field(default_factory=list)
    """The logs the folder held that were skipped, and why."""
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    """For XL runs: what the data says of each example run (``xl_tables.example_facts``)."""


ADAPTER = TypeAdapter(Export)


def is_export(path: str | Path) -> bool:
    return str(path).endswith(SUFFIX) and Path(path).is_file()


def relative(location: str, log_dir: str) -> str:
    """A log's path below the folder (the plan's row folder first), never this machine's."""
    try:
        return Path(location).resolve().relative_to(Path(log_dir).resolve()).as_posix()
    except ValueError:
        return Path(location).name


def make_export(log_dir: str) -> Export:
    """The runs of ``log_dir`` (each re-scored in a clean process, as the report does), and
    the XL facts of the examples they ran on."""
    runs, notes, facts = load_runs(log_dir)
    return Export(FORMAT, log_dir, runs, notes, facts)


def load_runs(source: str) -> tuple[list[Run], list[str], dict[str, dict[str, Any]]]:
    """The runs of a log folder or an export (each run's ``location`` below the folder), the
    notes on what was skipped, and the XL facts of their examples."""
    if is_export(source):
        export = read_export(source)
        return export.runs, export.notes, export.examples
    from cmi_inspect.report.xl_tables import example_facts

    runs, notes = read_runs(source)
    for r in runs:
        if r.check is not None:
            r.check = replace(r.check, log=relative(r.check.log, source))
    runs = [replace(r, location=relative(r.location, source)) for r in runs]
    facts, more = example_facts(runs)
    return runs, notes + more, facts


def write_export(export: Export, path: Path) -> int:
    """Write ``export`` to ``path`` (``SUFFIX``); its size in bytes."""
    if not str(path).endswith(SUFFIX):
        raise UserError(f"--export {path}: an export's name ends in {SUFFIX}.")
    data = json.dumps(ADAPTER.dump_python(export), separators=(",", ":")).encode()  # NaN kept
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, mtime=0))  # no name, no time: the same bytes again
    return path.stat().st_size


def read_export(path: str | Path) -> Export:
    """An export written by ``write_export``; one line naming the file when it is not one."""
    try:
        with gzip.open(path, "rb") as f:
            raw = json.loads(f.read())
    except (OSError, EOFError, ValueError) as ex:
        raise UserError(f"{path}: not a cmi-inspect export ({ex}).") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise UserError(f"{path}: format {found!r}, expected {FORMAT!r}.")
    try:
        return ADAPTER.validate_python(raw)
    except ValidationError as ex:
        first = ex.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: field {where}: {first['msg']}.") from None
