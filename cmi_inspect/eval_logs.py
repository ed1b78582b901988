"""Inspect logs from paths a user gave: the logs of a folder, symbolic links followed, and
one log read, or one line saying why it cannot be.

Inspect's ``list_eval_logs`` passes links over, so a folder of links to runs kept elsewhere
(a selection of runs to table together) would read as empty; and ``read_eval_log`` answers
a folder, a file of another kind or a damaged log with its internal errors (``No recorder
for location``, ``EOCD not found``), so the commands that take a log by name (``compare``,
``fit-selector``) read it here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from inspect_ai.log import EvalLog, read_eval_log

from cmi_inspect.errors import UserError

JSON_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")
"""A log in Inspect's JSON format: named from its timestamp (``logs.json`` is not a log)."""


def is_log_name(name: str) -> bool:
    """Whether a file's name is that of an Inspect log, by Inspect's own rule."""
    return name.endswith(".eval") or JSON_LOG.match(name) is not None


def log_files(log_dir: str) -> list[str]:
    """Every Inspect log under ``log_dir``, symbolic links to files or folders followed
    (Inspect's ``list_eval_logs`` passes them over), each file once however many paths
    lead to it, by the first path found."""
    folders: set[str] = set()
    found: dict[str, str] = {}
    for root, dirs, files in os.walk(log_dir, followlinks=True):
        if os.path.realpath(root) in folders:  # a link back up the tree
            dirs[:] = []
            continue
        folders.add(os.path.realpath(root))
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if is_log_name(name) and os.path.isfile(path):
                found.setdefault(os.path.realpath(path), path)
    return list(found.values())


def read_log(path: str | Path, header_only: bool = False) -> EvalLog:
    """The log at ``path`` (only its header with ``header_only``); a ``UserError`` naming
    the path when it is missing, a folder, not a log's kind of file, or not a readable log."""
    where = Path(path)
    if where.is_dir():
        raise UserError(f"{path} is a folder: name one .eval log.")
    if not where.exists():
        raise UserError(f"No log at {path}.")
    if where.suffix not in (".eval", ".json"):  # what Inspect reads logs from
        raise UserError(f"{path} is not an Inspect log (a .eval or .json file).")
    try:
        return read_eval_log(str(path), header_only=header_only)
    except Exception as ex:  # a damaged file: zip, JSON, schema or I/O errors alike
        detail = str(ex).splitlines()[0] if str(ex) else ""
        raise UserError(
            f"{path} is not a readable Inspect log ({type(ex).__name__}: {detail})."
        ) from None
