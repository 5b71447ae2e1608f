"""The compare study in 2-D (``--dim 2``): each method's estimate on (0,1)².

Same study as :mod:`.compare` (tasks, intervals, floor check, labels_to_match, verdict);
only the per-(seed, method) estimate differs. Data: the 2-D generator of :mod:`.bayes2d`
(f from the Matérn GRF on the fine grid, u by the 5-point solve, ``side × side`` sensors);
errors on the methods' (cells + 1)² grid with 2-D trapezoid weights. Methods: PI-DION
(:func:`.train2d.train_pi_dion_2d`, label-free), the supervised CNN DeepONet
(:func:`.train2d.train_supervised_2d`, same recipe), 2-D Tikhonov (:mod:`.tikhonov2d`, α
by the discrepancy principle with the generator's σ, α search included in its time) and
the exact Bayes mean (:func:`.bayes2d.gains`).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from iclr25.core.pi_dion import bayes2d, saved, tikhonov, tikhonov2d, train, train2d


@dataclass
class Data2D:
    x: np.ndarray  # (m, 2) sensors, row-major
    d: np.ndarray  # (N, m)
    pts: np.ndarray  # (G, 2) the methods' grid points, row-major
    f: np.ndarray  # (N, G)
    u: np.ndarray  # (N, G)
    noise_std: float


def grid_points(layout: bayes2d.Layout2D) -> np.ndarray:
    s = np.linspace(0.0, 1.0, layout.cells + 1)
    x, y = np.meshgrid(s, s, indexing="ij")
    return np.stack([x.ravel(), y.ravel()], axis=1)


def rel_l2(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per-instance relative L² error on the square grid (2-D trapezoid weights) → (N,)."""
    side = round(np.sqrt(truth.shape[-1]))
    w1 = np.ones(side)
    w1[[0, -1]] = 0.5
    w = np.outer(w1, w1).ravel()
    num = np.sqrt(((estimate - truth) ** 2 * w).sum(-1))
    return num / np.maximum(np.sqrt((truth**2 * w).sum(-1)), 1e-300)


def operators(p, layout: bayes2d.Layout2D) -> bayes2d.Operators2D:
    """The prior operators (~9 CPU-s at the default layout): kept for the last two
    problems, so a worker that runs several of a study's tasks builds them once."""
    return _operators(layout, p.c, p.nu, p.ell, p.noise)


@functools.lru_cache(maxsize=2)
def _operators(layout, c: float, nu: float, ell: float, noise: float) -> bayes2d.Operators2D:
    ops = bayes2d.operators(layout, c, nu, ell, noise)
    for shared in (ops.c_ht, ops.hch, ops.u_cov):
        shared.flags.writeable = False  # one copy serves every task of the worker
    return ops


def generate(p, layout, ops, n: int, rng: np.random.Generator) -> Data2D:
    d, f, u = bayes2d.generate(layout, p.c, p.nu, p.ell, ops, n, rng)
    return Data2D(layout.sensors(), d, grid_points(layout), f, u, ops.noise_std)


def estimate(method: str, cfg, seed: int, data_seed: int, test: Data2D, p, layout, ops):
    """(u or None, f, inference seconds, training loss or None) of one method on the test
    data, as :func:`.compare._estimate` (a PI-DION in ``cfg.model`` is loaded, not trained)."""
    if method == "bayes":
        k_f, k_u = bayes2d.gains(layout, ops)
        start = time.perf_counter()
        u, f = test.d @ k_u.T, test.d @ k_f.T
        return u, f, time.perf_counter() - start, None
    if method == "tikhonov":
        start = time.perf_counter()
        solver = tikhonov2d.build(test.x, p.c, layout.cells)
        log_alpha = tikhonov.choose_alpha(solver, test.d, test.noise_std)
        f, u = tikhonov2d.solve(solver, test.d, log_alpha, layout.cells)
        return u, f, time.perf_counter() - start, None
    losses: list[float] = []
    final = None
    if method == "pi_dion" and getattr(cfg, "model", None):  # a trained model, scored as is
        model = saved.load(saved.resolve(cfg.model, dim=2)).model
    elif method == "pi_dion":
        data = generate(p, layout, ops, cfg.n_train, np.random.default_rng(data_seed))
        model, final = train2d.train_pi_dion_2d(data.d, data.x, p.c, cfg.train, seed,
                                                on_loss=losses.append)  # fmt: skip
    else:
        data = generate(p, layout, ops, cfg.n_train, np.random.default_rng(data_seed))
        n = int(method.removeprefix("supervised_N"))
        model, final = train2d.train_supervised_2d(data.d[:n], data.x, data.f[:n], data.pts,
                                                   p.c, cfg.train, seed,
                                                   on_loss=losses.append)  # fmt: skip
    start = time.perf_counter()
    u, f = train2d.predict_2d(model, test.d, test.x, test.pts)
    trained = train.loss_curve(losses, final)
    return (u if method == "pi_dion" else None), f, time.perf_counter() - start, trained
