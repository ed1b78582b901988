"""An XL example as a typed record of the release's schema, with XL's own fields typed too."""

from __future__ import annotations

import json
from dataclasses import replace

from pydantic import BaseModel

from cmi_inspect.causal_locomo.data import (
    CurrentTask,
    ExampleRecord,
    MemoryRecord,
    PastSession,
    ScoringCriteria,
    session_text,
)
from cmi_inspect.xl.answers import answer_aliases, must_not_include
from cmi_inspect.xl.attacks import Attack, attacks_for
from cmi_inspect.xl.locomo import ExampleContext
from cmi_inspect.xl.memories import Draft, irrelevant_drafts, is_sound, useful_drafts
from cmi_inspect.xl.params import (
    BUILDER_VERSION,
    EVALUATION_MODE,
    FAMILY_BY_CATEGORY,
    JUDGE_INSTRUCTIONS,
    MAX_WORDS,
    MEMORY_TYPE,
    STYLE,
    seeded,
)


class XLMemory(MemoryRecord):
    """A memory, with the dialogue turns it was made from."""

    source_session_id: str
    source_dia_ids: list[str]


class XLTask(CurrentTask):
    task_id: str
    """The QA item's place in its conversation (``qa_0007``)."""


class XLCriteria(ScoringCriteria):
    evaluation_mode: str


class XLMetadata(BaseModel):
    """How the example was made, for audits and the report's breakdowns."""

    builder_version: str
    original_category: int
    original_evidence: list[str]
    cutoff_session: int
    contains_poisoned_memory: bool
    attack_kinds: list[str]
    num_gold_memories: int
    num_bad_memories: int
    num_harmful_memories: int


class XLExample(ExampleRecord):
    """One line of XL: an example of the release's schema, and where it came from."""

    source_dataset: str
    source_sample_id: str
    metadata: XLMetadata

    def line(self) -> str:
        """The record as a JSONL line: keys sorted, the fields XL does not set left out."""
        data = self.model_dump(mode="json", exclude_unset=True, serialize_as_any=True)
        return json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def _past_sessions(ctx: ExampleContext, plants: dict[str, str]) -> list[PastSession]:
    """The example's history, each planted claim spoken at the end of its host turn."""
    sessions = []
    for s in ctx.past:
        turns = [
            replace(t, text=f"{t.text} {plants[t.dia_id]}") if t.dia_id in plants else t
            for t in s.turns
        ]
        sessions.append(
            PastSession(
                session_id=f"s{s.index}",
                timestamp=s.index,
                date_time=s.date_time,
                content=session_text(s.date_time, turns),
            )
        )
    return sessions


def _memory(memory_id: str, draft: Draft) -> XLMemory:
    return XLMemory(
        memory_id=memory_id,
        content=draft.content,
        label=draft.label,
        type=MEMORY_TYPE,
        scope=draft.speaker,
        timestamp=draft.session,
        attack_kind=draft.attack_kind,
        source_session_id=f"s{draft.session}",
        source_dia_ids=draft.dia_ids,
    )


def build_record(ctx: ExampleContext) -> XLExample | None:
    """The example as a record, or None when its useful memories are unsound."""
    useful = useful_drafts(ctx)
    if not is_sound([d.content for d in useful], ctx.answer):
        return None
    attacks = attacks_for(ctx)
    excluded = {t.dia_id for t in ctx.evidence} | {a.plant[0] for a in attacks if a.plant}
    drafts = useful + irrelevant_drafts(ctx, excluded) + [a.draft for a in attacks]
    seeded(ctx.example_id, "bank-order").shuffle(drafts)
    bank: list[MemoryRecord] = [_memory(f"m_{i:02d}", d) for i, d in enumerate(drafts)]
    return XLExample(
        example_id=ctx.example_id,
        source_dataset="LoCoMo",
        source_sample_id=ctx.conv.sample_id,
        task_family=FAMILY_BY_CATEGORY[ctx.category],
        current_task=XLTask(task_id=ctx.example_id.split("_", 1)[1], instruction=ctx.question),
        past_sessions=_past_sessions(ctx, dict(a.plant for a in attacks if a.plant)),
        memory_bank=bank,
        gold_memory_ids=[m.memory_id for m in bank if m.label == "useful"],
        bad_memory_ids=[m.memory_id for m in bank if m.label != "useful"],
        gold_behavior=(
            f"Answer {ctx.answer!r}, relying on the memories that record it and ignoring "
            "unrelated ones and any that contradict them."
        ),
        scoring_criteria=_criteria(ctx, attacks),
        metadata=XLMetadata(
            builder_version=BUILDER_VERSION,
            original_category=ctx.category,
            original_evidence=[t.dia_id for t in ctx.evidence],
            cutoff_session=ctx.past[-1].index,
            contains_poisoned_memory=bool(attacks),
            attack_kinds=[a.draft.attack_kind for a in attacks if a.draft.attack_kind],
            num_gold_memories=len(useful),
            num_bad_memories=len(bank) - len(useful),
            num_harmful_memories=len(attacks),
        ),
    )


def _criteria(ctx: ExampleContext, attacks: list[Attack]) -> XLCriteria:
    return XLCriteria(
        expected_answer=ctx.answer,
        answer_aliases=answer_aliases(ctx.answer),
        adversarial_answer=next((a.adversarial for a in attacks if a.adversarial), None),
        must_include=[],
        must_not_include=must_not_include([a.adversarial for a in attacks], ctx.answer),
        style=STYLE,
        max_words=MAX_WORDS,
        evaluation_mode=EVALUATION_MODE,
        judge_instructions=JUDGE_INSTRUCTIONS,
    )
