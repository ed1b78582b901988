"""Where the project keeps what it computes once per machine: downloads, builds, probe verdicts."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from platformdirs import user_cache_dir

CACHE_DIR_ENV = "CMI_CACHE_DIR"


def cache_dir() -> Path:
    """``CMI_CACHE_DIR`` when set, else the user's cache folder for cmi-inspect."""
    return Path(os.environ.get(CACHE_DIR_ENV) or user_cache_dir("cmi-inspect"))


def writable_dir(path: str | Path, what: str) -> Path:
    """``path`` as a folder this process can write to (created if missing), checked before
    any work is done; else a one-line ``UserError`` naming it and why."""
    from cmi_inspect.errors import UserError

    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{path} is a file, not a folder: name a folder for the {what}.")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as ex:
        raise UserError(f"Cannot write the {what} to {path}: {ex.strerror or ex}.") from None
    return folder
