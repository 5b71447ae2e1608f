"""Sample-quality metrics with known sensitivity (lower is better unless said otherwise).

- :func:`sliced_wasserstein`: SW₂ (Bonneel et al. 2015): the root mean over random unit
  directions θ of W₂² between the 1-D projections, computed from sorted projections
  (empirical quantile functions on a common grid, so n ≠ m is allowed).
- :func:`exact_w2`: W₂ between equal-size random subsamples, by an optimal assignment of
  squared Euclidean costs (``scipy.optimize.linear_sum_assignment``); exact for the
  subsamples, a consistent estimate of W₂ as the subsample grows.
- :func:`mmd2`: the unbiased MMD² (Gretton et al. 2012, eq. 3) with a sum of Gaussian
  kernels at bandwidths h·{½, 1, 2}, h the median pairwise distance of the reference
  set (fixed per reference, so models are compared on the same kernel). Kernel sums
  come from ``iclr25.gpu.kernels.mmd`` (CUDA kernel or tiled torch).
- :func:`frechet_distance`: ‖μ₁-μ₂‖² + Tr(Σ₁ + Σ₂ - 2(Σ₁Σ₂)^½) between Gaussian fits of
  two feature sets (Heusel et al. 2017, the FID formula).
- :func:`precision_recall`: improved precision and recall (Kynkäänniemi et al. 2019):
  the share of generated points inside the union of k-NN balls of the real points, and
  vice versa (higher is better). Recall is inflated towards 1 when the generated points
  are spread far apart (their k-NN balls are then large and swallow the real points).
- :func:`density_coverage`: density and coverage (Naeem et al. 2020, eq. 3–4): the mean
  number of real k-NN balls a generated point falls in, divided by k, and the share of
  real points whose own k-NN ball contains a generated point. Both use only the real
  points' balls, so outliers among the generated points cannot inflate them.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.optimize import linear_sum_assignment

from iclr25.gpu.kernels.mmd import rbf_kernel_sums
from iclr25.gpu.kernels.pairwise_sqdist import pairwise_sqdist

BANDWIDTH_FACTORS = (0.5, 1.0, 2.0)


def _flat(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(x.shape[0], -1)  # (n, d)


def _quantiles(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Empirical quantile function of each column of sorted ``values`` at ``grid``."""
    n = values.shape[0]
    index = np.minimum((grid * n).astype(int), n - 1)
    return values[index]


def sliced_wasserstein(
    x, y, n_projections: int = 256, seed: int = 0, n_quantiles: int = 1000
) -> float:
    """SW₂(x, y) over ``n_projections`` random directions (seeded)."""
    x, y = _flat(x), _flat(y)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(x.shape[1], n_projections))
    theta /= np.linalg.norm(theta, axis=0, keepdims=True)  # (d, L) unit columns
    px, py = np.sort(x @ theta, axis=0), np.sort(y @ theta, axis=0)  # (n, L), (m, L)
    if px.shape[0] == py.shape[0]:
        return float(np.sqrt(np.mean((px - py) ** 2)))
    grid = (np.arange(n_quantiles) + 0.5) / n_quantiles
    return float(np.sqrt(np.mean((_quantiles(px, grid) - _quantiles(py, grid)) ** 2)))


def exact_w2(x, y, n_sub: int = 1000, seed: int = 0) -> float:
    """W₂ between random subsamples of size min(n_sub, n, m), by optimal assignment."""
    x, y = _flat(x), _flat(y)
    k = min(n_sub, x.shape[0], y.shape[0])
    rng = np.random.default_rng(seed)
    xs = x[rng.choice(x.shape[0], k, replace=False)]
    ys = y[rng.choice(y.shape[0], k, replace=False)]
    cost = pairwise_sqdist(xs, ys)  # (k, k)
    rows, cols = linear_sum_assignment(cost)
    return float(np.sqrt(cost[rows, cols].mean()))


