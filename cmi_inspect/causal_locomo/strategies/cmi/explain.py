"""CMI's record of a sample as Markdown, for the sample's explanation in the log."""

from __future__ import annotations

from typing import Any

from cmi_inspect.causal_locomo.strategies.base import MemoryNames
from cmi_inspect.causal_locomo.strategies.cmi.diagnostics import CMIDiagnostics
from cmi_inspect.causal_locomo.strategies.cmi.evidence import Support


def explain(details: dict[str, Any], names: MemoryNames) -> str:
    """Each candidate's scores and decision as a Markdown table, then the evidence."""
    d = CMIDiagnostics.model_validate(details)
    s_no = "-" if d.s_no is None else f"{d.s_no:.3f}"
    lines = [
        f"CMI: s_no = {s_no}; {d.model_calls} intervention calls; "
        f"final answer reused: {d.final_answer_reused}; intervention scorer: {d.intervention}; "
        f"risk filter: {d.risk_filter}; proposal: {d.proposal}; selector: {d.selector}",
        *([f"({d.selector_note})"] if d.selector_note else []),
        "",
        "| # | memory | s_with | s_pert | utility | stability | decision |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in d.candidates:
        s_pert = signed(c.s_pert) + (f" ({c.perturbed_skipped})" if c.perturbed_skipped else "")
        lines.append(
            f"| {c.rank} | {names.get(c.key, c.key)} | {signed(c.s_with)} | {s_pert} "
            f"| {signed(c.utility)} | {signed(c.stability)} | {c.reason} |"
        )
    if any(c.features for c in d.candidates):
        lines += learned_lines(d, names)
    if any(c.effect is not None and c.effect.graded for c in d.candidates):
        lines += graded_lines(d, names)
    if d.evidence:
        lines += evidence_lines(d, names)
    return "\n".join(lines)


def learned_lines(d: CMIDiagnostics, names: MemoryNames) -> list[str]:
    """Per candidate, the learned selector's probability and the features it read."""
    features = list(next(c.features for c in d.candidates if c.features))
    lines = ["", f"Learned selector ({d.selector}): p(useful) and the features it read.", ""]
    lines += ["| # | memory | p(useful) | " + " | ".join(features) + " |"]
    lines += ["| --- " * (len(features) + 3) + "|"]
    for c in d.candidates:
        cells = " | ".join(f"{c.features.get(f, 0.0):.3f}" for f in features)
        p = "-" if c.probability is None else f"{c.probability:.3f}"
        lines.append(f"| {c.rank} | {names.get(c.key, c.key)} | {p} | {cells} |")
    return lines


def graded_lines(d: CMIDiagnostics, names: MemoryNames) -> list[str]:
    """Per candidate, its answers, their scores and the model's probability of each in
    every context: what its graded utility and stability were computed from."""
    lines = [
        "",
        f"Graded effect ({d.effect}): each context's score is the expected answer score.",
        "",
    ]
    lines += ["| # | memory | answer | score | p (none) | p (with) | p (perturbed) |"]
    lines += ["| --- | --- | --- | --- | --- | --- | --- |"]
    for c in d.candidates:
        if c.effect is None or not c.effect.graded:
            continue
        p = {x.context: x.probabilities for x in c.effect.contexts}
        for i, (answer, score) in enumerate(zip(c.effect.answers, c.effect.scores, strict=True)):
            cells = [f"{p[k][i]:.3f}" if k in p else "-" for k in ("none", "with", "perturbed")]
            text = answer.replace("|", "/").replace("\n", " ")
            memory = names.get(c.key, c.key)
            lines.append(f"| {c.rank} | {memory} | {text} | {score:.2f} | {' | '.join(cells)} |")
    return lines


def signed(v: float | None) -> str:
    """A score with its sign, or ``-`` for none."""
    return "-" if v is None else f"{v:+.3f}"


def support_cell(support: Support | None) -> str:
    """A support score and what the evidence lacks, as one table cell."""
    if support is None:
        return "-"
    missing = f"; lacks {', '.join(support.missing)}" if support.missing else ""
    return f"{support.score:.2f}{missing}".replace("|", "/")


def evidence_lines(d: CMIDiagnostics, names: MemoryNames) -> list[str]:
    """The evidence windows, and what of each candidate's memory and answer they support."""
    lines = ["", "Evidence from the history:", ""]
    lines += [
        f"- {w.ref} (relevance {w.relevance:.2f}; dates: {', '.join(w.dates) or '-'}): {w.text}"
        for w in d.evidence
    ]
    lines += [
        "",
        f"No-memory answer support: {support_cell(d.support_no_memory)}",
        "",
        "| # | memory | memory support | answer support | perturbed answer support | conflicts |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in d.candidates:
        conflicts = ", ".join(f"{names.get(k, k)} ({v:.2f})" for k, v in c.conflicts.items())
        lines.append(
            f"| {c.rank} | {names.get(c.key, c.key)} | {support_cell(c.memory_support)} "
            f"| {support_cell(c.support_with)} | {support_cell(c.support_perturbed)} "
            f"| {conflicts or '-'} |"
        )
    return lines
