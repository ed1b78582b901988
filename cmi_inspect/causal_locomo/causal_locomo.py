"""The Causal-LoCoMo ``@task``: does a memory strategy pick the memories that help?

The top of the eval's folder: it joins the eval's data and scorers to the strategy
solvers (``strategies/solvers.py``), and no other module of the folder imports it.
Run a strategy with ``inspect eval cmi_inspect/causal_locomo --solver cmi_inspect/NAME``
from anywhere the package is installed (or ``inspect eval tasks/causal_locomo.py --solver
NAME`` from a checkout), NAME one of no_memory, full_history, summary_memory,
vector_memory, graph_memory, reflection_memory, cmi (default: no_memory). ``-T
strategy=NAME`` (with ``-T strategy_args=...``) makes the strategy the task's own strategy solver
instead: the run is then named after it (``causal_locomo: cmi (blind)`` in View), what it
would read that the protocol hides is refused before the run starts, and ``inspect
eval-retry`` rebuilds it from the task's arguments; ``cmi-inspect run`` runs every row so.
"""

from importlib import resources
from typing import Any

import yaml
from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig

from cmi_inspect.causal_locomo.built import note_built, own_solver
from cmi_inspect.causal_locomo.data import TASK_FAMILIES
from cmi_inspect.causal_locomo.dataset import CausalLocomoMetadata, causal_locomo_dataset
from cmi_inspect.causal_locomo.judge import JUDGE_PROMPT_VERSION
from cmi_inspect.causal_locomo.log_tags import VIEWER, run_name, run_tags
from cmi_inspect.causal_locomo.prompts import PROMPT_VERSION
from cmi_inspect.causal_locomo.protocol import named_protocol
from cmi_inspect.causal_locomo.scorers import SCORINGS, memory_selection, task_score
from cmi_inspect.causal_locomo.strategies.solvers import no_memory, strategy_solver_named
from cmi_inspect.errors import UserError, choose

ANSWER_MAX_TOKENS = 96


def register_entry() -> dict[str, Any]:
    """The eval's entry for the Inspect Evals register, ``causal_locomo/eval.yaml``."""
    text = resources.files("cmi_inspect.causal_locomo").joinpath("eval.yaml").read_text("utf-8")
    entry: dict[str, Any] = yaml.safe_load(text)
    return entry


TASK_VERSION: str = register_entry()["version"]
"""``N-X``, read from ``eval.yaml`` (its one copy): N, bumped when scores stop being
comparable (3: typed metadata, artefact-free blind; 4: the data's sha256 in the version; 5:
the answer key sealed, out of the running sample; 6: strict scoring credits no answer that
denies the expected answer; 7: denial read per clause and sentence, doubt read as a hedge, the
alias judge crediting neither under paper too, a denied answer scoring 0 under strict; 8 and
9: the eval README's changelog); X, when the interface changes (B: the gold answers as
target, the whole record as metadata, pure scorers; C: standard errors clustered by
conversation). The logged version is
``N-X-<data sha256 prefix>``, with ``-bank<N>`` under ``-T bank_size``."""


@task
def causal_locomo(
    protocol: str = "paper",
    task_families: str | list[str] | None = None,
    data_file: str | None = None,
    dataset: str = "release",
    scoring: str | None = None,
    split: str | None = None,
    strategy: str | None = None,
    strategy_args: dict[str, Any] | None = None,
    bank_size: int | None = None,
) -> Task:
    """The Causal-LoCoMo benchmark: memory selection on LoCoMo conversations.

    Args:
        protocol: ``paper`` shows memory labels as the reference run did;
            ``blind`` lets no label, label-bearing field or gold answer reach
            any prompt (only the scorers see them).
        task_families: Restrict to these families (comma-separated or a list),
            of ``cmi_inspect.causal_locomo.data.TaskFamily``; an unknown one is refused with
            the list.
        data_file: A JSONL file in the release's schema to use instead of a
            named dataset (a relative path is read from where you run the command).
        dataset: ``release`` (the paper's 87 examples, downloaded or read from
            ``CMI_DATA_DIR``) or ``xl`` (Causal-LoCoMo-XL, built from LoCoMo on
            first use and cached); either's samples are ordered so that any ``--limit``
            prefix is stratified by family.
        scoring: ``paper`` counts success as the paper did; ``strict`` (the default under
            ``blind`` and on XL) never counts an answer that hedges across several values of the
            kind asked for (dates, numbers, names), or that denies the expected answer it
            names ("It was not 7 May 2023"), as a success.
        split: ``train``, ``dev`` or ``test``, for a data file whose examples name a split;
            XL has none (anything learned on it is cross-fitted by conversation) and
            neither has the release.
        strategy: A strategy to run as the task's own strategy solver (``cmi-inspect run``
            lists them): the run is named after it and refused before it starts for what
            the protocol hides; none: ``--solver``'s, else ``no_memory``.
        strategy_args: The strategy's ``-S`` arguments, ``guard`` and ``isolate`` included.
        bank_size: Draw each bank down to this many memories, BM25's top N, label-blind
            (docs/xl.md, "Bank size"); XL's bank is otherwise its conversation's whole
            store.
    """
    if isinstance(task_families, str):
        task_families = [f.strip() for f in task_families.split(",") if f.strip()]
        if not task_families:
            raise UserError(
                "-T task_families= is empty: leave it out for every family, or name some of "
                f"{', '.join(TASK_FAMILIES)}."
            )
    shown = named_protocol(protocol)
    # XL has no paper figures to reproduce: its default refuses a guess beside a disclaimer
    scoring = choose(
        "scoring", scoring or ("strict" if dataset == "xl" else shown.scoring), SCORINGS
    )
    samples = causal_locomo_dataset(
        protocol,  # type: ignore[arg-type]
        task_families,
        data_file,
        dataset,
        split,
        bank_size,
    )
    digest = CausalLocomoMetadata.model_validate(samples[0].metadata).data_sha256
    chosen = dict(strategy_args or {})
    task_args = {
        "protocol": protocol,
        "dataset": dataset,
        "data_file": data_file,
        "bank_size": bank_size,
    }
    with own_solver():  # a strategy given here is refused before the run for what it hides
        solver = strategy_solver_named(strategy, chosen, shown) if strategy else no_memory()
    built = Task(
        dataset=samples,
        solver=solver,
        display_name=run_name(strategy, chosen, task_args) if strategy else None,
        tags=run_tags(strategy, chosen, task_args) if strategy else None,
        # pure functions of each sample's record and target: `inspect score` re-scores anywhere
        scorer=[task_score(scoring), memory_selection()],
        config=GenerateConfig(temperature=0.0, max_tokens=ANSWER_MAX_TOKENS),
        metadata={
            "answer_prompt": PROMPT_VERSION,
            "judge_prompt": JUDGE_PROMPT_VERSION,
            "data_sha256": digest,
            "scoring": scoring,
        },
        # the data's content is part of the task's identity: a rerun of a folder whose data
        # changed starts new logs instead of resuming ones scored against the old answer key
        version=f"{TASK_VERSION}-{digest[:12]}" + (f"-bank{bank_size}" if bank_size else ""),
        headline_metric="task_score.score",  # the mean task score, as View and the CLI show
        viewer=VIEWER,
    )
    note_built(built, shown, task_args)  # for a solver named apart (--solver), built next
    return built
