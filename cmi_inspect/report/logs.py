"""The Inspect logs of a folder, symbolic links to logs and to folders of logs followed.

Inspect's ``list_eval_logs`` passes links over, so a folder of links to runs kept elsewhere
(a selection of runs to table together) would read as empty.
"""

from __future__ import annotations

import os
import re

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
