"""What ``cmi-inspect run`` runs, typed: the rows (``RunSpec``) and how each runs (``RunSettings``).

``run.run_all`` takes a ``RunSpec``, the command line builds one, and a row of an installed
strategy reaches its own Python process as a ``RowsSpec`` (JSON validated back into the same
types), so no option travels as an untyped dict. Inspect's own options (``--sample-id``,
``--fail-on-error``, ``--log-level``, ...) pass through ``inspect_options`` by the names
``eval_set`` takes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cmi_inspect.causal_locomo.strategies import STRATEGIES
from cmi_inspect.errors import SampleLimit


class RowOptions(BaseModel):
    """The options every row of a run shares, as ``eval_set`` takes them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_args: dict[str, Any] = Field(default_factory=dict)
    limit: SampleLimit | None = None
    max_samples: int | None = None
    max_tasks: int = 1
    timeout: int | None = None
    time_limit: int | None = None
    max_retries: int | None = None
    cache: bool = True
    model_roles: dict[str, str] | None = None
    epochs: int | None = None
    tags: list[str] | None = None
    inspect_options: dict[str, Any] = Field(default_factory=dict)
    """Any other of ``eval_set``'s arguments by name, as ``inspect eval`` takes them."""


class RunSettings(RowOptions):
    """How every row of a run runs: the model chosen, and the generate config."""

    model: str
    config: dict[str, Any] = Field(default_factory=dict)
    """Generate config for ``eval_set`` (``max_connections``, a served model's settings)."""


class RunSpec(RowOptions):
    """The rows of a ``cmi-inspect run``: strategies (with CMI's ablations and guarded
    copies), their task arguments, and the options every row shares (``run.run_all``)."""

    log_dir: str
    strategies: list[str] = Field(default_factory=lambda: list(STRATEGIES))
    ablations: bool = False
    guard: bool = False
    isolate: bool = False
    serve: int | None = None
    """Serve the embedded model in a process of its own with this many slots."""
    model: str | None = None
    """None: ``INSPECT_EVAL_MODEL``, else the embedded model."""
    task_args: dict[str, Any] = Field(default_factory=dict)
    max_connections: int | None = None

    def row_options(self) -> dict[str, Any]:
        """Its ``RowOptions`` by name, an empty ``model_roles`` or ``tags`` as Inspect's None."""
        options = {name: getattr(self, name) for name in RowOptions.model_fields}
        return options | {"model_roles": self.model_roles or None, "tags": self.tags or None}


class RowsSpec(BaseModel):
    """Rows of installed strategies, for a Python process of their own (``rows.run_apart``):
    checked only (``check``), or run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    log_dir: str
    plans: list[tuple[str, dict[str, Any]]]
    task_args: dict[str, Any]
    settings: RunSettings
    check: bool = False
