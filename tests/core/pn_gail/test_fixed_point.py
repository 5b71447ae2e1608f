"""Closed-form fixed points (the paper note's numbers) and adversarial play reaching them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.core.pn_gail import fixed_point as fp
from iclr25.errors import UsageError
from iclr25.testing import assert_close

GAME = fp.make_game([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]], [1.0, 0.2], [0.2, 0.8])


def test_closed_forms_match_the_note():
    """The paper note: GAIL (0.240, 0.100, 0.660), 2IWIL (0.489, 0.100, 0.411),
    PN-GAIL (0.738, 0.100, 0.162)."""
    assert_close(fp.closed_form(GAME, "gail"), [0.24, 0.10, 0.66], atol=1e-12)
    # by hand: B = 0.2·(0.8, 0.1, 0.1) + 0.16·(0.1, 0.1, 0.8) = (0.176, 0.036, 0.148)
    b = np.array([0.176, 0.036, 0.148])
    assert_close(fp.closed_form(GAME, "2iwil"), b / b.sum(), atol=1e-12)
    assert_close(fp.closed_form(GAME, "2iwil"), [0.489, 0.100, 0.411], atol=5e-4)
    # N = p_d − B = (0.064, 0.064, 0.512); κ = (1 + 0.064 + 0.064 + 0.512) / 0.36
    kappa = (1 + 0.064 + 0.064 + 0.512) / 0.36
    assert_close(fp.closed_form(GAME, "pn-gail"), kappa * b - [0.064, 0.064, 0.512], atol=1e-12)
    assert_close(fp.closed_form(GAME, "pn-gail"), [0.738, 0.100, 0.162], atol=5e-4)


def test_pn_gail_point_drops_dominated_actions():
    b, n = np.array([0.3, 0.05, 0.05]), np.array([0.0, 0.1, 0.5])
    p = fp.positive_negative_point(b, n)
    assert p.sum() == pytest.approx(1.0) and (p >= 0).all()
    assert p[2] == 0.0  # κ·0.05 < 0.5
    # disjoint supports: the optimal demonstrator's distribution exactly
    b2, n2 = np.array([0.2, 0.2, 0.0]), np.array([0.0, 0.0, 0.6])
    assert_close(fp.positive_negative_point(b2, n2), [0.5, 0.5, 0.0], atol=1e-12)


@st.composite
def games(draw):
    k = draw(st.integers(2, 4))
    rows = []
    for _ in range(2):
        w = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k)))
        rows.append(w / w.sum())
    r = [1.0, draw(st.floats(0.0, 0.6))]
    s = draw(st.floats(0.2, 0.6))
    return fp.make_game(rows, r, [s, 1 - s])


@pytest.mark.slow  # 4 games of adversarial play: the longest pn-gail test (~3 min loaded)
@settings(max_examples=4, deadline=None)
@given(games())
def test_learned_points_within_002_of_closed_forms(game):
    for method in fp.METHODS:
        learned = fp.learned(game, method, fp.PlayConfig(rounds=400))
        assert_close(learned, fp.closed_form(game, method), atol=0.02, rtol=0, what=method)


def reference_learned(game, method, config):
    """The play of one method on its own, as written before the methods were stacked:
    1-D logits, its own Adam pair, the loss files called directly."""
    import torch

    from iclr25.core.pn_gail import loss_2iwil, loss_gail, loss_pn_gail

    k, j = game.probs.shape[1], game.probs.shape[0]
    f = torch.zeros(k, requires_grad=True)
    theta = torch.zeros(k, requires_grad=True)
    opt_f = torch.optim.Adam([f], lr=config.disc_lr)
    opt_pi = torch.optim.Adam([theta], lr=config.policy_lr)
    demo_w = torch.as_tensor(j * k * game.shares[:, None] * game.probs, dtype=torch.float32)
    demo_w = demo_w.reshape(-1)
    demo_r = torch.as_tensor(np.repeat(game.confidence, k), dtype=torch.float32)
    z = float((game.shares * game.confidence).sum())
    kept, start = [], int(config.rounds * (1 - config.tail))
    for round_ in range(config.rounds):
        pi = torch.softmax(theta, 0).detach()
        for _ in range(config.disc_steps):
            f_demo = f.repeat(j)
            if method == "gail":
                loss = loss_gail.loss(f, f_demo, k * pi, demo_w)
            elif method == "2iwil":
                loss = loss_2iwil.loss(f, f_demo, demo_r, z, k * pi, demo_w)
            else:
                loss = loss_pn_gail.loss(f, f_demo, demo_r, k * pi, demo_w)
            opt_f.zero_grad()
            loss.backward()
            opt_f.step()
        objective = -(torch.softmax(theta, 0) * loss_gail.reward(f.detach())).sum()
        opt_pi.zero_grad()
        objective.backward()
        opt_pi.step()
        if round_ >= start:
            kept.append(torch.softmax(theta, 0).detach().double().numpy())
    return np.mean(kept, axis=0)


@pytest.mark.parametrize(
    "game",
    [
        fp.make_game([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]], [1.0, 0.2], [0.2, 0.8]),
        fp.make_game(
            [[0.5, 0.3, 0.2, 0.0], [0.2, 0.2, 0.5, 0.1], [0.1, 0.7, 0.1, 0.1]],
            [1.0, 0.5, 0.1],
            [0.3, 0.3, 0.4],
        ),
    ],
)
def test_methods_played_side_by_side_take_the_steps_each_takes_alone(game):
    """``learned_all`` stacks the methods' games (one backward, one Adam step for all):
    every method's point is the one-method reference's, bit for bit."""
    config = fp.PlayConfig(rounds=60)
    together = fp.learned_all(game, fp.METHODS, config)
    for method in fp.METHODS:
        alone = reference_learned(game, method, config)
        assert np.array_equal(together[method], alone), method
        assert np.array_equal(fp.learned(game, method, config), alone), method


def test_bad_games_are_refused():
    with pytest.raises(UsageError, match="row 2 sums"):
        fp.make_game([[0.5, 0.5], [0.5, 0.6]], [1, 0], [0.5, 0.5])
    with pytest.raises(UsageError, match="one --confidence"):
        fp.make_game([[0.5, 0.5]], [1, 0], [1.0])
    with pytest.raises(UsageError, match="shares sum"):
        fp.make_game([[0.5, 0.5], [0.5, 0.5]], [1, 0], [0.5, 0.6])
    with pytest.raises(UsageError, match="no positive mass"):
        fp.make_game([[0.5, 0.5]], [0.0], [1.0])
