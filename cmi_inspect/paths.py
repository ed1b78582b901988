"""Where the project keeps what it computes once per machine: downloads, builds, probe verdicts."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir

CACHE_DIR_ENV = "CMI_CACHE_DIR"


def cache_dir() -> Path:
    """``CMI_CACHE_DIR`` when set, else the user's cache folder for cmi-inspect."""
    return Path(os.environ.get(CACHE_DIR_ENV) or user_cache_dir("cmi-inspect"))
