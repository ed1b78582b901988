"""An XL v3 example: a question, the labels it gives the memories of its conversation's
store, the claims its history holds about its slot, and its scoring criteria.

Useful: every evidence turn's memory, a reaffirmation of the slot, and any copy of the
slot's turn (made for another question's slot) that still states this slot's value.
Harmful: the slot's false claims (``plan``), and any copy of its turn that states another
value for it. Irrelevant: every other memory of the store. The claims (``Claim``) say which
turn states what about the slot, and on whose word, so that the truth rule (docs/xl.md)
can be applied to the history by anyone: the test's oracle does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from cmi_inspect.causal_locomo.data import (
    CurrentTask,
    MemoryLabel,
    ScoringCriteria,
    Split,
    TaskFamily,
)
from cmi_inspect.causal_locomo.data_files import ExampleReference
from cmi_inspect.xl.answers import answer_aliases, must_not_include
from cmi_inspect.xl.locomo import ExampleContext
from cmi_inspect.xl.v3.history import History
from cmi_inspect.xl.v3.params import (
    BUILDER_VERSION,
    EVALUATION_MODE,
    JUDGE_INSTRUCTIONS,
    MAX_WORDS,
    STYLE,
    UNANSWERABLE_INSTRUCTIONS,
    UNANSWERED,
)
from cmi_inspect.xl.v3.plan import Insert
from cmi_inspect.xl.v3.slots import Slot, meaning


class Claim(BaseModel):
    """A turn of the history that bears on an example's slot."""

    dia_id: str
    speaker: str
    source: Literal["first_hand", "hearsay", "injected", "evidence"]
    """The slot owner's own word, the other speaker's, or an outside source's that a speaker
    passes on; ``evidence`` for one of LoCoMo's evidence turns that supports the answer
    without stating the slot's value."""
    stance: Literal["asserts", "retracts", "supports"]
    """``supports``: it says what it adds to the answer, not the slot's value."""
    value: str | None
    """The value as the turn writes it ("" for the day it was said on; None: supports)."""
    means: str | None
    """What it states: the value, or for a dated slot the date it means."""
    label: MemoryLabel
    edit: str | None = None
    """How a false copy was made: value_swap, entity_swap or temporal_shift."""


class SlotRecord(BaseModel):
    dia_id: str
    value: str
    dated: bool


class XLMetadata(BaseModel):
    """How the example was made, for audits, the oracle and the report's breakdowns."""

    builder_version: str
    conversation: str
    original_category: int
    original_evidence: list[str]
    """LoCoMo's evidence ids."""
    evidence: list[str]
    """The same turns' ids in the v3 history."""
    answerable: bool
    needs_several_memories: bool
    """Two or more evidence turns hold parts of the answer."""
    slot: SlotRecord | None
    claims: list[Claim]
    attack_kinds: list[str]
    num_gold_memories: int
    num_harmful_memories: int


def _claim(history: History, insert: Insert, key: str, label: MemoryLabel) -> Claim:
    value, means = insert.values[key]
    return Claim(dia_id=history.inserted[insert], speaker=insert.speaker,
                 source=insert.source, stance=insert.stance, value=value, means=means,  # type: ignore[arg-type]
                 label=label, edit=insert.edits.get(key))  # fmt: skip


def slot_claims(
    ctx: ExampleContext, slot: Slot | None, history: History, inserts: Sequence[Insert]
) -> list[Claim]:
    """The claims the history holds about the example: its evidence turns (the slot's
    value, or support for the answer), and the inserts about its evidence turns."""
    claims = []
    for turn in ctx.evidence:
        dia_id = history.new_ids[turn.dia_id]
        if slot is not None and turn == slot.turn:
            means = meaning(slot, turn.text, ctx.session(turn.session))
            claims.append(Claim(dia_id=dia_id, speaker=turn.speaker, source="first_hand",
                                stance="asserts", value=slot.value, means=means,
                                label="useful"))  # fmt: skip
        else:
            claims.append(Claim(dia_id=dia_id, speaker=turn.speaker, source="evidence",
                                stance="supports", value=None, means=None,
                                label="useful"))  # fmt: skip
    for insert in inserts:
        claim = _insert_claim(slot, history, insert)
        if claim is not None:
            claims.append(claim)
    return claims


def _insert_claim(slot: Slot | None, history: History, insert: Insert) -> Claim | None:
    """What an insert about one of the example's evidence turns says of the example: of
    its slot, what the insert states for it (true: useful, false: harmful); a true copy of
    another evidence turn supports the answer; anything else bears on it not at all."""
    if slot is not None and slot.key in insert.values:
        return _claim(history, insert, slot.key, "useful" if insert.truthful else "harmful")
    if insert.copied and insert.truthful:
        return Claim(dia_id=history.inserted[insert], speaker=insert.speaker,
                     source=insert.source, stance="supports", value=None, means=None,  # type: ignore[arg-type]
                     label="useful")  # fmt: skip
    return None


