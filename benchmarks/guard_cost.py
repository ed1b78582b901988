"""The memory guard's own cost per sample, beside the retrieval it guards, in one run.

For each release example (blind view), serially: vector memory's ``select`` (top 3, e5),
then ``MemoryGuard.check`` over its picks; prints milliseconds per sample of each and their
ratio. Neither calls a model. Inside an Inspect run a sample's ``GuardRecord.seconds`` is
wall-clock among concurrent samples (it includes waiting for theirs), so this is the
measure of the guard alone.

    python benchmarks/guard_cost.py [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from inspect_ai.model import get_model

from cmi_inspect.causal_locomo.data_files import load_records
from cmi_inspect.causal_locomo.dataset import dataset_path, record_metadata, view_of
from cmi_inspect.causal_locomo.strategies.base import MemoryTask
from cmi_inspect.causal_locomo.strategies.guard import MemoryGuard
from cmi_inspect.causal_locomo.strategies.vector import VectorMemory


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="the release's first N examples")
    args = parser.parse_args()
    records = load_records(dataset_path("release"))[: args.limit]
    vector, guard, model = VectorMemory(top_k=3), MemoryGuard(), get_model("mockllm/model")
    warm = view_of(record_metadata(records[0], "blind"))  # load both e5 models before timing
    await guard.check_async("warm up", [m.content for m in warm.memories[:2]], [])
    retrieve, check = [], []
    for record in records:
        view = view_of(record_metadata(record, "blind"))
        task = MemoryTask(
            record.current_task.instruction, view.memories, view.past_sessions, "blind", model
        )
        start = time.perf_counter()
        selection = await vector.select(task)
        middle = time.perf_counter()
        texts = {m.key: m.content for m in view.memories}
        picks = {p.key: texts[p.key] for p in selection.picks}
        await guard.check_async(task.request, picks, view.past_sessions)
        retrieve.append(middle - start)
        check.append(time.perf_counter() - middle)
    ms = {name: 1000 * statistics.fmean(v) for name, v in (("vector", retrieve), ("guard", check))}
    print(f"{len(records)} examples; ms per sample: vector memory's select {ms['vector']:.1f}")
    print(f"(median {1000 * statistics.median(retrieve):.1f}), the guard {ms['guard']:.1f}")
    ratio = ms["guard"] / ms["vector"]
    print(f"(median {1000 * statistics.median(check):.1f}); guard / select {ratio:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
