"""Controls' exact denoisers against enumeration; saturated RHM; density evolution vs BP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from iclr25.core.diffusion_probe import bp
from iclr25.core.diffusion_probe import density_evolution as de
from iclr25.core.diffusion_probe.controls import IndependentTokens, MarkovChain
from iclr25.core.diffusion_probe.noise import leaf_messages
from iclr25.core.diffusion_probe.observables import change_stats
from iclr25.core.diffusion_probe.rhm import RHMSpec, generate, sample_rules


def test_markov_ffbs_samples_the_enumerated_posterior():
    rng = np.random.default_rng(0)
    v, d = 3, 4
    chain = MarkovChain(rng.dirichlet(np.ones(v)), rng.dirichlet(np.ones(v), size=(d - 1, v)))
    evidence = rng.random((1, d, v))
    post = {}
    for seq in itertools.product(range(v), repeat=d):
        p = chain.initial[seq[0]] * np.prod([evidence[0, i, a] for i, a in enumerate(seq)])
        p *= np.prod([chain.transitions[i][seq[i], seq[i + 1]] for i in range(d - 1)])
        post[seq] = p
    total = sum(post.values())
    n = 30_000
    draws = chain.denoise(np.repeat(evidence, n, axis=0), np.random.default_rng(1))
    keys, counts = np.unique(draws, axis=0, return_counts=True)
    observed = dict(zip(map(tuple, keys), counts, strict=True))
    support = sorted(post)
    expected = np.array([post[k] / total * n for k in support])
    got = np.array([observed.get(k, 0) for k in support])
    keep = expected >= 5
    test = stats.chisquare(got[keep], expected[keep] * got[keep].sum() / expected[keep].sum())
    assert test.pvalue > 1e-3


def test_markov_fit_recovers_a_known_chain():
    rng = np.random.default_rng(2)
    truth = MarkovChain(np.array([0.7, 0.3]), np.array([[[0.9, 0.1], [0.2, 0.8]]] * 3))
    fitted = MarkovChain.fit(truth.generate(50_000, rng), 2)
    np.testing.assert_allclose(fitted.transitions, truth.transitions, atol=0.01)
    np.testing.assert_allclose(fitted.initial, truth.initial, atol=0.01)


def test_iid_control_gives_chi_norm_one():
    rng = np.random.default_rng(3)
    grammar = sample_rules(RHMSpec(9, 6, 3, 3), rng)
    model = IndependentTokens.fit(generate(grammar, 20_000, rng)[0], 9)
    x0 = model.generate(4000, rng)
    msg, _ = leaf_messages("flip", x0, 9, 0.5, rng)
    assert change_stats(model.denoise(msg, rng) != x0)["chi_norm"] == pytest.approx(1, abs=0.05)


def test_saturated_rhm_carries_no_structure():
    """m = v^(s−1): every tuple is a rule, leaves are iid uniform, χ̃ = 1 ± 0.05."""
    rng = np.random.default_rng(4)
    grammar = sample_rules(RHMSpec(v=3, m=9, s=3, depth=3), rng)
    x0, _ = generate(grammar, 6000, rng)
    for level in (0.3, 0.6):
        msg, _ = leaf_messages("flip", x0, 3, level, rng)
        x, _ = bp.sample(grammar, bp.upward(grammar, msg), rng.random((6000, 14)))
        assert change_stats(x != x0)["chi_norm"] == pytest.approx(1.0, abs=0.05)


@pytest.mark.parametrize(
    "noise,level,depth", [("mask", 0.6, 4), ("flip", 0.4, 4), ("mask", 0.5, 3), ("flip", 0.3, 3)]
)
def test_forward_backward_root_agreement_matches_density_evolution(noise, level, depth):
    """E[posterior of the true root] from BP on 4 rule instances vs DE after L levels."""
    spec = RHMSpec(9, 6, 3, depth)
    agreements = []
    for instance in range(4):
        rng = np.random.default_rng(100 + instance)
        grammar = sample_rules(spec, rng)
        x0, root0 = generate(grammar, 1500, rng)
        msg, _ = leaf_messages(noise, x0, 9, level, rng)
        post = bp.root_posterior(grammar, bp.upward(grammar, msg))
        agreements.append(float(post[np.arange(1500), root0].mean()))
    predicted = de.root_agreement(spec, noise, level, depth, population=20_000, seed=7)
    assert abs(np.mean(agreements) - predicted) < 0.06


def test_density_evolution_threshold_of_a_known_case():
    """(9, 6, 3), flip: ε* ≈ 0.49 (the paper note's density evolution, population 2·10⁴).
    A cheap configuration must land within 0.04 and bracket a transition."""
    config = de.DEConfig(population=4000, levels=30, precision=0.02, seeds=1)
    out = de.threshold(RHMSpec(9, 6, 3, 1), "flip", config, seed=0)
    assert out["threshold"] == pytest.approx(0.49, abs=0.04)


def test_no_transition_is_reported_as_none(monkeypatch):
    """When the overlap survives even full noise (or dies even without noise) there is no
    threshold in (0, 1): None, never a bisection artefact at an edge."""
    config = de.DEConfig(population=100, levels=2, precision=0.05, seeds=2)
    monkeypatch.setattr(de, "overlap_by_depth", lambda *a, **k: [1.0])
    assert de.threshold(RHMSpec(9, 6, 3, 1), "flip", config)["threshold"] is None
    monkeypatch.setattr(de, "overlap_by_depth", lambda *a, **k: [0.0])
    assert de.threshold(RHMSpec(9, 6, 3, 1), "flip", config)["threshold"] is None
