"""The pn-gail benchmark's peers do what they claim: the plain loop's TRPO step stays
within its KL bound and improves its surrogate; the imitation peer says why it is skipped."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gymnasium")

from benchmarks import peer_imitation_gail, peer_pn_gail_loop  # noqa: E402


def test_conjugate_gradient_solves_a_symmetric_positive_definite_system():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(6, 6))
    a = torch.as_tensor(m @ m.T + 6 * np.eye(6))
    b = torch.as_tensor(rng.normal(size=6))
    x = peer_pn_gail_loop.conjugate_gradient(lambda v: a @ v, b, steps=6)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a.numpy(), b.numpy()), atol=1e-8)


def test_the_loop_collects_its_batch_and_its_trpo_step_respects_the_kl_bound():
    config = dataclasses.replace(peer_pn_gail_loop.LoopConfig(), batch_steps=256)
    demos = np.random.default_rng(1).uniform(-1, 1, size=(50, 4))
    loop = peer_pn_gail_loop.OfficialLoop(demos, config, seed=0)
    batch = loop.collect()
    assert batch.obs.shape == (256, 3) and batch.act.shape == (256, 1)
    assert (batch.reward > 0).all()  # −log σ(f) > 0
    assert batch.mask[199] == 0 and batch.mask[-1] == 0 and batch.mask[:199].all()
    advantages, _ = loop.gae(batch)
    obs, act = torch.from_numpy(batch.obs), torch.from_numpy(batch.act)
    adv = torch.from_numpy(advantages)
    with torch.no_grad():
        old_mean, old_log_std = loop.policy(obs)
        old_logp = loop.policy.log_prob(obs, act)
    loop.trpo_step(obs, act, adv)
    with torch.no_grad():
        mean, log_std = loop.policy(obs)
        var, old_var = torch.exp(2 * log_std), torch.exp(2 * old_log_std)
        kl = (log_std - old_log_std + (old_var + (old_mean - mean) ** 2) / (2 * var) - 0.5).sum(1)
        gain = (torch.exp(loop.policy.log_prob(obs, act) - old_logp) * adv).mean()
    # the step is scaled so that the quadratic model of the KL equals the bound (damping
    # makes it smaller); the line search checks only the improvement, as in the official
    # scripts, so the true KL may exceed the bound a little, not by a factor
    assert 0.0 < float(kl.mean()) <= 2 * config.max_kl
    assert float(gain) >= 0.0  # accepted steps improve the surrogate; else no step
    assert not torch.equal(mean, old_mean)  # a first step from a fresh policy is accepted


def test_the_imitation_peer_names_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv(peer_imitation_gail.ENV_VAR, str(tmp_path / "no-python"))
    python, why = peer_imitation_gail.imitation_python()
    assert python is None and "does not exist" in why
    monkeypatch.delenv(peer_imitation_gail.ENV_VAR)
    monkeypatch.setattr(peer_imitation_gail, "DEFAULT_PYTHON", tmp_path / "bin" / "python")
    monkeypatch.setattr(peer_imitation_gail, "REPO", tmp_path)
    python, why = peer_imitation_gail.imitation_python()
    assert python is None and "make imitation-env" in why and "gymnasium ~0.29" in why
