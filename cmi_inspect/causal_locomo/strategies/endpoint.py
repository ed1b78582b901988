"""The response model as an OpenAI-compatible endpoint, for memory libraries that bring
their own LLM client (mem0, LangMem, Graphiti).

A ``gguf/`` model is served on loopback by llama.cpp's server (``GGUFModel.served``); an
``openai-api/SERVICE/MODEL`` is called at its own base URL; any other provider is refused in
one line, before a library sends a request somewhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.model import Model

from cmi_inspect.errors import UserError
from cmi_inspect.inspect_private import is_openai_compatible


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible chat endpoint a library's LLM calls."""

    url: str
    api_key: str
    model: str
    served: bool = False
    """Whether it is the embedded model served here (llama.cpp's server), as opposed to a
    server of the user's."""

    def __str__(self) -> str:
        return f"{self.model} at {self.url}"


def endpoint_for(model: Model, n_ctx: int, chat_format: str | None = None, *, why: str) -> Endpoint:
    """The endpoint of the response model; a ``gguf/`` model is served with an ``n_ctx``
    window and llama.cpp's ``chat_format`` (None: the file's own). ``why`` names the option
    that needs it, for the one-line refusal of any other provider."""
    from cmi_inspect.local_model.provider import GGUFModel

    check_endpoint(model, why=why)
    api = model.api
    if isinstance(api, GGUFModel):
        served = api.served(n_ctx, chat_format)
        return Endpoint(served.url, served.api_key, served.model, served=True)
    return Endpoint(api.base_url or "", api.api_key or "none", api.service_model_name())


def check_endpoint(model: Model, *, why: str) -> None:
    """One line unless ``model`` has an OpenAI-compatible endpoint (``endpoint_for``'s), so
    that a strategy refuses another provider before the run (``MemoryStrategy.check_model``)
    rather than in each sample."""
    from cmi_inspect.local_model.provider import GGUFModel

    api = model.api
    if isinstance(api, GGUFModel):
        return
    url = api.base_url
    if is_openai_compatible(api) and url and url.startswith(("http://", "https://")):
        return
    raise UserError(
        f"{why} calls the response model through an OpenAI-compatible endpoint: use "
        f"gguf/NAME (served here) or openai-api/SERVICE/MODEL, not {model}."
    )


def unreachable(error: BaseException) -> bool:
    """The endpoint gave no answer (refused, timed out), as opposed to a bad one: the
    sample then fails, naming it, instead of recording an extraction that failed."""
    from openai import APIConnectionError

    cause: BaseException | None = error
    seen: set[int] = set()
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, APIConnectionError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False
