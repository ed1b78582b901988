"""Causal-LoCoMo-XL: deterministic builders of the memory-selection benchmark from LoCoMo.

No model and no network are used: two builds from the same source give the same bytes.
``-T dataset=xl`` serves v3 (``xl/v3/``, builder ``xl-3``): each conversation's whole memory
store is the bank, poison is said in the history, and LoCoMo's adversarial questions are
examples the conversation does not answer (docs/xl.md). v2 (builder ``xl-2``, this folder's
own modules) stays selectable (``-T xl_version=2``) so that earlier figures reproduce.

v2's parts, in the order a build uses them: ``params`` (fixed choices), ``locomo`` (the
source, v3's too), ``answers``, ``phrasing``, ``memories`` and ``attacks`` (drafts),
``records`` (typed records), ``build`` (splits, order, files, manifest).
"""

from pathlib import Path

from cmi_inspect.xl.attacks import ATTACK_KINDS
from cmi_inspect.xl.build import build_xl, xl2_path
from cmi_inspect.xl.locomo import LOCOMO_PATH, LOCOMO_SHA256, locomo_path
from cmi_inspect.xl.params import BUILDER_VERSION, MANIFEST_FILE, XL_FILE
from cmi_inspect.xl.v3.build import build_xl3, xl3_path


def xl_path(version: int = 3) -> Path:
    """The data file of XL ``version`` (3 or 2), built into the cache on first use."""
    return xl3_path() if version == 3 else xl2_path()


__all__ = [
    "ATTACK_KINDS",
    "BUILDER_VERSION",
    "LOCOMO_PATH",
    "LOCOMO_SHA256",
    "MANIFEST_FILE",
    "XL_FILE",
    "build_xl",
    "build_xl3",
    "locomo_path",
    "xl_path",
]
