"""Shared fixtures of the exicl tests: a 5×5 grid with a hidden wall and its expert."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.spec import open_grid

SQRT2 = math.sqrt(2.0)
# 5×5, 8-connected, no corner cutting; hidden wall at x = 2, y = 0…2. The expert goes
# from (0, 0) to (4, 0) over the wall: √2 + 1 + 1 + 1 + 1 + 1 + 1 + √2 = 6 + 2√2
# (the diagonals (1, 2)→(2, 3) and (2, 3)→(3, 2) would cut the wall's corner (2, 2)).
EXPERT = [(0, 0), (1, 1), (1, 2), (1, 3), (2, 3), (3, 3), (3, 2), (3, 1), (4, 0)]
EXPERT_LENGTH = 6 + 2 * SQRT2


@pytest.fixture
def small():
    spec = open_grid(5, 5)
    hidden = np.zeros((5, 5), dtype=bool)
    hidden[0:3, 2] = True  # [y, x]
    demos = Demos([np.array(EXPERT, dtype=np.int64)])
    return spec, demos, hidden


def mask_of(cells, size: int = 5) -> np.ndarray:
    m = np.zeros((size, size), dtype=bool)
    for x, y in cells:
        m[y, x] = True
    return m
