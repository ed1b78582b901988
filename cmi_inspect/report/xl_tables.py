"""XL v5's result tables: each run's selection against the data's confusers, by stratum, with
intervals clustered by conversation, and the pre-registered targets (docs/RESULTS.md, "XL v5:
pre-registration") marked met or missed.

``example_facts`` reads once, from the data (no model), what the tables need of each example
a run answered: its group and conversation, useful turns, confusers and which of them are
effective on a model (``harm``), the audit's strata (``audit``: in pool, no rare question
word), and the BM25 ranks behind *excess* adoption (``baselines.selection_rows``'s measure,
applied here to what each run's model saw). An export keeps them (``report.export``), so
the tables are made again from it alone.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cmi_inspect.causal_locomo.data import ExampleRecord
from cmi_inspect.causal_locomo.xl.audit import evidence_has_rare_word, in_pool, labelled_turns
from cmi_inspect.causal_locomo.xl.baselines import EXACT_RANKS, Ranked, Store, e5_order, examples
from cmi_inspect.causal_locomo.xl.locomo import Conversation
from cmi_inspect.report.paired import RESAMPLES, SEED, conversation_means
from cmi_inspect.report.runs import Run
from cmi_inspect.report.samples import SampleRow
from cmi_inspect.report.tables import markdown_table

Facts = dict[str, Any]
STRATA: dict[str, Callable[[Facts], bool]] = {
    "every": lambda f: True,
    "confirmed": lambda f: f["group"] == "confirmed",
    "in_pool": lambda f: f["group"] == "confirmed" and f["in_pool"],
    "no_rare_word": lambda f: f["group"] == "confirmed" and f["no_rare_word"],
    "unanswerable": lambda f: f["group"] == "unanswerable",
    "control": lambda f: f["group"] == "control",
}


def example_facts(runs: Sequence[Run]) -> tuple[dict[str, Facts], list[str]]:
    """What the data says of each example an XL run answered (empty without XL runs, or
    when they ran on other XL bytes than this checkout builds: a note says so)."""
    xl = [r for r in runs if r.data.name == "xl"]
    if not xl:
        return {}, []
    from cmi_inspect.causal_locomo.data import sha256_of
    from cmi_inspect.causal_locomo.data_files import load_records
    from cmi_inspect.causal_locomo.xl.assemble import xl_path
    from cmi_inspect.causal_locomo.xl.locomo import load_locomo, locomo_path

    path = xl_path()
    built = sha256_of(path)
    other = sorted({r.data.sha256[:12] for r in xl if r.data.sha256 != built})
    if other:
        return {}, [
            f"XL tables left out: runs on XL sha256 {', '.join(other)}, this checkout builds "
            f"{built[:12]} (report them at the commit that ran them)"
        ]
    convs = {c.sample_id: c for c in load_locomo(locomo_path())}
    return facts_of(load_records(path), convs, xl, _harm({r.model for r in xl})), []


def facts_of(
    records: Sequence[ExampleRecord],
    convs: dict[str, Conversation],
    runs: Sequence[Run],
    harm: dict[str, dict[str, Any]],
    e5: bool = True,
) -> dict[str, Facts]:
    """Each example the runs answered: its group, conversation, useful turns, confusers
    (those effective on each model of ``harm``), strata, and the BM25 ranks of its
    confusers and of every turn a run showed (with e5 off, in pool by BM25 alone)."""
    every = examples(records)
    labelled = labelled_turns(convs, every)
    seen: dict[str, set[str]] = defaultdict(set)
    for r in runs:
        for row in r.rows:
            seen[row.sample] |= set(row.selected)
    asked = {x.sample for r in runs for x in r.rows}
    exs = [e for e in every if e.id in asked]
    ranked = [Ranked("bm25", {e.id: e.bm25 for e in exs})]
    if e5:
        ranked.append(Ranked("e5", e5_order(exs)))
    stores: dict[str, Store] = {}
    out = {}
    for e in exs:
        store = stores.setdefault(e.conversation, Store(e, labelled[e.conversation]))
        rank = {t: i for i, t in enumerate(e.bm25)}
        confusers = list(e.meta["confusers"])
        shown = sorted(seen[e.id] | set(confusers), key=lambda t: rank.get(t, len(rank)))
        out[e.id] = {
            "conversation": e.conversation,
            "group": e.meta["group"],
            "family": e.record.task_family,
            "useful": list(e.meta["useful"]),
            "confusers": confusers,
            "effective": {
                m: [c for c in confusers if by_example.get(e.id, {}).get(c, {}).get("effective")]
                for m, by_example in harm.items()
            },
            "in_pool": in_pool(e, ranked),
            "no_rare_word": not evidence_has_rare_word(e, store),
            "rank": {t: rank[t] for t in shown if t in rank},
            "labelled": [t for t in shown if t in store.labelled],
            "labelled_ranks": [
                i for i, t in enumerate(e.bm25[:EXACT_RANKS]) if t in store.labelled
            ],
            "unlabelled_deep": sum(t not in store.labelled for t in e.bm25[EXACT_RANKS:]),
        }
    return out


def _harm(models: set[str]) -> dict[str, dict[str, Any]]:
    from cmi_inspect.causal_locomo.xl.harm import harm_path

    found = {m: harm_path(m) for m in sorted(models)}
    return {m: json.loads(p.read_text())["examples"] for m, p in found.items() if p.is_file()}


@dataclass(frozen=True)
class Estimate:
    """A mean over samples with its 95% bootstrap interval over conversations."""

    mean: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        if math.isnan(self.mean):
            return "-"
        if math.isnan(self.low):
            return f"{self.mean:.3f}"
        return f"{self.mean:.3f} [{self.low:.2f}, {self.high:.2f}]"


NONE = Estimate(math.nan, math.nan, math.nan, 0)


def estimate(values: Sequence[float], conversations: Sequence[str]) -> Estimate:
    if not values:
        return NONE
    x = np.asarray(values, dtype=float)
    if len(set(conversations)) < 2:
        return Estimate(float(x.mean()), math.nan, math.nan, len(x))
    low, high = np.percentile(
        conversation_means(x, list(conversations), RESAMPLES, SEED), [2.5, 97.5]
    )
    return Estimate(float(x.mean()), float(low), float(high), len(x))


def rank_baseline(rows: Sequence[SampleRow], facts: dict[str, Facts]) -> dict[int, float]:
    """How often the run's model saw a never-labelled turn at each BM25 rank (ranks from
    ``EXACT_RANKS`` pooled), over ``rows``: ``baselines.rank_baseline`` for a selection."""
    kept: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        f = facts[row.sample]
        labelled = set(f["labelled"])
        picked = [f["rank"][t] for t in row.selected if t in f["rank"] and t not in labelled]
        for r in range(EXACT_RANKS):
            if r not in f["labelled_ranks"]:
                kept[r].append(float(r in picked))
        deep = sum(p >= EXACT_RANKS for p in picked)
        if f["unlabelled_deep"]:
            kept[EXACT_RANKS] += [1.0] * deep + [0.0] * (f["unlabelled_deep"] - deep)
    return {r: float(np.mean(v)) for r, v in kept.items()}


CONFUSER_SETS = ("all", "effective", "inert")


def confusers_of(f: Facts, which: str, model: str) -> list[str]:
    effective = set(f["effective"].get(model, []))
    if which == "effective":
        return [c for c in f["confusers"] if c in effective]
    if which == "inert":
        return [c for c in f["confusers"] if c not in effective]
    return list(f["confusers"])


def per_sample(run: Run, facts: dict[str, Facts], stratum: str) -> dict[str, dict[str, float]]:
    """Each of the run's samples in ``stratum``: every measure the tables show (a confuser
    measure only where the example has such confusers)."""
    rows = [r for r in run.rows if r.sample in facts and STRATA[stratum](facts[r.sample])]
    base = rank_baseline(rows, facts)
    model = run.model
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        f = facts[row.sample]
        picked = set(row.selected)
        values = {
            "score": row.score, "success": row.success, "useful_f1": row.useful_f1,
            "precision": row.precision, "recall": row.recall, "n_selected": row.n_selected,
            **row.f1_at, "seconds": row.seconds, "calls": float(row.calls),
            "prompt_tokens": float(row.input_tokens),
            "kept_a_confuser": float(bool(picked & set(f["confusers"]))),
        }  # fmt: skip
        for which in CONFUSER_SETS:
            chosen = confusers_of(f, which, model)
            if not chosen:
                continue
            mine = sum(c in picked for c in chosen) / len(chosen)
            expected = [base.get(min(f["rank"][c], EXACT_RANKS), 0.0) for c in chosen]
            values[f"adoption_{which}"] = mine
            values[f"excess_{which}"] = mine - float(np.mean(expected))
        out[row.sample] = values
    return out


def measure(run: Run, facts: dict[str, Facts], stratum: str) -> dict[str, Estimate]:
    """Each measure's mean and interval over the run's samples in ``stratum``."""
    values = per_sample(run, facts, stratum)
    keys = sorted({k for v in values.values() for k in v})
    return {
        k: estimate(
            [v[k] for v in values.values() if k in v],
            [facts[s]["conversation"] for s, v in values.items() if k in v],
        )
        for k in keys
    }


def row_name(run: Run) -> str:
    """The plan's row a run belongs to (the folder below the report's that holds its log,
    as ``cmi-inspect run --plan`` writes them), else its strategy and bank size."""
    parts = Path(run.location).parts
    if len(parts) > 1:
        return parts[0]
    return run.strategy + (f", bank {run.data.bank_size}" if run.data.bank_size else "")


ANSWER_COLUMNS = ("score", "success", "useful_f1", "precision", "recall", "n_selected",
                  "f1_at_1", "f1_at_3", "seconds", "calls", "prompt_tokens")  # fmt: skip
CONFUSER_COLUMNS = tuple(f"{m}_{w}" for m in ("adoption", "excess") for w in CONFUSER_SETS) + (
    "kept_a_confuser",
)


STRATUM_COLUMNS = ("useful_f1", "adoption_all", "adoption_effective", "excess_all",
                   "kept_a_confuser")  # fmt: skip
TABLES = (
    ("Answers and cost, every example", "every", ANSWER_COLUMNS),
    ("Confusers, confirmed examples", "confirmed", CONFUSER_COLUMNS),
    ("Stratum: confirmed, a confuser in BM25's or e5's top 20", "in_pool", STRATUM_COLUMNS),
    ("Stratum: confirmed, no rare question word in the evidence", "no_rare_word", STRATUM_COLUMNS),
    ("Stratum: unanswerable", "unanswerable", STRATUM_COLUMNS),
)


SWEEP_MEASURES = (("useful_f1", "every"), ("adoption_all", "confirmed"))
"""What the bank-size sweep shows, each over its stratum."""


def bank_sweep(
    runs: Sequence[Run], facts: dict[str, Facts]
) -> dict[str, dict[int | None, dict[str, Estimate]]]:
    """Each strategy (with its arguments) that ran on XL at two or more bank sizes: per
    size, smallest first and the whole store (None) last, its ``SWEEP_MEASURES``."""
    sizes: dict[str, dict[int | None, Run]] = defaultdict(dict)
    for r in xl_runs(runs, facts):
        sizes[r.strategy][r.data.bank_size] = r
    return {
        strategy: {
            bank: {m: measure(r, facts, stratum)[m] for m, stratum in SWEEP_MEASURES}
            for bank, r in sorted(by_bank.items(), key=lambda b: b[0] or math.inf)
        }
        for strategy, by_bank in sizes.items()
        if len(by_bank) > 1
    }


def sweep_table(sweep: dict[str, dict[int | None, dict[str, Estimate]]]) -> list[str]:
    if not sweep:
        return []
    body = [
        [strategy, str(bank or "store"), *[str(by[m]) for m, _ in SWEEP_MEASURES]]
        for strategy, banks in sweep.items()
        for bank, by in banks.items()
    ]
    return [
        "### Bank-size sweep (useful F1 over every example, adoption over the confirmed)",
        markdown_table(["strategy", "bank", *[m for m, _ in SWEEP_MEASURES]], body),
    ]


def xl_runs(runs: Sequence[Run], facts: dict[str, Facts]) -> list[Run]:
    """The runs on XL whose examples ``facts`` covers."""
    return [r for r in runs if r.data.name == "xl" and any(x.sample in facts for x in r.rows)]


def xl_tables(runs: Sequence[Run], facts: dict[str, Facts]) -> list[str]:
    """The v5 tables of the XL runs in ``runs`` (Markdown parts; none without facts)."""
    xl = xl_runs(runs, facts)
    if not xl:
        return []
    parts = [
        "## XL v5: selection against the confusers",
        "Means over samples, each with its 95% interval from a bootstrap over conversations "
        "(10,000 draws). Adoption is the share of an example's confusers the model saw; "
        "*effective* confusers flip this model's answer (`xl/harm`), *inert* ones do not; "
        "excess is adoption less the rate the run showed never-labelled turns at the "
        "confusers' BM25 ranks. Seconds are working time under the run's concurrency; "
        "calls and prompt tokens count every forced decoding.",
    ]
    for title, stratum, columns in TABLES:
        body = []
        for r in xl:
            m = measure(r, facts, stratum)
            n = max((e.n for e in m.values()), default=0)
            body.append([row_name(r), str(n), *[str(m.get(c, NONE)) for c in columns]])
        parts += [f"### {title}", markdown_table(["row", "n", *columns], body)]
    return parts + sweep_table(bank_sweep(xl, facts))
