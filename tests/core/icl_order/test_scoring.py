"""The self-adaptive entropy criterion."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from iclr25.core.icl_order.scoring import entropy, label_distribution
from iclr25.testing import assert_close


def test_known_answers():
    # uniform over L labels: H = log L (nats); a certain prediction: H -> 0
    assert_close(entropy(np.zeros(4)), math.log(4))
    assert entropy(np.array([100.0, 0.0, 0.0])) < 1e-40
    # two labels with p = (0.75, 0.25): H = -(0.75 ln 0.75 + 0.25 ln 0.25) = 0.5623...
    logits = np.log(np.array([0.75, 0.25]))
    assert_close(entropy(logits), 0.5623351446188083, rtol=1e-12)
    assert_close(label_distribution(logits), np.array([0.75, 0.25]), rtol=1e-12)


@given(
    arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 6)), elements=st.floats(-50, 50))
)
def test_entropy_bounds_and_shift_invariance(logits):
    h = entropy(logits)
    assert h.shape == logits.shape[:1]
    assert (h >= -1e-12).all() and (h <= math.log(logits.shape[1]) + 1e-9).all()
    assert_close(entropy(logits + 7.5), h, rtol=1e-9, atol=1e-9)
    assert_close(label_distribution(logits).sum(axis=-1), np.ones(len(logits)), rtol=1e-12)