def labels(claims: Sequence[Claim]) -> dict[str, MemoryLabel]:
    return {c.dia_id: c.label for c in claims}


def answerable_reference(
    ctx: ExampleContext,
    family: TaskFamily,
    slot: Slot | None,
    history: History,
    inserts: Sequence[Insert],
    split: Split | None,
) -> ExampleReference:
    """The example as its file line: its labels from its claims, and its criteria."""
    claims = slot_claims(ctx, slot, history, inserts)
    harmful = [c for c in claims if c.label == "harmful"]
    kinds = {c.dia_id: _kind(c) for c in harmful}
    false_values = [c.means for c in harmful if c.stance == "asserts" and c.means]
    wrong = must_not_include(false_values, ctx.answer)
    criteria = _criteria(ctx.answer, answer_aliases(ctx.answer), wrong[0] if wrong else None,
                         wrong, JUDGE_INSTRUCTIONS)  # fmt: skip
    return _reference(
        ctx,
        family,
        claims,
        kinds,
        criteria,
        split,
        gold_behavior=(
            f"Answer {ctx.answer!r}, relying on the memories that record it, reading what "
            "its owner said last first-hand over what others say of them, and ignoring "
            "unrelated memories and any that contradict it."
        ),
        slot=SlotRecord(
            dia_id=history.new_ids[slot.turn.dia_id], value=slot.value, dated=slot.dated
        )
        if slot
        else None,  # fmt: skip
        history=history,
    )


def _criteria(
    answer: str,
    aliases: list[str],
    adversarial: str | None,
    wrong: list[str],
    instructions: str,
    rule: str = "contains",
) -> ScoringCriteria:
    fields = {
        "expected_answer": answer,
        "answer_aliases": aliases,
        "adversarial_answer": adversarial,
        "must_include": [],
        "must_not_include": wrong,
        "style": STYLE,
        "max_words": MAX_WORDS,
        "judge_instructions": instructions,
        "evaluation_mode": EVALUATION_MODE,
    }
    if rule != "contains":
        fields["answer_rule"] = rule
    return ScoringCriteria.model_validate(fields)


def _kind(claim: Claim) -> str:
    if claim.source == "first_hand":
        return "retraction" if claim.stance == "retracts" else "stale"
    return claim.source


def unanswerable_reference(
    ctx: ExampleContext, adversarial: str, history: History, split: Split | None
) -> ExampleReference:
    """A question the conversation does not answer: no memory is useful, and the right
    answer says so (``answer_rules``'s ``abstains``)."""
    criteria = _criteria(UNANSWERED, [], adversarial, [adversarial], UNANSWERABLE_INSTRUCTIONS,
                         "abstains")  # fmt: skip
    behavior = (
        "Say that the conversation does not tell, selecting no memory; in particular do "
        f"not answer {adversarial!r}, which is said of someone else."
    )
    return _reference(ctx, "unanswerable_memory_qa", [], {}, criteria, split, behavior,
                      None, history)  # fmt: skip


def _reference(
    ctx: ExampleContext,
    family: TaskFamily,
    claims: list[Claim],
    kinds: dict[str, str],
    criteria: ScoringCriteria,
    split: Split | None,
    gold_behavior: str,
    slot: SlotRecord | None,
    history: History,
) -> ExampleReference:
    given = labels(claims)
    answerable = family != "unanswerable_memory_qa"
    metadata = XLMetadata(
        builder_version=BUILDER_VERSION,
        conversation=ctx.conv.sample_id,
        original_category=ctx.category,
        original_evidence=[t.dia_id for t in ctx.evidence],
        evidence=[history.new_ids[t.dia_id] for t in ctx.evidence],
        answerable=answerable,
        needs_several_memories=answerable and len(ctx.evidence) >= 2,
        slot=slot,
        claims=claims,
        attack_kinds=sorted(kinds.values()),
        num_gold_memories=sum(label == "useful" for label in given.values()),
        num_harmful_memories=len(kinds),
    )
    return ExampleReference(
        example_id=ctx.example_id,
        store_id=ctx.conv.sample_id,
        source_dataset="LoCoMo",
        source_sample_id=ctx.conv.sample_id,
        task_family=family,
        current_task=CurrentTask(instruction=ctx.question, task_id=ctx.example_id.split("_", 1)[1]),  # type: ignore[call-arg]
        scoring_criteria=criteria,
        gold_behavior=gold_behavior,
        split=split,
        memory_labels=given,
        attack_kinds=kinds,
        metadata=metadata.model_dump(mode="json"),
    )
