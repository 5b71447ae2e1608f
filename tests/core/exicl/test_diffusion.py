"""The DDPM prior and the guided sampler: against diffusers, and their invariants."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr25.core.exicl.ddpm import DDPM
from iclr25.core.exicl.prior import Prior, PriorConfig, make_denoiser
from iclr25.core.exicl.sampler import Guidance, objective, sample


@pytest.mark.parametrize("schedule, beta", [("linear", "linear"), ("cosine", "squaredcos_cap_v2")])
@pytest.mark.parametrize("clip", [False, True])
def test_posterior_step_equals_diffusers(schedule, beta, clip):
    """Our DDPM step = diffusers' DDPMScheduler.step (fixed_small variance, ε-prediction).

    diffusers keeps its schedule in float32 (1 − ᾱ cancels to ~1e-4 relative error at low
    levels), so its schedule is checked against ours to 1e-6 and then replaced by the
    float64 one: the step's algebra is compared to 1e-6."""
    from diffusers import DDPMScheduler

    steps = 30
    ours = DDPM(steps, schedule)
    ref = DDPMScheduler(num_train_timesteps=steps, beta_schedule=beta, variance_type="fixed_small",
                        clip_sample=clip, prediction_type="epsilon")  # fmt: skip
    ref.set_timesteps(steps)
    np.testing.assert_allclose(ref.betas.double().numpy(), ours.betas.numpy(), atol=1e-6)
    ref.betas = ours.betas.clone()
    ref.alphas = 1.0 - ref.betas
    ref.alphas_cumprod = torch.cumprod(ref.alphas, dim=0)
    g = torch.Generator().manual_seed(0)
    for i in (steps - 1, 17, 5, 1, 0):
        x = torch.randn((4, 8, 2), generator=g, dtype=torch.float64)
        eps = torch.randn((4, 8, 2), generator=g, dtype=torch.float64)
        idx = torch.full((4,), i, dtype=torch.long)
        z = torch.randn((4, 8, 2), generator=torch.Generator().manual_seed(1), dtype=torch.float64)
        out = ref.step(eps, i, x, generator=torch.Generator().manual_seed(1))
        # τ̂^0, Σ_i, the posterior mean given diffusers' own τ̂^0, and the whole step
        x0 = ours.predict_x0(x, idx, eps)
        x0 = x0.clamp(-1, 1) if clip else x0
        np.testing.assert_allclose(x0.numpy(), out.pred_original_sample.numpy(), rtol=1e-6)
        mean, var = ours.p_mean_variance(x, idx, eps, clip)
        sigma = float(ref._get_variance(i)) ** 0.5 if i > 0 else 0.0
        their_mean = out.prev_sample - sigma * z
        given = ours.posterior(x, idx, out.pred_original_sample)[0]
        np.testing.assert_allclose(given.numpy(), their_mean.numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(float(var.reshape(-1)[0]) ** 0.5, sigma, rtol=1e-6, atol=1e-9)
        step = ours.step(eps, i, x, z, clip)
        np.testing.assert_allclose(step.numpy(), out.prev_sample.numpy(), rtol=1e-6, atol=1e-6)


def _tiny_prior(horizon: int = 8) -> Prior:
    torch.manual_seed(0)
    config = PriorConfig(horizon=horizon, steps=10, width=32, layers=2)
    model = make_denoiser(horizon, 32, 2, 10, "cosine").eval()
    return Prior(model, DDPM(10, "cosine"), config, "x", 6, 6, {})


def test_guidance_off_is_the_unguided_sampler():
    prior = _tiny_prior()
    starts, goals = np.array([[0, 0], [1, 2]]), np.array([[5, 5], [4, 0]])
    plain = sample(prior, starts, goals, seed=3)
    off = sample(prior, starts, goals, seed=3, guidance=Guidance(scale=0.0),
                 cost_fn=lambda x, i: x.sum((1, 2)), lam=np.ones(2))  # fmt: skip
    np.testing.assert_array_equal(plain, off)
    on = sample(prior, starts, goals, seed=3, guidance=Guidance(scale=0.5))
    assert not np.array_equal(plain, on)


def test_inpainting_is_exact():
    prior = _tiny_prior()
    starts, goals = np.array([[0, 0], [1, 2], [5, 1]]), np.array([[5, 5], [4, 0], [0, 3]])
    traj = sample(prior, starts, goals, seed=0, guidance=Guidance(scale=1.0))
    np.testing.assert_allclose(traj[:, 0], starts, atol=1e-5)
    np.testing.assert_allclose(traj[:, -1], goals, atol=1e-5)


def test_reward_guidance_shortens_paths():
    prior = _tiny_prior(horizon=8)
    starts, goals = np.zeros((64, 2)), np.full((64, 2), 5.0)
    free = sample(prior, starts, goals, seed=1)
    guided = sample(prior, starts, goals, seed=1, guidance=Guidance(scale=5.0))

    def length(t):
        return np.linalg.norm(np.diff(t, axis=1), axis=2).sum(1).mean()

    assert length(guided) < length(free)


def test_objective_subtracts_lambda_times_cost():
    prior = _tiny_prior()
    x = torch.zeros((2, 8, 2))
    base = objective(x, 0, prior, Guidance(), None, None)
    cost = objective(x, 0, prior, Guidance(), lambda x, i: torch.tensor([1.0, 2.0]),
                     torch.tensor([3.0, 0.5]))  # fmt: skip
    np.testing.assert_allclose((base - cost).numpy(), [3.0, 1.0])


def test_same_seed_same_samples():
    prior = _tiny_prior()
    s, g = np.array([[0, 0]]), np.array([[5, 5]])
    np.testing.assert_array_equal(sample(prior, s, g, 7), sample(prior, s, g, 7))


def test_a_decoded_path_ends_at_its_first_visit_of_the_goal():
    """Padding after arrival (a step off the goal cell and back, from rounding) is not
    part of the path; jumps before it are filled with single steps."""
    from iclr25.core.exicl import grid
    from iclr25.core.exicl.sampler import decode_path, until_goal
    from iclr25.core.exicl.spec import GridSpec

    cells = np.array([[0, 0], [1, 0], [3, 0], [2, 0], [3, 0], [3, 1], [3, 0]])
    assert until_goal(cells).tolist() == [[0, 0], [1, 0], [3, 0]]
    assert until_goal(np.array([[2, 2], [2, 2]])).tolist() == [[2, 2]]
    traj = cells + np.array([0.3, -0.2])  # grid coordinates round to the same cells
    path = decode_path(traj, 8, 8)
    assert path.tolist() == [[0, 0], [1, 0], [2, 0], [3, 0]]
    spec = GridSpec(8, 8, np.zeros((8, 8), dtype=bool), 8)
    assert grid.path_length(spec, path) == pytest.approx(3.0)  # 5 moves before the cut


def test_tube_path_reads_a_straight_sample_between_two_columns_as_straight():
    """A sample at x = 3.5 rounds to a zig-zag 3 → 4 → 3 …; inside its tube the path is a
    straight column; the tube never lets the path leave the cells the sample passes."""
    from iclr25.core.exicl import grid
    from iclr25.core.exicl.sampler import decode_path, tube_path
    from iclr25.core.exicl.spec import GridSpec

    spec = GridSpec(8, 8, np.zeros((8, 8), dtype=bool), 8)
    ys = np.arange(1, 7, dtype=float)
    traj = np.stack([3.5 + 0.02 * (-1.0) ** np.arange(6), ys], 1)
    traj[0], traj[-1] = (3, 1), (3, 6)
    traj = np.concatenate([traj, np.repeat(traj[-1:], 4, 0)])  # padding at the goal
    zigzag = grid.path_length(spec, decode_path(traj, 8, 8))
    path = tube_path(spec, traj, spec.walls)
    assert grid.path_length(spec, path) == pytest.approx(5.0)
    assert zigzag > 5.5  # rounding alone zig-zags between the two columns
    blocked = np.zeros((8, 8), dtype=bool)
    blocked[3, 3:5] = True  # both tube cells of row 3: no way round inside the tube
    assert tube_path(spec, traj, blocked) is None


def test_box_nominal_waypoints_stay_near_the_trip():
    from iclr25.core.exicl import grid
    from iclr25.core.exicl.nominal import near_waypoints
    from iclr25.core.exicl.spec import open_grid

    spec = open_grid(16, 16)
    a, b = grid.cell_index(spec, np.array([4, 6])), grid.cell_index(spec, np.array([10, 6]))
    xy = grid.cell_xy(spec, near_waypoints(spec, int(a), int(b), 2))
    assert xy[:, 0].min() == 2 and xy[:, 0].max() == 12
    assert xy[:, 1].min() == 4 and xy[:, 1].max() == 8
