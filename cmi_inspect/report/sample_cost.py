"""What one logged sample cost: the strategy's model calls (its generations, less the
judge's, and its forced decodings), their tokens, and how many were read from the cache."""

from __future__ import annotations

from inspect_ai.event import InfoEvent, ModelEvent
from inspect_ai.log import EvalSample

from cmi_inspect.local_model.capability import FORCED_DECODING


def forced_decodings(sample: EvalSample) -> list[dict[str, int]]:
    """The sample's forced decodings (``capability.FORCED_DECODING``): the model read a
    prompt and scored given replies, generating nothing, so no ``ModelEvent`` holds them."""
    found = []
    for e in sample.events:
        record = (
            e.data.get(FORCED_DECODING)
            if isinstance(e, InfoEvent) and isinstance(e.data, dict)
            else None
        )
        if isinstance(record, dict):
            found.append({k: int(v) for k, v in record.items() if isinstance(v, int)})
    return found


def token_usage(sample: EvalSample) -> tuple[int, int]:
    """Input and output tokens; a forced decoding's prompt and scored replies count as input."""
    usage = sample.model_usage.values()
    forced = sum(
        f.get("prompt_tokens", 0) + f.get("continuation_tokens", 0)
        for f in forced_decodings(sample)
    )
    return sum(u.input_tokens for u in usage) + forced, sum(u.output_tokens for u in usage)


def strategy_calls(sample: EvalSample) -> list[ModelEvent]:
    """The model calls the strategy made (the judge's are not counted)."""
    return [e for e in sample.events if isinstance(e, ModelEvent) and e.role != "grader"]


def model_calls(sample: EvalSample) -> int:
    """The strategy's generations and forced decodings."""
    return len(strategy_calls(sample)) + len(forced_decodings(sample))


def cache_hits(sample: EvalSample) -> int:
    """The strategy's calls that were read from the model-call cache."""
    return sum(1 for e in strategy_calls(sample) if e.cache == "read")
