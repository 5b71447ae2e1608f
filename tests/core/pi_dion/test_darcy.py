"""darcy (−(a u')' = 1, a = exp(g)): FD solver, sensitivities, Gauss–Newton Tikhonov and
the PI-DION residual against plain references."""

import inspect

import numpy as np
import pytest
import torch

from iclr25.core.pi_dion import darcy, darcy_compare, darcy_model, darcy_tikhonov, fd
from iclr25.core.pi_dion.problem import Problem, rel_l2
from iclr25.core.pi_dion.recipe import TrainConfig
from iclr25.errors import UsageError
from iclr25.parallel import Execution


def _manufactured(x):
    """g = 0.5 sin 2πx, u = sin πx and f = −(a u')' (closed form)."""
    g = 0.5 * np.sin(2 * np.pi * x)
    a, a1 = np.exp(g), np.exp(g) * np.pi * np.cos(2 * np.pi * x)
    u = np.sin(np.pi * x)
    return g, u, -(a1 * np.pi * np.cos(np.pi * x) - a * np.pi**2 * u)


def test_fd_solver_converges_at_second_order():
    errors = []
    for n in (31, 63, 127, 255):
        x = np.linspace(0, 1, n + 2)
        g, u, f = _manufactured(x)
        errors.append(np.abs(darcy.solve(g[None], f[None, 1:-1])[0] - u).max())
    rates = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(rates - 2) < 0.05), rates  # measured 2.00, 2.00, 2.00


def test_thomas_equals_dense_solve():
    rng = np.random.default_rng(0)
    g = rng.standard_normal((3, 12))
    diag, off, _ = darcy.system(g)
    rhs = rng.standard_normal((3, 10, 4))
    fast = darcy.thomas(diag, off, rhs)
    for i in range(3):
        dense = np.diag(diag[i]) + np.diag(off[i], 1) + np.diag(off[i], -1)
        np.testing.assert_allclose(fast[i], np.linalg.solve(dense, rhs[i]), rtol=1e-10)


def test_sensor_jacobian_equals_finite_differences():
    rng = np.random.default_rng(1)
    n = 31
    g = 0.3 * rng.standard_normal((2, n + 2))
    s = fd.interpolation(n, np.arange(1, 17) / 17)
    jac = darcy.sensor_jacobian(g, darcy.solve(g), s)  # (2, 16, n+2)
    eps = 1e-6
    for j in range(n + 2):
        up, down = g.copy(), g.copy()
        up[:, j] += eps
        down[:, j] -= eps
        col = (darcy.solve(up)[:, 1:-1] - darcy.solve(down)[:, 1:-1]) @ s.T / (2 * eps)
        np.testing.assert_allclose(jac[:, :, j], col, rtol=1e-6, atol=1e-7 * np.abs(jac).max())


def test_tikhonov_recovers_a_smooth_manufactured_a_from_clean_data():
    """Clean data from the 4× finer grid, α = 1e-10, 30 GN steps: rel. L² of a ≤ 1e-2
    (measured 3.5e-4; discrepancy with σ = 1e-5 gives 1.6e-3)."""
    x_fine = np.linspace(0, 1, 513)

    def g_true(x):
        return 0.5 * np.sin(2 * np.pi * x) + 0.3 * x

    u_fine = darcy.solve(g_true(x_fine)[None])
    sensors = np.arange(1, 65) / 65
    d = u_fine[:, 1:-1] @ fd.interpolation(511, sensors).T
    gp = darcy_tikhonov.build(sensors)
    g = darcy_tikhonov.gauss_newton(gp, d, np.array([1e-10]), steps=30)
    assert rel_l2(np.exp(g), np.exp(g_true(gp.nodes))[None])[0] <= 1e-2


def _net(seed=0):
    torch.manual_seed(seed)
    return darcy_model.DarcyPIDION(darcy_model.DarcyNetConfig(8, 16, 3, 5, 0.09)).double()


def test_taylor_mode_residual_equals_autograd():
    net = _net()
    d = 0.05 + 0.02 * torch.rand(3, 8, dtype=torch.float64)
    x = torch.rand(13, dtype=torch.float64)
    z = torch.linspace(0.1, 0.9, 8, dtype=torch.float64)
    fast, u_s = net.residual_and_fit(d, x, z)
    for i in range(3):
        xs = x.clone().requires_grad_(True)
        u, g = net.fields(d[i : i + 1], xs)
        (u1,) = torch.autograd.grad(u.sum(), xs, create_graph=True)
        flux = torch.exp(g[0]) * u1
        (flux1,) = torch.autograd.grad(flux.sum(), xs)
        slow = -flux1 - 1.0
        assert torch.allclose(fast[i], slow, atol=1e-6), (fast[i] - slow).abs().max()
        assert torch.allclose(u_s[i], net.fields(d[i : i + 1], z)[0][0], atol=1e-12)


