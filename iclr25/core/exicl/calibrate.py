"""How far the generative diffusion verifier (GDV) can be trusted: its verdicts against the
exact ones on many candidate masks (``exicl calibrate``).

Candidates (half each, drawn with ``seed``):

- **perturbed**: the hidden constraint with a random share (5–40 %) of the relevant
  region's cells flipped — near the feasible set's boundary, where verdicts are hard;
- **random**: Bernoulli masks of density 5–40 % over the relevant region.

Each is cut to the most restrictive consistent mask (cells the demonstrations need stay
open), as recovered constraints are. The GDV sees a mask as φ = :class:`.feasibility.
MaskPermissibility` (±6 logits) with λ = ``lam``, and samples ``gdv_samples`` guided
trajectories per demonstration, ``batch`` masks per sampler call (:func:`.exicl.gdv_check`)
— the rule ExICL's acceptance applies to each candidate's decoded mask, so the precision
and recall measured here are those of the acceptance.
"Positive" = feasible: ``precision`` = P(exact feasible | GDV feasible), ``recall`` =
P(GDV feasible | exact feasible); None when undefined (no positive).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CalibrateConfig:
    candidates: int = 2000
    batch: int = 16  # masks per batched guided sampling
    lam: float = 1.0  # λ of every candidate's guided sampling (= ExiclConfig.gdv_lambda)
    gdv_samples: int = 4  # guided samples per demonstration
    tolerance: float = 0.10


def candidate_masks(hidden: np.ndarray, region: np.ndarray, allowed: np.ndarray, n: int,
                    seed: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(masks (n, H, W), kind (n,) 0 = perturbed, 1 = random)."""
    rng = np.random.default_rng(seed)
    kind = np.arange(n) % 2
    rate = rng.uniform(0.05, 0.40, n)[:, None, None]  # (n, 1, 1)
    coin = rng.random((n, *hidden.shape)) < rate  # (n, H, W)
    masks = np.where(kind[:, None, None] == 0, hidden[None] ^ (coin & region[None]),
                     coin & region[None])  # fmt: skip
    return masks & allowed[None], kind


def precision_recall(exact: np.ndarray, gdv: np.ndarray) -> dict:
    tp = int((exact & gdv).sum())
    return {
        "precision": tp / int(gdv.sum()) if gdv.any() else None,
        "recall": tp / int(exact.sum()) if exact.any() else None,
        "agreement": float(np.mean(exact == gdv)),
        "exact_feasible": int(exact.sum()),
        "gdv_feasible": int(gdv.sum()),
    }


def calibrate(problem, prior, config: CalibrateConfig, seed: int, on_batch=None) -> dict:
    """Exact and GDV verdicts of ``config.candidates`` masks → precision, recall (overall
    and per candidate kind)."""
    from iclr25.core.exicl.exicl import ExiclConfig, gdv_check
    from iclr25.core.exicl.feasibility import MaskPermissibility
    from iclr25.core.exicl.verifier import most_restrictive_mask, relevant_region, verify

    spec, demos = problem.spec, problem.demos
    region = relevant_region(spec, demos)
    hidden = problem.hidden if problem.hidden is not None else np.zeros_like(region)
    allowed = most_restrictive_mask(spec, demos)
    masks, kind = candidate_masks(hidden, region, allowed, config.candidates, seed)
    exact = verify(spec, demos, masks, config.tolerance).feasible
    ex_cfg = ExiclConfig(gdv_samples=config.gdv_samples, tolerance=config.tolerance)
    gdv = np.zeros(len(masks), dtype=bool)
    for lo in range(0, len(masks), config.batch):
        chunk = masks[lo : lo + config.batch]  # (b, H, W)
        lams = np.full(len(chunk), config.lam)
        v = gdv_check(spec, demos, prior, MaskPermissibility(chunk), lams, chunk, ex_cfg,
                      seed + lo, len(chunk))  # fmt: skip
        gdv[lo : lo + len(chunk)] = v.feasible
        if on_batch is not None:
            on_batch(len(chunk))
    out = precision_recall(exact, gdv)
    out["by_kind"] = {name: precision_recall(exact[kind == j], gdv[kind == j])
                      for j, name in enumerate(("perturbed", "random"))}  # fmt: skip
    out["candidates"] = int(len(masks))
    return out
