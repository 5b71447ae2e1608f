"""One-artist verification: the threshold keeps the background's acceptance at the level
asked for, the artist's own new works are accepted, other works are not."""

from __future__ import annotations

import numpy as np

from iclr25.core.style_check.verify import VerifyConfig, calibrate, verify_set


def _clouds(shift: float, n_a: int = 30, n_bg: int = 120, d: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    centre = np.zeros(d)
    centre[0] = shift
    X_a = rng.normal(size=(n_a, d)) + centre
    X_bg = rng.normal(size=(n_bg, d))
    return X_a, X_bg, rng


def test_threshold_accepts_at_most_the_asked_share_of_background():
    X_a, X_bg, _ = _clouds(4.0)
    cfg = VerifyConfig(false_accept=0.05)
    v = calibrate(X_a, X_bg, None, cfg)
    assert v.background_accept <= 0.05  # measured on held-out background scores
    assert v.heldout_accept >= 0.9 and v.ci[0] <= v.heldout_accept <= v.ci[1]
    # floor(0.05 * 120) = 6 background works may be accepted: tau is the 7th largest score
    assert v.n_background == 120 and v.n_works == 30


def test_own_new_works_are_accepted_and_background_is_not():
    X_a, X_bg, rng = _clouds(4.0)
    cfg = VerifyConfig()
    v = calibrate(X_a, X_bg, None, cfg)
    new_a = rng.normal(size=(10, 12)) + np.r_[4.0, np.zeros(11)]
    own = verify_set(v, new_a, cfg)
    assert own["in_style"] and own["accepted_share"] >= 0.8 and own["binomial_p"] < 1e-6
    other = verify_set(v, rng.normal(size=(10, 12)), cfg)
    assert not other["in_style"] and other["accepted_share"] <= 0.3


def test_an_artist_like_the_background_is_not_distinguishable():
    """No shift: the artist's held-out works are accepted about as often as background."""
    X_a, X_bg, _ = _clouds(0.0)
    v = calibrate(X_a, X_bg, None, VerifyConfig())
    assert v.heldout_accept < VerifyConfig().threshold
