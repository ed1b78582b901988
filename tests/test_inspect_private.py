"""The smoke test of Inspect's unexported names: each adapter function still does what it
is for. An upgrade of Inspect that moves one fails here, naming it. (This module imports
Inspect's private modules itself, to check them.)"""

from __future__ import annotations

import contextvars

from cmi_inspect import inspect_private
from cmi_inspect.errors import UserError
from inspect_ai.model import get_model


def test_user_error_is_inspects_prerequisite_error_which_inspect_eval_prints_as_one_line(monkeypatch):
    import inspect_ai._util.error as inspect_error

    assert inspect_private.PrerequisiteError is inspect_error.PrerequisiteError
    printed: list[object] = []  # the hook prints through Rich's console, which an eval may have replaced
    monkeypatch.setattr(inspect_error, "print", printed.append)
    error = UserError("-S k must be an integer of at least 1, got 'x'.")
    inspect_error.exception_hook()(UserError, error, None)  # type: ignore[arg-type]
    assert printed == ["\n-S k must be an integer of at least 1, got 'x'.\n"]


def test_inspects_openai_api_provider_is_told_apart_from_others():
    api = get_model("openai-api/scripted/m", base_url="http://127.0.0.1:9/v1", api_key="k", memoize=False).api
    assert inspect_private.is_openai_compatible(api)
    assert not inspect_private.is_openai_compatible(get_model("mockllm/model", memoize=False).api)


def test_the_active_model_is_the_one_an_eval_is_set_up_for_and_none_outside():
    from inspect_ai.model import GenerateConfig
    from inspect_ai.model._model import init_active_model

    model = get_model("mockllm/model", memoize=False)

    def inside() -> object:
        init_active_model(model, GenerateConfig())
        return inspect_private.active_model()

    def set_here() -> object:
        inspect_private.set_active_model(model)
        return inspect_private.active_model()

    assert contextvars.copy_context().run(inside) is model
    assert contextvars.copy_context().run(set_here) is model
    assert contextvars.copy_context().run(inspect_private.active_model) is None
