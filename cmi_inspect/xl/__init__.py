"""Causal-LoCoMo-XL: a deterministic builder of the memory-selection benchmark from LoCoMo.

Every answerable LoCoMo question (categories 1-4) becomes one example in the release's
schema, in a split (train, dev, test) by conversation. All memories, whatever their label,
are made the same way from one dialogue turn each (its statements, in a phrasing drawn per
memory), and their timestamps come from one seeded sampler, so that neither form nor time
separates the labels (``cmi-inspect audit --dataset xl`` measures how far that holds;
README, "Causal-LoCoMo-XL").
No model and no network are used: two builds from the same source give the same bytes.

The parts, in the order a build uses them: ``params`` (fixed choices), ``locomo`` (the
source), ``answers``, ``phrasing``, ``memories`` and ``attacks`` (drafts), ``records``
(typed records), ``build`` (splits, order, files, manifest).
"""

from cmi_inspect.xl.attacks import ATTACK_KINDS
from cmi_inspect.xl.build import build_xl, xl_path
from cmi_inspect.xl.locomo import LOCOMO_PATH, LOCOMO_SHA256, locomo_path
from cmi_inspect.xl.params import BUILDER_VERSION, MANIFEST_FILE, XL_FILE

__all__ = [
    "ATTACK_KINDS",
    "BUILDER_VERSION",
    "LOCOMO_PATH",
    "LOCOMO_SHA256",
    "MANIFEST_FILE",
    "XL_FILE",
    "build_xl",
    "locomo_path",
    "xl_path",
]