def test_scaling_is_exactly_equivariant():
    """c × the data gives the same u shape × c and a / c (a ↦ a/c, u ↦ c u)."""
    net = _net(2)
    d = 0.05 + 0.02 * torch.rand(2, 8, dtype=torch.float64)
    x = torch.linspace(0, 1, 9, dtype=torch.float64)
    u, g = net.fields(d, x)
    u3, g3 = net.fields(3 * d, x)
    assert torch.allclose(u3, 3 * u, atol=1e-12)
    assert torch.allclose(torch.exp(g3), torch.exp(g) / 3, rtol=1e-12)


def test_training_never_receives_g():
    params = set(inspect.signature(darcy_model.train_darcy).parameters)
    assert params == {"d", "sensors", "cfg", "seed", "progress", "on_loss"}


def test_problem_refuses_darcy_in_2d():
    with pytest.raises(UsageError, match="darcy"):
        Problem(pde="darcy", dim=2)


TINY = darcy_compare.DarcyCompareConfig(
    Problem(pde="darcy"), n_train=12, n_test=4, seeds=3, labels=(4, 8),
    train=TrainConfig(steps=3, batch=6, width=8, basis=4),
)  # fmt: skip


def test_generate_is_seeded_and_consistent():
    p = Problem(pde="darcy")
    a = darcy.generate(p, 3, np.random.default_rng(5))
    b = darcy.generate(p, 3, np.random.default_rng(5))
    assert np.array_equal(a.d, b.d) and np.array_equal(a.g, b.g)
    assert np.allclose(a.a, np.exp(a.g)) and np.all(a.u[:, [0, -1]] == 0)
    assert a.noise_std == pytest.approx(0.01 * darcy._reference_rms(2.5, 0.2, tuple(a.x)))


def test_compare_same_seed_same_results():
    a, _ = darcy_compare.run_compare(TINY, 3, Execution(cache=False))
    b, _ = darcy_compare.run_compare(TINY, 3, Execution(cache=False))
    a.pop("inference_ms_per_instance"), b.pop("inference_ms_per_instance")
    assert a == b
    assert a["methods"] == ["pi_dion", "supervised_N4", "supervised_N8", "tikhonov"]
    assert "bayes" not in a["rel_l2_a"] and a["rel_l2_u"]["supervised_N4"] is None
    # the seeds' networks differ (the seed matters); Tikhonov is deterministic (width 0)
    assert a["rel_l2_a"]["pi_dion"]["ci_low"] < a["rel_l2_a"]["pi_dion"]["ci_high"]
    assert a["rel_l2_a"]["tikhonov"]["ci_low"] == a["rel_l2_a"]["tikhonov"]["ci_high"]


def test_bundled_darcy_model_reproduces_its_train_log():
    """The embedded darcy model (scripts/train_pi_dion.py --pde darcy): its file is the one
    the log names (sha256), and on the log's held-out draw (seed 20251203, 200 instances,
    the darcy studies' held-out set) it gives the logged errors."""
    import json

    from iclr25.core.pi_dion import saved

    log = json.loads(saved.BUNDLED_DARCY.with_name("train_log_darcy.json").read_text())
    assert saved.sha256_of(saved.BUNDLED_DARCY) == log["sha256"]
    loaded = saved.load(saved.resolve("bundled", 1, "darcy"))
    p = Problem(pde="darcy")
    saved.check_compatible(loaded, darcy.sensor_points(p), p.pde, p.c, 1)
    held = log["held_out"]
    test = darcy.generate(p, held["instances"], np.random.default_rng(held["seed"]))
    u, g = darcy_model.predict(loaded.model, test.d, test.grid)
    assert rel_l2(np.exp(g), test.a).mean() == pytest.approx(held["rel_l2_a"], rel=1e-6)
    assert rel_l2(u, test.u).mean() == pytest.approx(held["rel_l2_u"], rel=1e-6)
    assert loaded.meta["labels"] == 0 and saved.BUNDLED_DARCY.stat().st_size < 300_000
