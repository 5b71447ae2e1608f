"""Preview samples after training, within a time budget.

`train --out` draws samples at two NFEs for ``samples.png``. Drawing 2000 images at NFE 5
and 20 once took ten times longer than a 30-step training run, so by default the preview
gets at most :data:`BUDGET_FRACTION` of the training time: a probe draws a few samples at
the first NFE, the cost per sample and function evaluation is taken from it (an
overestimate for larger batches, so the budget errs on the safe side), and the preview
draws as many samples as fit in what is left — at most the cap (2000 points; 64 images,
the most the figure shows), and none when not even one fits. The probe counts against
the budget. ``--preview N`` asks for exactly N (0: none).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

BUDGET_FRACTION = 0.1  # of the training time
CAP = {"points": 2000, "image": 64}
PROBE_N = 8


@dataclass(frozen=True)
class PreviewPlan:
    n: int  # samples per preview sampler
    probe_s: float  # time the probe took (0 without a probe)
    budget_s: float | None  # None when --preview N was given


def preview_count(
    budget_s: float, probe_s: float, per_sample_nfe_s: float, nfe_total: int, cap: int
) -> int:
    """How many samples per sampler fit in ``budget_s`` − ``probe_s`` (0..cap)."""
    left = budget_s - probe_s
    if left <= 0 or per_sample_nfe_s <= 0 or nfe_total <= 0:
        return 0 if left <= 0 else cap
    return max(0, min(cap, math.floor(left / (per_sample_nfe_s * nfe_total))))


def plan_preview(
    train_s: float,
    kind: str,
    nfes: list[int],
    draw: Callable[[int, int], object],
    requested: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> PreviewPlan:
    """The number of preview samples: ``requested`` if given, else the budget rule above.

    ``draw(n, nfe)`` draws n samples at the given NFE (the probe calls it once)."""
    if requested is not None:
        return PreviewPlan(requested, 0.0, None)
    budget = BUDGET_FRACTION * train_s
    t0 = clock()
    draw(PROBE_N, nfes[0])
    probe_s = clock() - t0
    per = probe_s / (PROBE_N * nfes[0])
    return PreviewPlan(preview_count(budget, probe_s, per, sum(nfes), CAP[kind]), probe_s, budget)
