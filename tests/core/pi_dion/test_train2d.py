"""2-D PI-DION training: label-free signature, the loss falls, save/load round trip."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

from iclr25.core.pi_dion import saved, train, train2d
from iclr25.errors import InputError

CFG = train.TrainConfig(steps=60, batch=6, collocation=32, width=8, basis=4, lr=1e-2)


def _data(n=6, side=4, seed=0):
    """Smooth random data on a side × side sensor grid (given column-major, to test order)."""
    rng = np.random.default_rng(seed)
    s = np.arange(1, side + 1) / (side + 1)
    y, x = np.meshgrid(s, s, indexing="ij")  # x fastest: not the row-major order
    pts = np.stack([x.ravel(), y.ravel()], axis=1)
    shape = np.sin(np.pi * pts[:, 0]) * np.sin(np.pi * pts[:, 1])
    return pts, rng.normal(size=(n, 1)) * shape[None] + 0.01 * rng.normal(size=(n, len(pts)))


def test_pi_dion_2d_training_never_receives_f():
    params = list(inspect.signature(train2d.train_pi_dion_2d).parameters)
    assert params == ["d", "sensors", "c", "cfg", "seed", "progress", "on_loss", "group"]


def test_the_label_free_loss_falls_and_the_model_fits_the_sensors():
    pts, d = _data()
    short, _ = train2d.train_pi_dion_2d(
        d, pts, 1.0, train.TrainConfig(**{**CFG.__dict__, "steps": 1}), 0
    )
    model, loss = train2d.train_pi_dion_2d(d, pts, 1.0, CFG, 0)
    u0 = train2d.predict_2d(short, d, pts, pts)[0]
    u1 = train2d.predict_2d(model, d, pts, pts)[0]
    assert np.linalg.norm(u1 - d) < 0.3 * np.linalg.norm(u0 - d)  # 0.14 / 0.96 when written
    assert np.isfinite(loss)


def test_residual_and_fit_equals_its_parts():
    torch.manual_seed(0)
    net = train2d._new_model(CFG, 4, 2.0, 0).double()
    d = torch.randn(3, 16, dtype=torch.float64)
    x, z = torch.rand(5, 2, dtype=torch.float64), torch.rand(16, 2, dtype=torch.float64)
    res, u_z = net.residual_and_fit(d, x, z, 2.0)
    assert torch.allclose(res, net.residual(d, x, 2.0), atol=1e-12)
    assert torch.allclose(u_z, net.fields(d, z)[0], atol=1e-12)


def test_2d_model_saves_loads_and_refuses_1d(tmp_path):
    pts, d = _data()
    model, _ = train2d.train_pi_dion_2d(d, pts, 1.0, train.TrainConfig(steps=2, batch=6,
                                        collocation=8, width=8, basis=4), 0)  # fmt: skip
    path = tmp_path / "m.safetensors"
    saved.save(path, model, pts, "reaction-diffusion", 1.0, {"train": CFG.__dict__})
    back = saved.load(path)
    assert back.dim == 2 and back.sensors.shape == (16, 2)
    grid = np.random.default_rng(1).random((7, 2))
    for a, b in zip(train2d.predict_2d(model, d, pts, grid),
                    train2d.predict_2d(back.model, d, pts, grid), strict=True):  # fmt: skip
        assert np.array_equal(a, b)
    saved.check_compatible(back, pts, "reaction-diffusion", 1.0, 2)
    with pytest.raises(InputError, match="--dim 2, not --dim 1"):
        saved.check_compatible(back, pts, "reaction-diffusion", 1.0, 1)


def test_2d_needs_a_square_sensor_grid_and_midpoints_cover_the_square():
    with pytest.raises(InputError, match="not a square grid"):
        train2d.side_of(np.zeros((15, 2)))
    m = train.midpoints(32, 2).numpy()  # k = 8: 64 ≥ 2·32 midpoints
    assert m.shape == (64, 2) and m.min() == pytest.approx(1 / 16) and m.max() < 1
    assert len(np.unique(m, axis=0)) == 64


def test_compare_2d_scores_a_saved_model_as_it_is(tmp_path):
    """``compare --dim 2 --model``: PI-DION is the loaded model (nothing trained, no loss)."""
    from dataclasses import replace

    from iclr25.core.pi_dion import compare, compare2d
    from iclr25.core.pi_dion.bayes2d import Layout2D
    from iclr25.core.pi_dion.problem import Problem

    pts, d = _data()
    model, _ = train2d.train_pi_dion_2d(d, pts, 1.0, replace(CFG, steps=2), 0)
    path = tmp_path / "m.safetensors"
    saved.save(path, model, pts, "reaction-diffusion", 1.0, {"train": CFG.__dict__})
    layout = Layout2D(cells=4, fine_factor=2, side=4)
    grid = compare2d.grid_points(layout)
    test = compare2d.Data2D(layout.sensors(), d, grid, np.zeros((6, 25)), np.zeros((6, 25)), 0.1)
    cfg = compare.CompareConfig(Problem(dim=2), model=str(path), layout2d=layout)
    u, f, _, trained = compare2d.estimate("pi_dion", cfg, 0, 0, test, cfg.problem, layout, None)
    want = train2d.predict_2d(model, d, layout.sensors(), grid)
    assert trained is None and np.array_equal(u, want[0]) and np.array_equal(f, want[1])


def test_the_2d_recipe_defaults_and_explicit_options_win():
    two = train.for_dim(2, steps=5, basis=None, lr=None)
    assert (two.basis, two.lr, two.collocation) == (64, 3e-3, 1024)
    assert train.for_dim(2, basis=8, lr=1e-2).basis == 8 and train.for_dim(2, lr=1e-2).lr == 1e-2
    one = train.for_dim(1, basis=None)
    assert (one.basis, one.lr, one.collocation) == (16, 1e-3, 128)


def test_a_new_2d_model_has_the_unit_boundary_factor_and_a_spread_trunk():
    model = train2d._new_model(CFG, 4, 1.0, 0)
    torch.manual_seed(0)
    fresh = train2d.PIDION2D(model.config).to(train.DTYPE)  # the same init before the spread
    assert model.config.u_scale == train2d.U_SCALE == 16.0
    first, before = model.trunk[0], fresh.trunk[0]
    assert torch.allclose(first.weight, before.weight * train2d.TRUNK_GAIN)
    centre = torch.tensor([[0.5, 0.5]], dtype=train.DTYPE)  # centred: the bias × gain there
    assert torch.allclose(first(centre)[0], before.bias * train2d.TRUNK_GAIN, atol=1e-5)