def median_bandwidth(reference, max_points: int = 1000, seed: int = 0) -> float:
    """Median pairwise distance among (up to ``max_points`` of) the reference points."""
    ref = _flat(reference)
    rng = np.random.default_rng(seed)
    if ref.shape[0] > max_points:
        ref = ref[rng.choice(ref.shape[0], max_points, replace=False)]
    sq = pairwise_sqdist(ref)
    upper = sq[np.triu_indices(ref.shape[0], k=1)]
    h = float(np.sqrt(np.median(upper))) if upper.size else 1.0
    return h if h > 0 else 1.0


def mmd2(x, y, bandwidth: float, device: str = "cpu") -> float:
    """Unbiased MMD² with k = Σ_b exp(-‖·‖²/(2 (f_b h)²)), f_b in {½, 1, 2}."""
    x, y = _flat(x), _flat(y)
    n, m = x.shape[0], y.shape[0]
    if n < 2 or m < 2:
        raise ValueError("the unbiased MMD needs at least 2 points on each side")
    gammas = np.array([1.0 / (2 * (f * bandwidth) ** 2) for f in BANDWIDTH_FACTORS])
    nb = len(gammas)
    s_xx = rbf_kernel_sums(x, x, gammas, device).sum() - n * nb  # drop k(x_i, x_i) = 1
    s_yy = rbf_kernel_sums(y, y, gammas, device).sum() - m * nb
    s_xy = rbf_kernel_sums(x, y, gammas, device).sum()
    return float(s_xx / (n * (n - 1)) + s_yy / (m * (m - 1)) - 2 * s_xy / (n * m))


def frechet_distance(features_a, features_b) -> float:
    """Fréchet distance between Gaussian fits of two (n, k) feature sets."""
    a, b = _flat(features_a), _flat(features_b)
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    cov_a, cov_b = np.atleast_2d(cov_a), np.atleast_2d(cov_b)
    root = linalg.sqrtm(cov_a @ cov_b)
    if not np.isfinite(root).all():  # singular product: regularise as in the FID code
        offset = np.eye(cov_a.shape[0]) * 1e-6
        root = linalg.sqrtm((cov_a + offset) @ (cov_b + offset))
    root = np.real(root)
    value = np.sum((mu_a - mu_b) ** 2) + np.trace(cov_a) + np.trace(cov_b) - 2 * np.trace(root)
    return float(max(value, 0.0))


def _knn_radii(points: np.ndarray, k: int) -> np.ndarray:
    """Squared distance of every point to its k-th nearest other point."""
    sq = pairwise_sqdist(points)  # (n, n)
    np.fill_diagonal(sq, np.inf)
    k = min(k, points.shape[0] - 1)
    return np.partition(sq, k - 1, axis=1)[:, k - 1]


def _coverage(queries: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> float:
    """Share of queries inside at least one ball (centre_j, radius_j)."""
    sq = pairwise_sqdist(queries, centres)  # (q, c)
    return float(np.mean((sq <= radii[None, :]).any(axis=1)))


def precision_recall(real_features, fake_features, k: int = 3) -> tuple[float, float]:
    """(precision, recall) of generated features against real ones, k-NN manifolds."""
    real, fake = _flat(real_features), _flat(fake_features)
    if real.shape[0] < 2 or fake.shape[0] < 2:
        raise ValueError("precision/recall need at least 2 real and 2 generated points")
    precision = _coverage(fake, real, _knn_radii(real, k))
    recall = _coverage(real, fake, _knn_radii(fake, k))
    return precision, recall


def density_coverage(real_features, fake_features, k: int = 3) -> tuple[float, float]:
    """(density, coverage) of generated features against real ones (Naeem et al. 2020)."""
    real, fake = _flat(real_features), _flat(fake_features)
    if real.shape[0] < 2 or fake.shape[0] < 1:
        raise ValueError("density/coverage need at least 2 real and 1 generated point")
    radii = _knn_radii(real, k)  # (n_real,)
    inside = pairwise_sqdist(fake, real) <= radii[None, :]  # (n_fake, n_real)
    density = float(inside.sum() / (k * fake.shape[0]))
    coverage = float(inside.any(axis=0).mean())
    return density, coverage
