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
