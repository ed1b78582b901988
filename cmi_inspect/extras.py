"""The optional extras (pyproject.toml): a feature whose library is not installed is refused
in one line naming the extra and its install command, as Inspect's ``pip_dependency_error``
does for its own providers.

``local``: the embedded engine (``gguf/`` models, ``cmi-inspect run --serve``); ``fit``:
scikit-learn (``cmi-inspect fit-selector``, ``cmi-inspect audit``, the ``hashing``
embedder); ``report``: matplotlib (``cmi-inspect report --out``'s figures); ``mem0``,
``langmem``, ``graphiti``: those libraries as strategies; ``all``: every one of them.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from cmi_inspect.errors import UserError


def require(extra: str, feature: str, module: str) -> ModuleType:
    """``module``, imported; a ``UserError`` saying that ``feature`` needs ``extra`` when it
    cannot be (it, or a library it imports, is not installed)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(
            f"{feature} needs the {extra} extra: pip install 'cmi-inspect[{extra}]'"
        ) from None
