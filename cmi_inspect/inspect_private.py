"""Every name of Inspect's that it does not export, behind one function or alias each.

Inspect keeps these in modules whose names start with ``_``; a release may move them. Each
was checked against inspect-ai 0.3.285 (pyproject.toml bounds it below 0.4), and
``tests/test_inspect_private.py`` fails, naming it, when an upgrade moves one. No other
module imports ``inspect_ai._*`` (``tests/test_imports.py`` holds that).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspect_ai.model import Model, ModelAPI

# Inspect's error for a missing prerequisite (``inspect_ai._util.error``, 0.3.285): the
# exception hook of ``inspect eval`` prints one as its message alone, with no traceback.
try:
    from inspect_ai._util.error import PrerequisiteError
except ImportError:  # pragma: no cover - only on an Inspect that moved it

    class PrerequisiteError(Exception):  # type: ignore[no-redef]
        """A stand-in: ``UserError`` still works, but ``inspect eval`` prints a traceback."""

        def __init__(self, message: str) -> None:
            self.message = message


def active_model() -> Model | None:
    """The model the eval being set up or run is for, None outside one
    (``inspect_ai.model._model.active_model``, checked against 0.3.285)."""
    from inspect_ai.model._model import active_model as active

    return active()


def set_active_model(model: Model) -> None:
    """Make ``model`` what ``active_model()`` returns in the current context, as an eval
    does while it builds its tasks (``inspect_ai.model._model.active_model_context_var``,
    checked against 0.3.285)."""
    from inspect_ai.model._model import active_model_context_var

    active_model_context_var.set(model)


def is_openai_compatible(api: ModelAPI) -> bool:
    """Whether ``api`` is Inspect's ``openai-api`` provider or one built on it (its class,
    ``inspect_ai.model._providers.openai_compatible.OpenAICompatibleAPI`` in 0.3.285, has no
    public name)."""
    from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI

    return isinstance(api, OpenAICompatibleAPI)
