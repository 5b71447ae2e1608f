"""Reading a user's measurements, model files and `solve` in the core (no CLI)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

from iclr25.core.pi_dion import measurements as meas
from iclr25.core.pi_dion import problem, saved, solve, train
from iclr25.core.pi_dion.model import PIDION, NetConfig
from iclr25.errors import InputError, UsageError


def _write_csv(path, x, u, instance=True, extra=""):
    lines = ["instance,x,u" if instance else "x,u"]
    for i, row in enumerate(u):
        for xs, us in zip(x, row, strict=True):
            xs, us = repr(float(xs)), repr(float(us))
            lines.append(f"{i},{xs},{us}" if instance else f"{xs},{us}")
    path.write_text("\n".join(lines) + extra + "\n")


@pytest.fixture(scope="module")
def small():
    p = problem.Problem(n_sensors=16)
    return p, problem.generate(p, 3, np.random.default_rng(0))


def test_csv_and_npz_agree_exactly(tmp_path, small):
    p, data = small
    np.savez(tmp_path / "m.npz", x=data.x[:, None], u=data.d)
    order = np.random.default_rng(1).permutation(len(data.x))  # CSV rows in any order
    _write_csv(tmp_path / "m.csv", data.x[order], data.d[:, order])
    a, b = meas.read(tmp_path / "m.npz"), meas.read(tmp_path / "m.csv")
    assert np.array_equal(a.x, b.x) and np.array_equal(a.u, b.u)
    cfg = solve.SolveConfig("tikhonov", 33, noise_std=1e-3)
    fa, fb = solve.solve(a, p, cfg)["f"], solve.solve(b, p, cfg)["f"]
    assert fa == fb


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda x, u: (x, np.where(np.arange(u.size).reshape(u.shape) == 5, np.nan, u)),
         "1 row(s) of u hold NaN or inf (rows 0)"),
        (lambda x, u: (np.r_[x[:-1], x[0]], u), "duplicate sensor"),
        (lambda x, u: (np.r_[x[:-1], 1.5], u), "outside Ω"),
        (lambda x, u: (x[:7], u[:, :7]), "7 sensors"),
    ],
)  # fmt: skip
def test_bad_npz_is_one_input_error(tmp_path, small, mutate, needle):
    x, u = mutate(small[1].x, small[1].d)
    np.savez(tmp_path / "bad.npz", x=x, u=u)
    with pytest.raises(InputError, match=None) as info:
        meas.read(tmp_path / "bad.npz")
    assert needle in info.value.message()


def test_csv_nan_names_the_line_and_2d_needs_y(tmp_path, small):
    x, u = small[1].x, small[1].d.copy()
    u[1, 2] = np.inf
    _write_csv(tmp_path / "m.csv", x, u)
    with pytest.raises(InputError) as info:
        meas.read(tmp_path / "m.csv")
    assert "1 row(s) hold NaN or inf (lines 20)" in info.value.message()  # header = line 1
    with pytest.raises(InputError, match="2-D file without"):
        meas.read(tmp_path / "m.csv", dim=2)


def test_identifiable_fraction():
    full = problem.sensor_points(problem.Problem())
    half = problem.sensor_points(problem.Problem(sensors="subdomain:0,0.5"))
    assert meas.identifiable_fraction(full) == 1.0
    assert meas.identifiable_fraction(half) == pytest.approx(0.5 * 64 / 65)


def test_train_never_receives_f():
    for fn in (train.train_pi_dion,):
        assert not {"f", "labels", "target"} & set(inspect.signature(fn).parameters)


def _tiny_saved(tmp_path, sensors, pde="reaction-diffusion", c=1.0):
    torch.manual_seed(0)
    model = PIDION(NetConfig(len(sensors), 8, 2, 4, train.f_scale(c)))
    path = tmp_path / "model.safetensors"
    saved.save(path, model, sensors, pde, c, {"labels": 0})
    return path, model


def test_saved_model_round_trip_and_refusals(tmp_path, small):
    p, data = small
    path, model = _tiny_saved(tmp_path, data.x)
    loaded = saved.load(path)
    d = torch.as_tensor(data.d, dtype=torch.float32)
    grid = torch.linspace(0, 1, 9)
    assert torch.equal(loaded.model.fields(d, grid)[1], model.fields(d, grid)[1])
    saved.check_compatible(loaded, data.x, p.pde, p.c, 1)  # its own layout: accepted
    with pytest.raises(InputError, match="only reads its own sensor layout"):
        saved.check_compatible(loaded, data.x * 0.9, p.pde, p.c, 1)
    with pytest.raises(InputError, match="model is for reaction-diffusion"):
        saved.check_compatible(loaded, data.x, "helmholtz", -36.0, 1)
    with pytest.raises(InputError, match="--dim 1, not --dim 2"):
        saved.check_compatible(loaded, data.x, p.pde, p.c, 2)


def test_solve_checks_its_options():
    with pytest.raises(UsageError, match="pi-dion, tikhonov, bayes"):
        solve.check(solve.SolveConfig("ridge"))
    with pytest.raises(UsageError, match="negative"):
        solve.check(solve.SolveConfig("bayes", noise_std=-1.0))


def test_residual_rel_is_zero_for_an_exact_fd_pair():
    grid = np.linspace(0, 1, 65)
    u = np.sin(np.pi * grid)[None] * np.array([[1.0], [2.0]])
    h = grid[1] - grid[0]
    f = np.zeros_like(u)
    f[:, 1:-1] = -(u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2]) / h**2 + 3.0 * u[:, 1:-1]
    assert np.all(solve.residual_rel(u, f, grid, 3.0) < 1e-12)
    assert np.all(solve.residual_rel(u, 1.1 * f, grid, 3.0) > 0.05)


def test_bundled_model_meets_its_targets_on_held_out_data():
    """The embedded model (scripts/train_pi_dion.py) on 100 fresh held-out instances:
    targets of issue 27 are rel. L² ≤ 0.40 on f and ≤ 0.05 on u (measured 0.270, 0.0176
    on the 500-instance set, iclr25/data/pi_dion/train_log.json)."""
    loaded = saved.load(saved.BUNDLED)
    p = problem.Problem()
    saved.check_compatible(loaded, problem.sensor_points(p), p.pde, p.c, 1)
    test = problem.generate(p, 100, np.random.default_rng(20250101))
    u, f = train.predict(loaded.model, test.d, test.grid)
    assert problem.rel_l2(f, test.f).mean() <= 0.40
    assert problem.rel_l2(u, test.u).mean() <= 0.05


def test_lbfgs_training_is_deterministic(small):
    p, data = small
    cfg = train.TrainConfig(steps=2, batch=3, collocation=8, width=8, basis=4, lbfgs_steps=3)
    a, _ = train.train_pi_dion(data.d, data.x, p.c, cfg, 5)
    b, _ = train.train_pi_dion(data.d, data.x, p.c, cfg, 5)
    for (name, wa), wb in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(wa, wb), name


# ---------------------------------------------------------------------------------------
# --sensors FILE and the α rule of `solve --method tikhonov`
# ---------------------------------------------------------------------------------------
def test_sensor_file_gives_a_problem_with_those_sensors(tmp_path):
    x = np.array([0.9, 0.1, 0.3, 0.5, 0.7, 0.2, 0.4, 0.6, 0.8])  # any order
    (tmp_path / "s.csv").write_text("x\n" + "\n".join(str(float(v)) for v in x) + "\n")
    points = meas.read_sensors(tmp_path / "s.csv")
    assert np.array_equal(points, np.sort(x))
    p = problem.Problem(sensors="file:s.csv", points=tuple(points), n_sensors=len(points))
    ds = problem.generate(p, 2, np.random.default_rng(0))
    assert ds.d.shape == (2, 9) and np.array_equal(ds.x, np.sort(x))
    assert meas.hull(points) == (0.0, 1.0)  # gap 0.1 reaches both ends
    assert meas.hull(points[:-2]) == (0.0, 0.7)  # 0.7 is 0.3 from x = 1 > the 0.1 gap


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("x\n" + "\n".join(str(v / 10) for v in range(1, 10)) + "\nnan\n", "1 row(s) hold NaN"),
        ("x\n" + "\n".join(str(v / 10) for v in range(1, 10)) + "\n1.5\n", "outside Ω"),
        ("x\n" + "\n".join(str(v / 10) for v in range(1, 10)) + "\n0.5\n", "duplicate sensor"),
        ("x\n0.1\n0.2\n0.3\n", "3 sensors"),
        ("pos\n0.1\n", "lacks x"),
        ("x\n0.1\nabc\n", "no number"),
    ],
)
def test_bad_sensor_files_are_one_input_error(tmp_path, text, needle):
    (tmp_path / "s.csv").write_text(text)
    with pytest.raises(InputError) as info:
        meas.read_sensors(tmp_path / "s.csv")
    assert needle in info.value.message()
    with pytest.raises(InputError, match="no such file"):
        meas.read_sensors(tmp_path / "missing.csv")


def test_tikhonov_alpha_rule_gcv_without_noise_level_else_discrepancy(small):
    p, data = small
    m = meas.Measurements(data.x, data.d, "test")
    gcv = solve.solve(m, p, solve.SolveConfig("tikhonov", 129))
    disc = solve.solve(m, p, solve.SolveConfig("tikhonov", 129, noise_std=data.noise_std))
    assert gcv["alpha_rule"] == "gcv" and gcv["noise_std"] is None
    assert len(gcv["noise_std_estimate"]) == 3 and all(s > 0 for s in gcv["noise_std_estimate"])
    assert disc["alpha_rule"] == "discrepancy" and disc["noise_std"] == data.noise_std
    # the discrepancy rule fits the data to σ: ‖u(sensors) − d‖² = m σ²
    u_at = np.stack([np.interp(data.x, disc["grid"], row) for row in disc["u"]])
    assert np.allclose(((u_at - data.d) ** 2).sum(1), 16 * data.noise_std**2, rtol=1e-3)
