"""Analysis: where label-free CMI's evidence and conflict check fall short, counted on data.

Builds each example's evidence exactly as blind CMI does (the request and the protocol's
view of the bank; the candidates are the top-k e5 proposal) and counts, with the labels
read only here:

- (a) examples whose gold answer gets support 0 from the evidence;
- (b) useful memories all of whose source turns lie inside the evidence windows;
- (c) examples where a vague answer ("Last week.", "Yesterday.") gets support above 0,
  and the support of the first example's gold date with and without a citation of a key;
- (d) irrelevant memories whose text gets support above 0;
- (e) harmful-useful pairs of a bank whose e5 cosine reaches ``conflict_similarity`` in
  one direction only, and those CMI's conflict relation pairs.

    python benchmarks/evidence_audit.py [--dataset release|xl] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter

from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import dataset_path
from cmi_inspect.causal_locomo.strategies.cmi import PROFILES, CMIConfig
from cmi_inspect.causal_locomo.strategies.cmi.evidence import MEMORY_WINDOW_RELEVANCE, BlindEvidence
from cmi_inspect.causal_locomo.strategies.cmi.proposal import proposal_scores
from cmi_inspect.causal_locomo.view import key_to_memory_id, memory_view
from cmi_inspect.retrieval import make_embedder


async def audit(dataset: str, limit: int | None, relevance: float) -> Counter[str]:
    records = load_records(dataset_path(dataset))[:limit]
    embedder = make_embedder("e5")
    config = CMIConfig()
    counts: Counter[str] = Counter()
    for i, r in enumerate(records):
        sessions = sorted(r.past_sessions, key=lambda s: s.timestamp)
        stamps = [s.timestamp for s in sessions]
        view = memory_view(r.example_id, r.memory_bank, "blind", stamps, r.dated_by_source)
        ids = key_to_memory_id(r.example_id, r.memory_bank, "blind")
        label = {m.memory_id: m.label for m in r.memory_bank}
        request = r.current_task.instruction
        cosines = list(await embedder.cosine(request, [m.content for m in view]))
        scores = proposal_scores(cosines, view, request, PROFILES["blind"].proposal)
        ranked = sorted(zip(scores, range(len(view)), view, strict=True), key=lambda x: -x[0])
        candidates = [m for _, _, m in ranked[: config.k]]
        evidence = BlindEvidence(
            request, sessions, memories=[m.content for m in candidates], memory_relevance=relevance
        )
        inside = {t.dia_id for w in evidence.windows for t in w.turns}
        counts["examples"] += 1
        counts["(a) gold answer support 0"] += (
            evidence.support(r.scoring_criteria.expected_answer).score == 0
        )
        for m in r.memory_bank:
            sources = set(getattr(m, "source_dia_ids", None) or [])
            if m.label == "useful":
                counts["(b) useful memories"] += 1
                counts["(b) ... all source turns in the evidence"] += (
                    bool(sources) and sources <= inside
                )
        if r.task_family == "temporal_memory_qa":
            counts["(c) temporal examples"] += 1
            counts['(c) ... "Last week." support > 0'] += evidence.support("Last week.").score > 0
            counts['(c) ... "Yesterday." support > 0'] += evidence.support("Yesterday.").score > 0
        if i == 0:
            answer = r.scoring_criteria.expected_answer
            for text in (f"On {answer}.", f"According to m3, on {answer}."):
                print(
                    f"(c) {r.example_id}: support of {text!r} = {evidence.support(text).score:.2f}"
                )
        for shown in view:
            if label[ids[shown.key]] == "irrelevant":
                counts["(d) irrelevant memories"] += 1
                counts["(d) ... text support > 0"] += evidence.support(shown.content).score > 0
        harmful = [m for m in view if label[ids[m.key]] == "harmful"]
        useful = [m for m in view if label[ids[m.key]] == "useful"]
        for h in harmful:
            for u in useful:
                there = float((await embedder.cosine(h.content, [u.content]))[0])
                back = float((await embedder.cosine(u.content, [h.content]))[0])
                reached = (there >= config.conflict_similarity) + (
                    back >= config.conflict_similarity
                )
                counts["(e) harmful-useful pairs"] += 1
                counts["(e) ... threshold reached one way only"] += reached == 1
                counts["(e) ... paired by the symmetric relation"] += reached >= 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="release")
    parser.add_argument("--limit", type=int)
    parser.add_argument(
        "--memory-relevance",
        type=float,
        default=MEMORY_WINDOW_RELEVANCE,
        help="the evidence's cut for windows retrieved by a memory's text (above 1: none kept)",
    )
    args = parser.parse_args()
    counts = audit(args.dataset, args.limit, args.memory_relevance)
    for name, n in asyncio.run(counts).items():
        print(f"{name}: {n}")


if __name__ == "__main__":
    main()
