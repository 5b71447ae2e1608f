"""2-D building blocks: FD by sine transform and the Matérn GRF by circulant embedding."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from iclr25.core.pi_dion import fd, fd2d, grf, grf2d


def test_sine_transform_solve_equals_the_sparse_five_point_solve():
    n, c = 15, 2.5
    f = np.random.default_rng(0).standard_normal((3, n, n))
    lu = spla.splu(fd2d.operator(n, c))
    expected = np.stack([lu.solve(g.ravel()).reshape(n, n) for g in f])
    assert np.allclose(fd2d.solve(f, c), expected, rtol=1e-10, atol=1e-12)


def test_fd2d_converges_at_second_order():
    # manufactured: u = sin(πx) sin(2πy) x, −Δu + 3u computed by hand
    def exact(x, y):
        return np.sin(np.pi * x) * np.sin(2 * np.pi * y) * x

    def source(x, y):
        s1, s2 = np.sin(np.pi * x), np.sin(2 * np.pi * y)
        uxx = (-(np.pi**2) * x * s1 + 2 * np.pi * np.cos(np.pi * x)) * s2
        uyy = -4 * np.pi**2 * exact(x, y)
        return -(uxx + uyy) + 3 * exact(x, y)

    errors = []
    for n in (15, 31, 63):
        x, y = np.meshgrid(fd.interior(n), fd.interior(n), indexing="ij")
        errors.append(np.abs(fd2d.solve(source(x, y), 3.0) - exact(x, y)).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2) < 0.1), orders


def test_bilinear_interpolation_is_exact_at_nodes_and_on_bilinear_functions():
    n = 7
    g = fd.interior(n)
    x, y = np.meshgrid(g, g, indexing="ij")
    values = (x * y).ravel()  # bilinear, but 0 only on two sides: test inside the nodes
    pts = np.array([[g[2], g[4]], [0.5 * (g[1] + g[2]), g[3]], [0.3, 0.6]])
    got = fd2d.interpolation(n, pts) @ values
    assert np.allclose(got, pts[:, 0] * pts[:, 1])


def test_grf2d_sample_covariance_matches_the_kernel():
    n = 6
    draws = grf2d.sample(n, 20000, 2.5, 0.3, np.random.default_rng(1)).reshape(20000, -1)
    g = np.linspace(0, 1, n)
    x, y = np.meshgrid(g, g, indexing="ij")
    pts = np.stack([x.ravel(), y.ravel()], 1)
    r = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    emp = draws.T @ draws / len(draws)
    assert np.abs(emp - grf.matern_kernel(r, 2.5, 0.3)).max() < 0.06  # ~4 standard errors


def test_grf2d_embedding_is_nonnegative_and_odd_counts_work():
    eig = grf2d.embedding_eigenvalues(17, 1 / 16, 2.5, 0.2)
    assert eig.min() >= 0 and eig.shape[0] >= 32
    assert grf2d.sample(5, 3, 1.5, 0.2, np.random.default_rng(0)).shape == (3, 5, 5)
    with pytest.raises(ValueError, match="singular"):
        fd2d.solve(np.ones((3, 3)), -2 * fd2d.eigenvalues(3)[0])


def test_bayes2d_gain_equals_the_dense_formula_on_a_tiny_grid():
    from iclr25.core.pi_dion import bayes2d

    layout = bayes2d.Layout2D(cells=4, fine_factor=2, side=3)  # fine 9×9 points, 9 sensors
    c, nu, ell = 1.0, 2.5, 0.3
    ops = bayes2d.operators(layout, c, nu, ell, noise=0.05)
    k_f, k_u = bayes2d.gains(layout, ops)
    # dense: C on all 81 fine points, H = S A⁻¹ on the 49 interior ones
    g = np.linspace(0, 1, 9)
    x, y = np.meshgrid(g, g, indexing="ij")
    pts = np.stack([x.ravel(), y.ravel()], 1)
    cov = grf.matern_kernel(np.linalg.norm(pts[:, None] - pts[None], axis=-1), nu, ell)
    inner = np.zeros((9, 9), bool)
    inner[1:-1, 1:-1] = True
    a_inv = np.linalg.inv(fd2d.operator(7, c).toarray())
    h = np.zeros((9, 81))
    h[:, inner.ravel()] = fd2d.interpolation(7, layout.sensors()).toarray() @ a_inv
    hch = h @ cov @ h.T
    assert np.allclose(ops.hch, hch, rtol=1e-8, atol=1e-12)
    assert np.isclose(ops.noise_std, 0.05 * np.sqrt(np.mean(np.diag(hch))))
    system = hch + (ops.noise_std**2 + 1e-12 * np.trace(hch) / 9) * np.eye(9)
    coarse = (np.arange(9)[:, None] % 2 == 0) & (np.arange(9)[None] % 2 == 0)  # every 2nd
    expected_f = (cov @ h.T)[coarse.ravel()] @ np.linalg.inv(system)
    u_of_f = np.zeros((81, 81))
    u_of_f[np.ix_(inner.ravel(), inner.ravel())] = a_inv
    expected_u = (u_of_f @ cov @ h.T)[coarse.ravel()] @ np.linalg.inv(system)
    assert np.allclose(k_f, expected_f, rtol=1e-7, atol=1e-10)
    assert np.allclose(k_u, expected_u, rtol=1e-7, atol=1e-10)


def test_bayes2d_mean_is_no_worse_than_a_scaled_copy():
    # the posterior mean minimises the expected squared error: scaling it by 0.9 or 1.1
    # (any other linear estimate) does worse on average over prior draws
    from iclr25.core.pi_dion import bayes2d

    layout = bayes2d.Layout2D(cells=8, fine_factor=2, side=6)
    ops = bayes2d.operators(layout, 1.0, 2.5, 0.2, noise=0.02)
    k_f, _ = bayes2d.gains(layout, ops)
    d, f, _ = bayes2d.generate(layout, 1.0, 2.5, 0.2, ops, 400, np.random.default_rng(2))
    err = {s: ((s * d @ k_f.T - f) ** 2).sum() for s in (0.9, 1.0, 1.1)}
    assert err[1.0] < err[0.9] and err[1.0] < err[1.1]


def test_tikhonov2d_recovers_a_smooth_source_from_clean_data():
    # f = 1 + sin(2πx) cos(πy) + x y, solved on the 4× finer grid, read at 16×16 sensors
    # without noise (961 unknowns, 256 data: the penalty must pick the smooth f); a tiny α
    # recovers f on the 33×33 grid to 2% inside (measured 1.06%) and 3% with the
    # extrapolated boundary (1.70%) — FD and interpolation error, halving from 17×17
    from iclr25.core.pi_dion import bayes2d, tikhonov, tikhonov2d

    cells, fine = 32, 4
    layout = bayes2d.Layout2D(cells=cells, fine_factor=fine, side=16)
    n_fine = cells * fine - 1
    xf, yf = np.meshgrid(fd.interior(n_fine), fd.interior(n_fine), indexing="ij")

    def source(x, y):
        return 1 + np.sin(2 * np.pi * x) * np.cos(np.pi * y) + x * y

    u_fine = fd2d.solve(source(xf, yf), 1.0)
    d = (fd2d.interpolation(n_fine, layout.sensors()) @ u_fine.ravel())[None]  # (1, 256)
    solver = tikhonov2d.build(layout.sensors(), 1.0, cells)
    assert (solver.lam > 1 - 1e-9).sum() == 4  # unpenalised directions: a small null space
    f, _ = tikhonov2d.solve(solver, d, np.array([-8.0]), cells)
    g = np.linspace(0, 1, cells + 1)
    x, y = np.meshgrid(g, g, indexing="ij")
    truth = source(x, y).ravel()
    inner = ((x > 0) & (x < 1) & (y > 0) & (y < 1)).ravel()
    rel = np.linalg.norm(f[0, inner] - truth[inner]) / np.linalg.norm(truth[inner])
    assert rel < 0.02, rel
    assert np.linalg.norm(f[0] - truth) / np.linalg.norm(truth) < 0.03
    # the α rules of the 1-D module run unchanged on the 2-D solver
    noisy = d + 1e-4 * np.random.default_rng(0).standard_normal((3, 256))
    log_alpha = tikhonov.choose_alpha(solver, noisy, 1e-4)
    _, u = tikhonov2d.solve(solver, noisy, log_alpha, cells)
    u_at = u.reshape(3, cells + 1, cells + 1)[:, 1:-1, 1:-1].reshape(3, -1) @ solver.s.T
    assert np.allclose(((u_at - noisy) ** 2).sum(1), 256 * 1e-8, rtol=1e-3)


def test_helmholtz_resonance_is_checked_per_dimension():
    from iclr25.core.pi_dion.problem import Problem
    from iclr25.errors import UsageError

    near_2d = np.pi * np.sqrt(5) * 1.005  # κ² ≈ π²(1² + 2²), a 2-D eigenvalue only
    near_1d = 2 * np.pi * 1.005  # κ² ≈ (2π)²: a 1-D eigenvalue, not a 2-D one
    Problem(pde="helmholtz", kappa=near_2d)
    Problem(pde="helmholtz", kappa=near_1d, dim=2)
    with pytest.raises(UsageError, match="eigenvalue 49.35"):
        Problem(pde="helmholtz", kappa=near_2d, dim=2)
    with pytest.raises(UsageError, match="eigenvalue 39.48"):
        Problem(pde="helmholtz", kappa=near_1d)
    with pytest.raises(UsageError, match="--dim 2 is not built"):
        Problem(sensors="subdomain:0,0.5", dim=2)
    with pytest.raises(UsageError, match="--dim 1 or --dim 2"):
        Problem(dim=3)


def test_2d_measurements_csv_and_npz_agree_and_bad_sensors_are_refused(tmp_path):
    from iclr25.core.pi_dion import bayes2d
    from iclr25.core.pi_dion import measurements as meas
    from iclr25.errors import InputError

    x = bayes2d.Layout2D(side=3).sensors()  # (9, 2)
    u = np.random.default_rng(0).standard_normal((2, 9))
    np.savez(tmp_path / "m.npz", x=x, u=u)
    order = np.random.default_rng(1).permutation(9)  # CSV rows in any order
    rows = [",".join([str(i), *(repr(float(v)) for v in (x[s, 0], x[s, 1], u[i, s]))])
            for i in range(2) for s in order]  # fmt: skip
    (tmp_path / "m.csv").write_text("instance,x,y,u\n" + "\n".join(rows) + "\n")
    a, b = meas.read(tmp_path / "m.npz", dim=2), meas.read(tmp_path / "m.csv", dim=2)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.u, b.u) and a.x.shape == (9, 2)
    assert meas.identifiable_fraction(a.x) == 1.0
    for bad, needle in (
        (np.r_[x[:-1], x[:1]], "duplicate"),
        (np.r_[x[:-1], [[0.5, 1.2]]], "[0, 1]²"),
    ):
        np.savez(tmp_path / "bad.npz", x=bad, u=u)
        with pytest.raises(InputError, match=None) as info:
            meas.read(tmp_path / "bad.npz", dim=2)
        assert needle in info.value.message()
    np.savez(tmp_path / "one_d.npz", x=x[:, :1], u=u)
    with pytest.raises(InputError, match="without y"):
        meas.read(tmp_path / "one_d.npz", dim=2)


def test_solve2d_tikhonov_on_prior_draws():
    # f from the 2-D prior, u on the 129² grid, 16×16 sensors, noise σ = 1e-4 (≈ 1% of
    # RMS(d)): Tikhonov (GCV) recovers f far better than zero (rel. error < 0.35; measured
    # ≈ 0.2 with the Bayes mean at ≈ 0.14 on 20 draws), its (u, f) pair solves the FD
    # equation on the 33² grid exactly, and the discrepancy rule fits the data to σ
    from iclr25.core.pi_dion import bayes2d, grf2d, problem, solve2d
    from iclr25.core.pi_dion.measurements import Measurements

    layout = bayes2d.Layout2D()
    f_full = grf2d.sample(129, 6, 2.5, 0.2, np.random.default_rng(3))  # (6, 129, 129)
    u_int = fd2d.solve(f_full[:, 1:-1, 1:-1], 1.0)
    d = (fd2d.interpolation(127, layout.sensors()) @ u_int.reshape(6, -1).T).T
    d += 1e-4 * np.random.default_rng(4).standard_normal(d.shape)
    data, p = Measurements(layout.sensors(), d, "test"), problem.Problem(dim=2)
    gcv = solve2d.solve(data, p, "tikhonov", 33, None)
    truth = f_full[:, ::4, ::4].reshape(6, -1)
    err = np.linalg.norm(np.array(gcv["f"]) - truth, axis=1) / np.linalg.norm(truth, axis=1)
    assert gcv["alpha_rule"] == "gcv" and err.mean() < 0.35, err
    assert max(gcv["residual_rel"]) < 1e-8
    disc = solve2d.solve(data, p, "tikhonov", 33, 1e-4)
    misfit = np.array(disc["misfit_rel"]) * np.linalg.norm(d, axis=1)
    assert np.allclose(misfit**2, 256 * 1e-8, rtol=1e-3)
    with pytest.raises(Exception, match="tikhonov or bayes"):
        solve2d.solve(data, p, "pi-dion", 33, None)
