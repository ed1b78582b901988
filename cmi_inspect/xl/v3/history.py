"""The conversation's history with the inserted turns said in it, its turns renumbered.

LoCoMo's turns strictly alternate speakers, so a turn said alone between two turns would
break the alternation and give itself away. Inserted turns therefore go into the gaps
between turns in alternating runs: two inserts of different speakers pair up in one gap
where they can (``place`` prefers such a gap), and where one is left alone a filler turn
(one of its partner's own questions or pleasantries from elsewhere in the conversation)
keeps the run alternating. Turns are then numbered anew (``D3:1``, ``D3:2``, ...), so
nothing in an id marks what was inserted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from cmi_inspect.causal_locomo.data import Turn
from cmi_inspect.xl.locomo import Conversation, Session, normalise_evidence
from cmi_inspect.xl.phrasing import stated_words
from cmi_inspect.xl.v3.params import FILLER_POOL, seeded
from cmi_inspect.xl.v3.plan import Insert

Gap = tuple[int, int]
"""(session, index of the turn it follows)."""


@dataclass(frozen=True)
class History:
    """The sessions as v3 says them, and where LoCoMo's and the inserted turns went."""

    sessions: dict[int, Session]
    new_ids: dict[str, str]
    """LoCoMo's dia_id -> the turn's v3 dia_id."""
    inserted: dict[Insert, str]
    """Each insert -> its turn's v3 dia_id."""
    fillers: tuple[str, ...]
    """The v3 dia_ids of filler turns."""

    def turn(self, dia_id: str) -> Turn:
        session = self.sessions[int(dia_id[1:].split(":")[0])]
        return next(t for t in session.turns if t.dia_id == dia_id)


def place(conv: Conversation, inserts: Sequence[Insert]) -> dict[Insert, Gap]:
    """Each insert's gap, drawn in its window: one that holds a lone insert of the other
    speaker (about another turn) if any, else an empty one, else any without its turn's."""
    rng = seeded(conv.sample_id, "place")
    gaps: dict[Gap, list[Insert]] = {}
    placed: dict[Insert, Gap] = {}
    for insert in inserts:
        lo = insert.lo
        if insert.after is not None:
            session, index = placed[insert.after]
            lo = max(lo, index + 1) if session == insert.session else lo
        window = [(insert.session, i) for i in range(lo, insert.hi + 1)]
        free = [g for g in window if all(o.turn != insert.turn for o in gaps.get(g, []))]
        partners = [
            g for g in free if len(gaps.get(g, [])) == 1 and gaps[g][0].speaker != insert.speaker
        ]
        empty = [g for g in free if not gaps.get(g)]
        gap = rng.choice(partners or empty or free or window)
        gaps.setdefault(gap, []).append(insert)
        placed[insert] = gap
    return placed


def said_history(conv: Conversation, inserts: Sequence[Insert]) -> History:
    """The history with every insert said in its gap, fillers where alternation needs
    them, and every turn renumbered."""
    placed = place(conv, inserts)
    by_gap: dict[Gap, list[Insert]] = {}
    for insert in inserts:
        by_gap.setdefault(placed[insert], []).append(insert)
    fill = _Fillers(conv)
    sessions: dict[int, Session] = {}
    new_ids: dict[str, str] = {}
    inserted: dict[Insert, str] = {}
    fillers: list[str] = []
    for index, session in conv.sessions.items():
        turns: list[Turn | Insert | str] = []
        for i, turn in enumerate(session.turns):
            turns.append(turn)
            after = session.turns[i + 1].speaker if i + 1 < len(session.turns) else None
            turns += _run(by_gap.get((index, i), []), turn.speaker, after, fill)
        said: list[Turn] = []
        for k, item in enumerate(turns, start=1):
            dia_id = f"D{index}:{k}"
            if isinstance(item, Turn):
                new_ids[item.dia_id] = dia_id
                said.append(replace(item, dia_id=dia_id))
            elif isinstance(item, Insert):
                inserted[item] = dia_id
                said.append(Turn(dia_id, item.speaker, item.text))
            else:
                fillers.append(dia_id)
                speaker, text = item.split("\n", 1)
                said.append(Turn(dia_id, speaker, text))
        sessions[index] = replace(session, turns=tuple(said))
    return History(sessions, new_ids, inserted, tuple(fillers))


def _run(
    inserts: list[Insert], before: str, after: str | None, fill: _Fillers
) -> list[Insert | str]:
    """A gap's inserts in an order that alternates speakers with the turns around it,
    fillers (``speaker\\ntext``) where two of one speaker would meet."""
    run: list[Insert | str] = []
    previous, pending = before, list(inserts)
    while pending:
        pick = next((p for p in pending if p.speaker != previous), None)
        if pick is None:
            previous = fill.other(previous)
            run.append(fill.turn(previous))
            continue
        pending.remove(pick)
        run.append(pick)
        previous = pick.speaker
    if run and after is not None and previous == after:
        run.append(fill.turn(fill.other(previous)))
    return run


class _Fillers:
    """Filler turns: a speaker's own turns that state least (questions, pleasantries), the
    FILLER_POOL of them that state fewest words and are no question's evidence, drawn in
    turn from a seeded shuffle."""

    def __init__(self, conv: Conversation) -> None:
        self.speakers = conv.speakers
        self.pools: dict[str, list[str]] = {}
        evidence = {i for item in conv.qa for i in normalise_evidence(item.get("evidence", []))}
        for speaker in conv.speakers:
            turns = (t for s in conv.sessions.values() for t in s.turns)
            texts = {t.text for t in turns if t.speaker == speaker and t.dia_id not in evidence}
            pool = sorted(texts, key=lambda text: (stated_words(text), text))[:FILLER_POOL]
            seeded(conv.sample_id, "fillers", speaker).shuffle(pool)
            self.pools[speaker] = pool
        self.used = dict.fromkeys(conv.speakers, 0)

    def other(self, speaker: str) -> str:
        return self.speakers[1] if speaker == self.speakers[0] else self.speakers[0]

    def turn(self, speaker: str) -> str:
        pool = self.pools[speaker]
        text = pool[self.used[speaker] % len(pool)]
        self.used[speaker] += 1
        return f"{speaker}\n{text}"
