"""Causal-LoCoMo: does a memory strategy pick the memories that help, and skip the ones that harm?

Run a strategy with ``inspect eval tasks/causal_locomo.py --solver NAME``,
NAME one of no_memory, full_history, summary_memory, vector_memory,
graph_memory, reflection_memory, cmi (default: no_memory).
"""

import sys
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig

# solvers/ and scorers/ sit beside tasks/ and are not part of the installed
# package, so that Inspect registers their objects under bare names.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cmi_inspect.log_tags  # noqa: E402, F401  names each run's strategy in View's log list
from cmi_inspect.dataset import causal_locomo_dataset  # noqa: E402
from cmi_inspect.judge import JUDGE_PROMPT_VERSION  # noqa: E402
from cmi_inspect.prompts import PROMPT_VERSION  # noqa: E402
from cmi_inspect.strategies.cmi import note_task_protocol  # noqa: E402
from scorers import memory_selection, task_score  # noqa: E402
from solvers import no_memory  # noqa: E402

ANSWER_MAX_TOKENS = 96
TASK_VERSION = 3
"""Bumped when the task's samples or scoring change (3: typed metadata, artefact-free blind)."""


@task
def causal_locomo(
    protocol: str = "paper",
    task_families: str | list[str] | None = None,
    data_file: str | None = None,
    dataset: str = "release",
) -> Task:
    """The Causal-LoCoMo benchmark: memory selection on LoCoMo conversations.

    Args:
        protocol: ``paper`` shows memory labels as the reference run did;
            ``blind`` lets no label, label-bearing field or gold answer reach
            any prompt (only the scorers see them).
        task_families: Restrict to these families (comma-separated or a list):
            temporal_memory_qa, multi_evidence_memory_qa,
            inferential_memory_qa, factual_memory_qa.
        data_file: A JSONL file in the release's schema to use instead of a
            named dataset (a relative path is read from where you run the command).
        dataset: ``release`` (the paper's 87 examples, downloaded or read from
            ``CMI_DATA_DIR``) or ``xl`` (Causal-LoCoMo-XL, built from LoCoMo on
            first use and cached; samples ordered so any ``--limit`` is stratified).
    """
    if isinstance(task_families, str):
        task_families = [f.strip() for f in task_families.split(",") if f.strip()]
    samples = causal_locomo_dataset(protocol, task_families, data_file, dataset)  # type: ignore[arg-type]
    note_task_protocol(protocol)  # type: ignore[arg-type]
    return Task(
        dataset=samples,
        solver=no_memory(),
        scorer=[task_score(), memory_selection()],
        config=GenerateConfig(temperature=0.0, max_tokens=ANSWER_MAX_TOKENS),
        metadata={"answer_prompt": PROMPT_VERSION, "judge_prompt": JUDGE_PROMPT_VERSION},
        version=TASK_VERSION,
        headline_metric="task_score.score",  # the mean task score, as View and the CLI show
    )
