"""Causal-LoCoMo-XL: the memory-selection benchmark built from LoCoMo's ten conversations.

Each conversation's turns, verbatim, are a store (``store``); its harmful memories are
*natural confusers*, real turns that answer a neighbouring question differently, proposed by
a rule written down in ``confusers`` and confirmed by calibrated readers (``reading`` makes
their sheets, ``verdicts`` combines their verdicts into the file the build reads);
``examples`` chooses the examples and their labels, ``assemble`` writes the build,
``subset`` names a pre-registered share of it, ``harm`` measures which confusers change a
model's answer and ``audit`` what the build gives away.
No model and no network are used by the build: the same LoCoMo and verdict file give the
same bytes (docs/xl.md).
"""

from cmi_inspect.causal_locomo.xl.assemble import (
    INLINE_FILE,
    MANIFEST_FILE,
    STORE_FILE,
    build_xl,
    xl_path,
)
from cmi_inspect.causal_locomo.xl.examples import BUILDER_VERSION
from cmi_inspect.causal_locomo.xl.locomo import LOCOMO_PATH, LOCOMO_SHA256, locomo_path

__all__ = [
    "BUILDER_VERSION",
    "INLINE_FILE",
    "LOCOMO_PATH",
    "LOCOMO_SHA256",
    "MANIFEST_FILE",
    "STORE_FILE",
    "build_xl",
    "locomo_path",
    "xl_path",
]
