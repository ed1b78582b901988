"""Causal-LoCoMo-XL: deterministic builders of the memory-selection benchmark from LoCoMo.

No model and no network are used: two builds from the same source give the same bytes.
``-T dataset=xl`` serves v4 (``xl/v4/``, builder ``xl-4``): each conversation's whole memory
store is the bank, and every claim about an answer says in its own words whether it is true,
with who says it and when drawn alike for true and false claims (docs/xl.md). v3 (``xl/v3/``,
builder ``xl-3``) and v2 (builder ``xl-2``, this folder's own modules) stay selectable
(``-T xl_version=3|2``) so that earlier figures reproduce.

v2's parts, in the order a build uses them: ``params`` (fixed choices), ``locomo`` (the
source, v3's too), ``answers``, ``phrasing``, ``memories`` and ``attacks`` (drafts),
``records`` (typed records), ``build`` (splits, order, files, manifest).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cmi_inspect.xl.attacks import ATTACK_KINDS
from cmi_inspect.xl.build import build_xl, xl2_path
from cmi_inspect.xl.locomo import LOCOMO_PATH, LOCOMO_SHA256, locomo_path
from cmi_inspect.xl.params import BUILDER_VERSION, MANIFEST_FILE, XL_FILE
from cmi_inspect.xl.v3.build import build_xl3, xl3_path
from cmi_inspect.xl.v4.build import build_xl4, xl4_path

BUILDERS: dict[int, Callable[..., dict[str, Any]]] = {4: build_xl4, 3: build_xl3, 2: build_xl}
"""XL version -> its builder ``(source, out_dir[, inline]) -> manifest``."""
PATHS: dict[int, Callable[[], Path]] = {4: xl4_path, 3: xl3_path, 2: xl2_path}
"""XL version -> its data file, built into the cache on first use."""


def xl_path(version: int = 4) -> Path:
    """The data file of XL ``version`` (4, 3 or 2), built into the cache on first use."""
    return PATHS[version]()


__all__ = [
    "ATTACK_KINDS",
    "BUILDERS",
    "BUILDER_VERSION",
    "LOCOMO_PATH",
    "LOCOMO_SHA256",
    "MANIFEST_FILE",
    "XL_FILE",
    "build_xl",
    "build_xl3",
    "build_xl4",
    "locomo_path",
    "xl_path",
]
