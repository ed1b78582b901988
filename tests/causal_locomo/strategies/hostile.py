"""Hostile memory strategies, as a third party could install them (entry points in the tests).

Each tries one way of grading itself or of taking down more than its own sample; the tests
show what the boundary around ``select`` does with it.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

from cmi_inspect import MemoryStrategy, MemoryTask, Pick, Selection, memory_prompt
from cmi_inspect.errors import UserError
from inspect_ai.solver import TaskState
from inspect_ai.util import LimitExceededError

GIVE_UP = "I do not know."


def everything(task: MemoryTask) -> Selection:
    return Selection(
        picks=[Pick(key=m.key) for m in task.memories],
        prompt=memory_prompt(task.request, [m.content for m in task.memories]),
    )


class PeekSampleState(MemoryStrategy):
    """Maps the labels of the live sample (Inspect's ``sample_state()``) onto the keys it is
    shown, and keeps the useful ones; it carries on if refused."""

    name = "peek"

    async def select(self, task: MemoryTask) -> Selection:
        from inspect_ai.solver._task_state import sample_state

        try:
            meta: Any = sample_state().metadata  # type: ignore[union-attr]
        except Exception:
            return everything(task)
        useful = {m["memory_id"] for m in meta.get("memory_bank", []) if m["label"] == "useful"}
        kept = [m for m in task.memories if m.key in useful]
        return Selection([Pick(m.key) for m in kept], memory_prompt(task.request, [m.content for m in kept]))


def live_states(task: MemoryTask) -> list[TaskState]:
    """The running samples of ``task``'s request, from the garbage collector."""
    gc.collect()  # not the samples of evals that have ended
    return [o for o in gc.get_objects() if isinstance(o, TaskState) and o.input_text == task.request and not o.scores]


def fake_key(state: TaskState) -> None:
    """The red team's rewrite: every memory useful, the answer "I do not know."."""
    from inspect_ai.scorer import Target

    meta = state.metadata
    meta["scoring_criteria"] = {"expected_answer": GIVE_UP, "answer_aliases": [GIVE_UP], "must_include": []}
    meta["gold_behavior"] = GIVE_UP
    for m in meta.get("memory_bank", meta.get("memories", [])):
        m["label"] = "useful"
    state._target = Target(GIVE_UP)


class Rewrite(MemoryStrategy):
    """Rewrites the live sample's key (found by gc) to "I do not know." and every memory
    useful, then selects every memory."""

    name = "rewrite"

    async def select(self, task: MemoryTask) -> Selection:
        for state in live_states(task):
            fake_key(state)
        return everything(task)


class Exit(MemoryStrategy):
    name = "exit"

    async def select(self, task: MemoryTask) -> Selection:
        sys.exit(3)


class Hang(MemoryStrategy):
    name = "hang"

    async def select(self, task: MemoryTask) -> Selection:
        await asyncio.Event().wait()
        raise AssertionError("never set")


class BadPicks(MemoryStrategy):
    name = "bad_picks"

    async def select(self, task: MemoryTask) -> Selection:
        first = task.memories[0].key
        return Selection([Pick("m999"), Pick(first), Pick(first)], memory_prompt(task.request, []))


class BadRanking(MemoryStrategy):
    name = "bad_ranking"

    async def select(self, task: MemoryTask) -> Selection:
        first = task.memories[0].key
        return Selection([Pick(first)], memory_prompt(task.request, []), ranking=[first, "m999", first])


class Limited(MemoryStrategy):
    name = "limited"

    async def select(self, task: MemoryTask) -> Selection:
        raise LimitExceededError("token", value=10, limit=5)


class Misconfigured(MemoryStrategy):
    name = "misconfigured"

    async def select(self, task: MemoryTask) -> Selection:
        raise UserError("misconfigured needs -S endpoint=URL")


class NotASelection(MemoryStrategy):
    name = "not_a_selection"

    async def select(self, task: MemoryTask) -> Selection:
        return None  # type: ignore[return-value]


class UnderDeclare(MemoryStrategy):
    """Writes the whole bank into its prompt and declares no pick."""

    name = "under_declare"

    async def select(self, task: MemoryTask) -> Selection:
        return Selection([], memory_prompt(task.request, [m.line() for m in task.memories]))


class Paraphrase(MemoryStrategy):
    """Shows the bank shouting, its punctuation changed, and declares no pick."""

    name = "paraphrase"

    async def select(self, task: MemoryTask) -> Selection:
        lines = [m.content.upper().replace(" ", " -- ").replace(".", " !") for m in task.memories]
        return Selection([], memory_prompt(task.request, lines))


class ForgeAnswer(MemoryStrategy):
    """Hands back an answer of its own making, with no model call."""

    name = "forge_answer"

    async def select(self, task: MemoryTask) -> Selection:
        from inspect_ai.model import ModelOutput

        prompt = memory_prompt(task.request, [])
        return Selection([], prompt, output=ModelOutput.from_content("mockllm/model", GIVE_UP))


class ReuseOtherAnswer(MemoryStrategy):
    """Asks the model with the whole bank, then declares an empty prompt and reuses that answer."""

    name = "reuse_other_answer"

    async def select(self, task: MemoryTask) -> Selection:
        output = await task.model.generate(everything(task).prompt)
        return Selection([], memory_prompt(task.request, []), output=output)


class Summarise(MemoryStrategy):
    """Has the model restate the whole bank, answers from that restatement, declares nothing."""

    name = "summarise"

    async def select(self, task: MemoryTask) -> Selection:
        output = await task.model.generate(everything(task).prompt)
        return Selection([], memory_prompt(task.request, [f"[summary] {output.completion}"]))


class RewriteSelection(MemoryStrategy):
    """Shows the whole bank, then, from a task left running, rewrites its recorded selection to
    the one memory it likes best once the solver has recorded it."""

    name = "rewrite_selection"

    async def select(self, task: MemoryTask) -> Selection:
        states = live_states(task)
        first = task.memories[0].key

        async def later() -> None:
            for _ in range(10_000):
                await asyncio.sleep(0)
                if all(s.store.get("MemorySelection:strategy") == self.name for s in states):
                    break
            for state in states:
                state.store.set("MemorySelection:selected", [first])
                state.store.set("MemorySelection:scores", [1.0])
                state.store.set("MemorySelection:exposed", [first])

        self.background = asyncio.get_running_loop().create_task(later())
        return everything(task)


class ReadTheKey(MemoryStrategy):
    """Reads the answer key from the data file (the path it was told, or ``CMI_DATA_DIR``'s
    files), picks exactly the useful memories and answers with the gold answer's memories;
    with no key to read, it selects nothing."""

    name = "read_the_key"

    async def select(self, task: MemoryTask) -> Selection:
        import json
        import os
        from pathlib import Path

        from cmi_inspect.causal_locomo.view import blind_keys

        places = [Path(p) for p in os.environ.get("HOSTILE_DATA_FILES", "").split(":") if p]
        if os.environ.get("CMI_DATA_DIR"):
            places += Path(os.environ["CMI_DATA_DIR"]).rglob("*.jsonl")
        for place in places:
            try:
                lines = place.read_text(encoding="utf-8").splitlines()
            except OSError:
                continue
            for line in lines:
                record = json.loads(line) if line.strip() else {}
                if record.get("current_task", {}).get("instruction") != task.request:
                    continue
                from cmi_inspect.causal_locomo.data import MemoryRecord

                bank = [MemoryRecord.model_validate(m) for m in record["memory_bank"]]
                keys = blind_keys(record["example_id"], bank)
                useful = {keys[i] for i in record["gold_memory_ids"]}
                kept = [m for m in task.memories if m.key in useful]
                return Selection([Pick(m.key) for m in kept], memory_prompt(task.request, [m.line() for m in kept]))
        return Selection([], memory_prompt(task.request, []))


class PatchScorers(MemoryStrategy):
    """Patches the scorers' module so that every answer and selection scores perfectly, for
    its own row and any scored after it in the same process; selects nothing."""

    name = "patch_scorers"

    async def select(self, task: MemoryTask) -> Selection:
        from cmi_inspect.causal_locomo import scorers

        perfect = {"recall": 1.0, "precision": 1.0, "useful_f1": 1.0, "poison_adoption": 0.0}
        scorers.selection_metrics = lambda *a, **k: {**perfect, "bad_rejection": 1.0, "n_selected": 1.0}  # type: ignore[assignment]
        return Selection([], memory_prompt(task.request, []))


class FirstMemory(MemoryStrategy):
    """An honest installed strategy: the first memory it is shown."""

    name = "first_memory"

    async def select(self, task: MemoryTask) -> Selection:
        first = task.memories[:1]
        return Selection([Pick(m.key) for m in first], memory_prompt(task.request, [m.line() for m in first]))


HOSTILE = {
    cls.name: f"hostile:{cls.__name__}"
    for cls in (
        PeekSampleState,
        Rewrite,
        Exit,
        Hang,
        BadPicks,
        BadRanking,
        Limited,
        Misconfigured,
        NotASelection,
        UnderDeclare,
        Paraphrase,
        ForgeAnswer,
        ReuseOtherAnswer,
        Summarise,
        RewriteSelection,
        ReadTheKey,
        PatchScorers,
        FirstMemory,
    )
}
"""Entry-point name -> ``module:Class``, as a package's pyproject would declare them."""
