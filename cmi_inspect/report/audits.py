"""The audits' results as text: how far a view gives labels away (``cmi-inspect audit``),
how far the surface of a memory does (``--form``), and how often the judge accepts answers
of known correctness (``cmi-inspect judge-audit``, and its section of ``cmi-inspect report
--judge-audit``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cmi_inspect.causal_locomo.audit import COMPARISONS, CONTROLLED
from cmi_inspect.causal_locomo.form_audit import AUC_BOUNDS, CLASSIFIER_LIMIT, FOLDS
from cmi_inspect.causal_locomo.judge_audit import KINDS, AuditResult, read_audit


def artefact_table(result: Mapping[str, Any], title: str) -> str:
    """``cmi-inspect audit``'s result as a Markdown table, saying whether each AUC lies
    within 0.40-0.60."""
    lo, hi = CONTROLLED
    header = "| feature |" + "".join(f" {key} | within {lo:.2f}-{hi:.2f} |" for key in COMPARISONS)
    lines = [f"### {title}", "", header, "|---" * (1 + 2 * len(COMPARISONS)) + "|"]
    for name, aucs in result["features"].items():
        cells = ""
        for key in COMPARISONS:
            value = aucs.get(key)
            if value is None:
                cells += " n/a | n/a |"
            else:
                cells += f" {value:.3f} | {'yes' if lo <= value <= hi else 'no'} |"
        lines.append(f"| {name} |{cells}")
    return "\n".join(lines) + "\n"


def _rate(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.3f}"


def judge_table(result: dict[str, object]) -> str:
    """``cmi-inspect judge-audit``'s result as a Markdown table: acceptance rate, standard
    error and judge errors per kind, with a plain warning when the judge's replies could
    not be read."""
    audit = AuditResult.model_validate(result)
    lines = [
        f"Judge: {audit.judge} ({audit.n} examples)",
        "",
        "| answers | items | accepted | stderr | judge errors |",
        "| --- | --- | --- | --- | --- |",
    ]
    for kind in KINDS:
        items = audit.items.get(kind, 0)
        errors = None if audit.errors is None else audit.errors.get(kind, 0)
        if items and errors == items:
            cells = ["not meaningful", "-", f"{errors} (all)"]
        else:
            rate = audit.acceptance.get(kind)
            cells = [_rate(rate), "-" if rate is None else _rate(audit.stderr.get(kind))]
            cells.append("-" if errors is None else str(errors))
        lines.append(f"| {kind} | {items} | {' | '.join(cells)} |")
    if audit.errors_overall:
        lines.append(
            f"\n{audit.errors_overall} of {sum(audit.items.values())} verdicts "
            f"({_rate(audit.error_rate_overall)}) were judge errors (no readable verdict): "
            "they count as rejections, as in a run's task score, so the rates above understate "
            "what this judge accepts. Where every verdict of a kind was an error its "
            "acceptance is not meaningful."
        )
    if audit.agreement_with_alias is not None:
        lines.append(f"\nAgreement with the alias match: {audit.agreement_with_alias:.3f}")
    return "\n".join(lines)


def judge_section(path: Path) -> str:
    """The judge's false-accept rates, from a ``judge-audit --json`` file, for the report."""
    return (
        "## How far to trust the judge\n\nThe judge share (0.3) of the task score, audited "
        "with answers of known correctness (`cmi-inspect judge-audit`): vague_wrong, "
        "specific_wrong, adversarial and negated acceptance are false accepts.\n\n"
        + judge_table(read_audit(path))
    )


def form_table(result: Mapping[str, Any], title: str) -> str:
    """``cmi-inspect audit --form``'s result as Markdown: each surface feature's AUC for
    harmful against useful, the regression on all of them, and the AUCs by attack kind."""
    lo, hi = AUC_BOUNDS
    items = result["items"]
    lines = [
        f"### {title}",
        "",
        f"{items['harmful']} harmful and {items['useful']} useful memories of "
        f"{result['groups']} conversations (an example's memory counts once per example).",
        "",
        f"| feature | AUC harmful vs useful | within {lo:.2f}-{hi:.2f} |",
        "|---|---|---|",
    ]
    for name, value in result["features"].items():
        ok = "n/a" if value is None else ("yes" if lo <= value <= hi else "no")
        lines.append(f"| {name} | {_rate(value)} | {ok} |")
    value = result["classifier"]
    ok = "n/a" if value is None else ("yes" if value <= CLASSIFIER_LIMIT else "no")
    lines.append(
        f"| logistic regression on all, {FOLDS} folds by conversation | {_rate(value)} | "
        f"at most {CLASSIFIER_LIMIT:.2f}: {ok} |"
    )
    kinds = result["by_kind"]
    if kinds:
        features = list(next(iter(kinds.values())))
        lines += ["", "| kind vs useful | " + " | ".join(features) + " |"]
        lines.append("|---" * (1 + len(features)) + "|")
        for kind, aucs in kinds.items():
            lines.append(f"| {kind} | " + " | ".join(_rate(aucs[f]) for f in features) + " |")
    return "\n".join(lines) + "\n"
