"""ContextCite (Cohen-Wang et al., 2024) as a memory strategy: attribute the answer to the
candidates by a sparse linear surrogate of its log-probability under random ablations.

Over CMI's candidates (its proposal, the same retriever and k), the model answers with all
of them in its context; that answer's log-probability is then read by forced decoding in
contexts that keep a subset of the candidates (each kept with probability 1/2), a LASSO
fitted of the log-probability on the inclusion mask, and a candidate's coefficient is its
attribution: how many nats including it adds to the answer's log-probability. Where the
candidates have no more subsets than the ablations asked for (2^k at most: 8 for k = 3),
every subset is scored once instead of drawing. The draw is seeded by the request and the
candidates, so a sample's selection repeats.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np

from cmi_inspect.causal_locomo.strategies.attribution import (
    AnswerLogprob,
    AttributionDetails,
    AttributionMemory,
    context,
)
from cmi_inspect.causal_locomo.view import Memory
from cmi_inspect.errors import finite_float, positive_int
from cmi_inspect.extras import require

Mask = tuple[bool, ...]


class ContextCiteDetails(AttributionDetails):
    """ContextCite's record: the attribution baseline's, and its surrogate's fit."""

    ablations: int = 0
    """Ablation masks the surrogate was fitted on."""
    subsets_scored: int = 0
    """Distinct contexts whose log-probability was read (a mask drawn twice is read once)."""
    alpha: float = 0.0
    intercept: float | None = None
    """The surrogate's log-probability with no candidate."""


def ablation_masks(n: int, ablations: int, rng: random.Random) -> list[Mask]:
    """Every subset of n candidates when there are no more than ``ablations`` (the exact
    design), else ``ablations`` draws, each candidate kept with probability 1/2."""
    if 2**n <= ablations:
        return list(itertools.product((False, True), repeat=n))
    return [tuple(rng.random() < 0.5 for _ in range(n)) for _ in range(ablations)]


class ContextCite(AttributionMemory):
    """ContextCite over CMI's candidates: keep those the answer is attributed to.

    The answer given with every candidate is scored, by forced decoding, in contexts that
    ablate random subsets of them; a LASSO of its log-probability on the inclusion mask
    gives each candidate's attribution. Needs forced decoding (``gguf/`` models) and the
    ``fit`` extra. ``ablations``, ``threshold`` and ``alpha`` are not tuned: choose them
    on development data (XL's dev split).

    Args:
        k: Candidates proposed, by CMI's proposal (its retriever and weights).
        ablations: Ablated contexts the surrogate is fitted on, each candidate kept with
            probability 1/2; with no more than that many subsets (2^k), every subset once.
        threshold: Kept: a candidate whose attribution (nats of the answer's
            log-probability) is above it; at least 0. Or a file of thresholds cross-fitted
            by conversation (``cmi-inspect fit-threshold``): each sample's fold's.
        alpha: The LASSO's penalty (scikit-learn's ``Lasso``), positive.
        embedder: The proposal's embedder (``e5``, ``hashing`` or ``openai``); default:
            CMI's under the protocol (``hashing`` under paper, ``e5`` under blind).
    """

    name = "context_cite"
    Details = ContextCiteDetails

    def __init__(
        self,
        k: int = 3,
        ablations: int = 16,
        threshold: float | str = 0.0,
        alpha: float = 0.01,
        embedder: str | None = None,
    ) -> None:
        super().__init__(k, threshold, embedder)
        self.ablations = positive_int("ablations", ablations, 2)
        self.alpha = finite_float("alpha", alpha, 1e-6)
        self.lasso = require("fit", "Strategy 'context_cite'", "sklearn.linear_model").Lasso

    async def attribute(
        self, request: str, memories: list[Memory], logprob: AnswerLogprob
    ) -> tuple[list[float], dict[str, Any]]:
        """The LASSO's coefficients of the answer's log-probability on the masks."""
        seed = "\x00".join([request, *(m.key for m in memories)])
        masks = ablation_masks(len(memories), self.ablations, random.Random(seed))
        targets = [
            await logprob(context(request, [m for m, on in zip(memories, mask, strict=True) if on]))
            for mask in masks
        ]
        fit = self.lasso(alpha=self.alpha).fit(np.array(masks, dtype=float), np.array(targets))
        record = {
            "ablations": len(masks),
            "subsets_scored": len(set(masks)),
            "alpha": self.alpha,
            "intercept": float(fit.intercept_),
        }
        return [float(w) for w in fit.coef_], record
