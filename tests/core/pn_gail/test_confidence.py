"""The vectorised classifier risks against the one-pair formula, weighted elementwise."""

from __future__ import annotations

import numpy as np
import torch

from iclr25.core.pn_gail import confidence as cm
from iclr25.testing import assert_close


def one_pair_balanced(g_c: float, r: float, g_u: torch.Tensor, beta: float) -> float:
    """The official form: SoftMarginLoss (averaged) on ONE labelled pair, times r."""
    sm = torch.nn.SoftMarginLoss()
    gc = torch.tensor([g_c])
    pos, neg = sm(gc, torch.ones(1)), sm(gc, -torch.ones(1))
    labeled = r * pos + (1 - r) * neg
    corr = beta * (sm(g_u, torch.ones_like(g_u)) - pos) + beta * (
        sm(g_u, -torch.ones_like(g_u)) - neg
    )
    return float(labeled + corr.clamp(-0.01, 0.01))


def test_vectorised_balanced_risk_equals_one_pair_formula():
    g_u = torch.tensor([0.3, -1.2, 2.0, 0.1])
    for g_c, r in [(0.7, 0.9), (-1.5, 0.2), (0.0, 0.5)]:
        ours = cm.balanced_risk(torch.tensor([g_c]), torch.tensor([r]), g_u, beta=0.8)
        assert_close(ours, one_pair_balanced(g_c, r, g_u, 0.8), rtol=1e-6)


def test_batched_risk_weights_each_pair_by_its_own_confidence():
    """Labelled terms are mean[r ℓ(g) + (1 − r) ℓ(−g)] pair by pair, not r̄ · mean ℓ."""
    g_c, r_c = torch.tensor([2.0, -2.0]), torch.tensor([1.0, 0.0])
    g_u = torch.tensor([0.0])
    risk = cm.balanced_risk(g_c, r_c, g_u, beta=0.0)  # β = 0: the labelled part alone
    by_hand = 0.5 * (np.log1p(np.exp(-2.0)) + np.log1p(np.exp(-2.0)))
    assert_close(risk, by_hand, rtol=1e-6)
    naive = float(r_c.mean() * cm.ell(g_c).mean() + (1 - r_c.mean()) * cm.ell(-g_c).mean())
    assert abs(float(risk) - naive) > 0.5  # the one-pair code's weighting, batched, is wrong


def test_semi_conf_risk_by_hand_both_sides():
    g_c, r_c, g_u = torch.tensor([1.0]), torch.tensor([0.8]), torch.tensor([-0.5, 0.5])
    ell = lambda z: float(np.log1p(np.exp(-z)))  # noqa: E731
    beta = 0.8
    up = (0.8 - beta) * ell(1.0) + beta * np.mean([ell(-0.5), ell(0.5)])
    up += (1 - 0.8) * ell(-1.0)
    assert_close(cm.semi_conf_risk(g_c, r_c, g_u, beta, up=True), up, rtol=1e-6)
    down_pos = 0.8 * ell(1.0)
    down_neg = max(0.0, (1 - beta - 0.8) * ell(-1.0) + beta * np.mean([ell(0.5), ell(-0.5)]))
    assert_close(cm.semi_conf_risk(g_c, r_c, g_u, beta, up=False), down_pos + down_neg, rtol=1e-6)


def test_classifier_separates_two_clusters():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(-2, 0.5, (300, 2)), rng.normal(2, 0.5, (300, 2))])
    truth = np.r_[np.full(300, 0.1), np.full(300, 0.9)]
    labeled = np.zeros(600, dtype=bool)
    labeled[rng.choice(600, 120, replace=False)] = True
    r = np.where(labeled, truth, np.nan)
    for kind in cm.KINDS:
        config = cm.ClassifierConfig(kind=kind, steps=300)
        predicted = cm.fit_confidence(x, r, labeled, config, seed=0)
        assert_close(predicted[labeled], truth[labeled], atol=0)  # given r kept
        q = cm.quality(predicted, truth, labeled)
        assert q["correlation"] > 0.8, (kind, q)
        assert predicted[300:][~labeled[300:]].mean() > predicted[:300][~labeled[:300]].mean() + 0.3


def test_dropout_masks_keep_each_unit_with_probability_one_minus_p():
    """The vectorised classifier's masks follow ``nn.Dropout``'s training rule: a unit is
    kept with probability 1 − p and scaled by 1 / (1 − p); p = 0.5 draws one bit a unit."""
    rng = np.random.default_rng(0)
    for p in (0.5, 0.2):
        masks = cm.dropout_masks(rng, (2, 1000, 40), p).numpy()  # 80,000 coins
        assert masks.shape == (2, 1000, 40) and masks.dtype == np.float32
        assert set(np.unique(masks).tolist()) == {0.0, float(np.float32(1 / (1 - p)))}
        kept = masks > 0
        assert abs(kept.mean() - (1 - p)) < 0.01  # sd 0.0018
        per_unit = kept.mean(axis=1)  # (2, 40): 1,000 coins each, sd ≤ 0.016
        assert np.abs(per_unit - (1 - p)).max() < 0.08
        assert not np.array_equal(masks[0], masks[1])  # two layers, two draws
    assert cm.dropout_masks(rng, (2, 3, 4), 0.0) is None


def test_training_forward_with_all_units_kept_is_the_network():
    """``_train_forward`` with masks of ones (and without masks) is the classifier in eval
    mode (no dropout): the vectorised path runs the official network."""
    torch.manual_seed(0)
    config = cm.ClassifierConfig()
    model = cm._classifier(5, config).eval()
    layers = (model[0], model[3], model[6])
    x = torch.randn(7, 5)
    with torch.no_grad():
        want = model(x).squeeze(-1)
        assert_close(cm._train_forward(layers, x, torch.ones(2, 7, config.hidden)), want)
        assert_close(cm._train_forward(layers, x, None), want)
        half = cm._train_forward(layers, x, torch.zeros(2, 7, config.hidden))
    assert_close(half, model[6].bias.expand(7))  # every unit dropped: the last bias alone
