"""The XL v5 run's pre-registered targets (docs/RESULTS.md, "XL v5: pre-registration",
committed before any v5 result), each marked met or missed from the runs, with its
interval: differences are paired on the samples both rows finished and bootstrapped over
conversations (``xl_tables.estimate``). A target whose rows did not run is marked so."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cmi_inspect.report.runs import Run
from cmi_inspect.report.tables import markdown_table
from cmi_inspect.report.xl_tables import Estimate, Facts, estimate, per_sample, row_name

MARGIN_F1 = 0.02
"""Targets 2 and 7: useful F1 no more than this below the row compared with."""
CAUSAL_GAIN = 0.03
"""Target 4: learned less learned non-causal useful F1 at least this."""
GUARD_CUT = 0.30
"""Target 7: guarded adoption at least this share below unguarded."""
UNANSWERABLE_CLEAN = 7
"""Target 6: unanswerable examples (of the ten) where CMI learned keeps no confuser."""


TARGETS = {
    1: "1. CMI learned's confuser adoption below vector memory's (interval below 0), "
    "its excess at most 0",
    2: f"2. CMI learned's useful F1 at least vector memory's less {MARGIN_F1}",
    3: "3. CMI learned's adoption at most that of context_cite and of leave_one_in "
    "(cross-fitted), its calls at most context_cite's",
    4: f"4. learned less learned non-causal useful F1 at least +{CAUSAL_GAIN}, interval above 0",
    5: "5. from a bank of 8 to the store, CMI rule's adoption rises less than vector memory's",
    6: "6. on the unanswerable examples, CMI learned keeps no confuser in at least "
    f"{UNANSWERABLE_CLEAN}",
    7: f"7. guarded vector memory's adoption at least {GUARD_CUT:.0%} below unguarded, "
    f"its useful F1 no more than {MARGIN_F1} lower",
}
"""The targets as the pre-registration words them."""


@dataclass(frozen=True)
class Verdict:
    target: str
    measured: str
    met: bool | None
    """None: a row it needs did not run."""


def difference(
    a: Run, b: Run, key: str, facts: dict[str, Facts], stratum: str = "confirmed"
) -> Estimate:
    """``key`` of a less b over the samples of ``stratum`` both finished."""
    va, vb = per_sample(a, facts, stratum), per_sample(b, facts, stratum)
    pairs = sorted(s for s in va.keys() & vb.keys() if key in va[s] and key in vb[s])
    return estimate(
        [va[s][key] - vb[s][key] for s in pairs], [facts[s]["conversation"] for s in pairs]
    )


def mean(run: Run, key: str, facts: dict[str, Facts], stratum: str = "confirmed") -> Estimate:
    values = per_sample(run, facts, stratum)
    kept = [s for s in values if key in values[s]]
    return estimate([values[s][key] for s in kept], [facts[s]["conversation"] for s in kept])


def verdicts(runs: Sequence[Run], facts: dict[str, Facts]) -> list[Verdict]:
    """The seven targets, in the pre-registration's order."""
    by = {row_name(r): r for r in runs if r.data.name == "xl"}
    out: list[Verdict] = []

    def need(target: str, *names: str) -> list[Run] | None:
        missing = [n for n in names if n not in by]
        if missing:
            out.append(Verdict(target, f"not run: {', '.join(missing)}", None))
            return None
        return [by[n] for n in names]

    t = TARGETS[1]
    if rows := need(t, "cmi-learned", "vector_memory"):
        d = difference(rows[0], rows[1], "adoption_all", facts)
        excess = mean(rows[0], "excess_all", facts)
        out.append(Verdict(t, f"difference {d}; excess {excess}", d.high < 0 and excess.mean <= 0))
    t = TARGETS[2]
    if rows := need(t, "cmi-learned", "vector_memory"):
        d = difference(rows[0], rows[1], "useful_f1", facts, "every")
        out.append(Verdict(t, f"difference {d}", d.mean >= -MARGIN_F1))
    t = TARGETS[3]
    if rows := need(t, "cmi-learned", "context_cite-crossfit", "leave_one_in-crossfit"):
        cc = difference(rows[0], rows[1], "adoption_all", facts)
        loi = difference(rows[0], rows[2], "adoption_all", facts)
        calls = difference(rows[0], rows[1], "calls", facts, "every")
        met = cc.mean <= 0 and loi.mean <= 0 and calls.mean <= 0
        out.append(
            Verdict(
                t,
                f"less context_cite {cc}; less leave_one_in {loi}; calls less context_cite {calls}",
                met,
            )
        )
    t = TARGETS[4]
    if rows := need(t, "cmi-learned", "cmi-learned-non_causal"):
        d = difference(rows[0], rows[1], "useful_f1", facts, "every")
        out.append(Verdict(t, f"difference {d}", d.mean >= CAUSAL_GAIN and d.low > 0))
    t = TARGETS[5]
    if rows := need(t, "cmi-rule", "cmi-rule-bank8", "vector_memory", "vector_memory-bank8"):
        cmi = difference(rows[0], rows[1], "adoption_all", facts)
        vec = difference(rows[2], rows[3], "adoption_all", facts)
        out.append(Verdict(t, f"CMI rise {cmi}; vector rise {vec}", cmi.mean < vec.mean))
    t = TARGETS[6]
    if rows := need(t, "cmi-learned"):
        values = per_sample(rows[0], facts, "unanswerable")
        clean = sum(v["kept_a_confuser"] == 0 for v in values.values())
        out.append(Verdict(t, f"{clean} of {len(values)}", clean >= UNANSWERABLE_CLEAN))
    t = TARGETS[7]
    if rows := need(t, "vector_memory-guarded", "vector_memory"):
        guarded, plain = mean(rows[0], "adoption_all", facts), mean(rows[1], "adoption_all", facts)
        f1 = difference(rows[0], rows[1], "useful_f1", facts, "every")
        cut = 1 - guarded.mean / plain.mean if plain.mean else math.nan
        met = cut >= GUARD_CUT and f1.mean >= -MARGIN_F1
        out.append(
            Verdict(
                t, f"adoption {guarded} against {plain} ({cut:.0%} lower); F1 difference {f1}", met
            )
        )
    return out


def targets_table(runs: Sequence[Run], facts: dict[str, Facts]) -> list[str]:
    """The targets as Markdown, when the runs include the pre-registered rows."""
    found = verdicts(runs, facts)
    if all(v.met is None for v in found):
        return []
    body = [[v.target, v.measured, {True: "met", False: "missed", None: "-"}[v.met]] for v in found]
    return ["### Pre-registered targets", markdown_table(["target", "measured", "verdict"], body)]
