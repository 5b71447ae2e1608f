"""Metrics on known cases, and the ranking of corrupted samples."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from iclr25.core.diffusion_at import metrics
from iclr25.core.diffusion_at.data import load_dataset
from iclr25.core.diffusion_at.evaluation import EvalConfig, Evaluator
from iclr25.testing import assert_close

RNG = np.random.default_rng


def test_sliced_wasserstein_of_a_translation():
    # projections of x + v are those of x shifted by θ·v: SW₂² = mean_θ (θ·v)² exactly, and
    # E_θ (θ·v)² = |v|²/d for θ uniform on the sphere (d = 2 → |v|/√2 ≈ 0.7071 for |v| = 1)
    x = RNG(0).normal(size=(500, 2))
    v = np.array([0.6, 0.8])
    sw = metrics.sliced_wasserstein(x, x + v, n_projections=4000, seed=1)
    assert sw == pytest.approx(1 / math.sqrt(2), rel=0.02)
    assert metrics.sliced_wasserstein(x, x, seed=1) == 0.0


def test_sliced_wasserstein_unequal_sizes():
    a, b = RNG(1).normal(size=(3000, 2)), RNG(2).normal(size=(2000, 2))
    assert metrics.sliced_wasserstein(a, b) < 0.08
    assert metrics.sliced_wasserstein(a, b + 1.0) > 0.9


def test_exact_w2_of_a_translation_is_its_length():
    # W₂(μ, μ + v) = |v| (translations are optimal for the quadratic cost)
    x = RNG(3).normal(size=(200, 3))
    v = np.array([1.0, 2.0, 2.0])
    assert_close(metrics.exact_w2(x, x + v, n_sub=200), 3.0, rtol=1e-9)
    # on two point masses it is their distance
    assert_close(metrics.exact_w2(np.zeros((5, 2)), np.ones((5, 2)), n_sub=5), math.sqrt(2))


def test_mmd_matches_its_definition_and_is_unbiased():
    x, y = RNG(4).normal(size=(40, 2)), RNG(5).normal(size=(30, 2)) + 0.5
    h = 0.9
    k = sum(
        np.exp(-((a[:, None] - b[None]) ** 2).sum(-1) / (2 * (f * h) ** 2))
        for f in metrics.BANDWIDTH_FACTORS
        for a, b in [(x, y)]
    )
    kxx = sum(
        np.exp(-((x[:, None] - x[None]) ** 2).sum(-1) / (2 * (f * h) ** 2))
        for f in metrics.BANDWIDTH_FACTORS
    )
    kyy = sum(
        np.exp(-((y[:, None] - y[None]) ** 2).sum(-1) / (2 * (f * h) ** 2))
        for f in metrics.BANDWIDTH_FACTORS
    )
    n, m = len(x), len(y)
    expected = (
        (kxx.sum() - np.trace(kxx)) / (n * (n - 1))
        + (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
        - 2 * k.mean()
    )
    assert_close(metrics.mmd2(x, y, h), expected, rtol=1e-10)
    same = [
        metrics.mmd2(RNG(s).normal(size=(300, 2)), RNG(s + 100).normal(size=(300, 2)), 1.0)
        for s in range(20)
    ]
    assert abs(np.mean(same)) < 3 * np.std(same) / math.sqrt(20)  # zero mean under H0


def test_frechet_distance_closed_forms():
    a = RNG(6).normal(size=(4000, 3))
    # equal covariances: FD = |Δμ|²
    assert_close(metrics.frechet_distance(a, a + np.array([1.0, 0.0, 2.0])), 5.0, rtol=1e-6)
    # N(0, I) vs N(0, 4 I) in 3-D: Tr(I + 4I - 2·2I) = 3 (up to sampling error)
    b = 2 * RNG(7).normal(size=(4000, 3))
    assert metrics.frechet_distance(a, b) == pytest.approx(3.0, rel=0.1)


def test_precision_recall_known_cases():
    real = RNG(8).normal(size=(400, 2))
    assert metrics.precision_recall(real, real) == (1.0, 1.0)
    far = real + 100
    assert metrics.precision_recall(real, far) == (0.0, 0.0)
    half = real[real[:, 0] > 0]  # generated points cover half the real set: recall ≈ 0.5
    precision, recall = metrics.precision_recall(real, half)
    assert precision == 1.0 and 0.4 < recall < 0.65


@pytest.fixture(scope="module")
def toy_evaluator():
    return Evaluator(load_dataset("8gaussians"), EvalConfig(1000, 1000, 500, seed=0))


def _corruptions(clean: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {
        "noisy": clean + 0.5 * torch.randn(clean.shape, generator=gen),
        "shrunk": 0.6 * clean,  # modes pulled towards the mean (what few-step sampling does)
        "dropped": clean[(torch.atan2(clean[:, 1], clean[:, 0]) > 0)].repeat(2, 1)[: len(clean)],
    }


def test_point_metrics_rank_corrupted_samples_worse(toy_evaluator):
    gen = torch.Generator().manual_seed(11)
    clean = toy_evaluator.dataset.sample(1000, gen)
    scores = toy_evaluator(clean)
    for name, bad in _corruptions(clean, gen).items():
        worse = toy_evaluator(bad)
        for metric in ("sw", "w2", "mmd"):
            assert worse[metric] > scores[metric], (name, metric, worse[metric], scores[metric])


def test_digit_metrics_rank_corrupted_samples_worse():
    ds = load_dataset("digits")
    evaluator = Evaluator(ds, EvalConfig(600, 1000, seed=0))
    assert evaluator.feature_space == "digit-classifier"
    gen = torch.Generator().manual_seed(12)
    clean = ds.sample(600, gen)
    noisy = (clean + 0.6 * torch.randn(clean.shape, generator=gen)).clamp(-1, 1)
    blurred = torch.nn.functional.avg_pool2d(clean, 3, 1, 1)
    zeros_only = ds.array[torch.from_numpy(np.asarray(load_digits_targets()) == 0)][:600]
    good = evaluator(clean)
    for name, bad in {"noisy": noisy, "blurred": blurred}.items():
        worse = evaluator(bad)
        assert worse["fd"] > good["fd"] and worse["mmd"] > good["mmd"], name
        assert worse["precision"] < good["precision"], name
    one_class = evaluator(zeros_only)  # mode collapse: precision stays, recall collapses
    assert one_class["recall"] < 0.5 * good["recall"] and one_class["fd"] > good["fd"]


def load_digits_targets():
    from sklearn.datasets import load_digits

    return load_digits().target


def test_non_finite_samples_give_nan(toy_evaluator):
    bad = torch.full((10, 2), float("nan"))
    assert all(math.isnan(v) for v in toy_evaluator(bad).values())


def test_density_coverage_known_cases():
    real = RNG(13).normal(size=(400, 2))
    assert metrics.density_coverage(real, real)[1] == 1.0
    assert metrics.density_coverage(real, real + 100) == (0.0, 0.0)
    half = real[real[:, 0] > 0]
    assert 0.4 < metrics.density_coverage(real, half)[1] < 0.65


def _digit_sets():
    """Two disjoint halves of the digits, and Gaussian noise images, as classifier features."""
    from iclr25.core.diffusion_at.classifier import digit_features

    ds = load_dataset("digits")
    order = torch.randperm(ds.size, generator=torch.Generator().manual_seed(0))
    a, b = ds.array[order[:800]], ds.array[order[800:1600]]
    noise = torch.randn(800, 1, 8, 8, generator=torch.Generator().manual_seed(1)).clamp(-1, 1)
    return digit_features(a), digit_features(b), digit_features(noise)


def test_image_precision_recall_on_known_cases():
    # the sanity cases in the classifier's feature space: real vs real ≈ 1/1 (k-NN
    # manifolds of 800 points: measured 0.90 / 0.92), real vs Gaussian noise ≈ 0/0
    real_a, real_b, noise = _digit_sets()
    precision, recall = metrics.precision_recall(real_a, real_b)
    assert precision > 0.85 and recall > 0.85
    assert max(metrics.precision_recall(real_a, noise)) < 0.1
    density, coverage = metrics.density_coverage(real_a, real_b)
    assert 0.8 < density < 1.2 and coverage > 0.85
    assert max(metrics.density_coverage(real_a, noise)) < 0.1
    assert metrics.frechet_distance(real_b, real_a) < 0.1 * metrics.frechet_distance(noise, real_a)


def test_coverage_is_not_fooled_by_spread_out_samples_as_recall_is():
    # an under-trained model's samples spread far apart: their k-NN balls are huge, so
    # recall → 1 though few samples are near the data; coverage uses the real balls
    real = RNG(14).normal(size=(400, 2))
    spread = RNG(15).normal(size=(400, 2)) * 30
    precision, recall = metrics.precision_recall(real, spread)
    _, coverage = metrics.density_coverage(real, spread)
    assert recall > 0.9 and precision < 0.1 and coverage < 0.1
