"""`exicl calibrate`'s candidates and scores (the GDV run itself is the CLI test's)."""

from __future__ import annotations

import numpy as np

from iclr25.core.exicl.calibrate import candidate_masks, precision_recall
from iclr25.core.exicl.layouts import make_layout
from iclr25.core.exicl.verifier import most_restrictive_mask, relevant_region


def test_precision_recall_known_answer():
    exact = np.array([True, True, False, False, True])
    gdv = np.array([True, False, True, True, True])
    out = precision_recall(exact, gdv)
    # TP = 2 (rows 0, 4); GDV says feasible 4 times, exact 3 times
    assert out["precision"] == 0.5 and out["recall"] == 2 / 3 and out["agreement"] == 0.4
    none = precision_recall(np.zeros(3, bool), np.zeros(3, bool))
    assert none["precision"] is None and none["recall"] is None and none["agreement"] == 1.0


def test_candidates_stay_in_the_region_and_leave_expert_cells_open():
    lay = make_layout("wall", 0)
    region = relevant_region(lay.spec, lay.demos)
    allowed = most_restrictive_mask(lay.spec, lay.demos)
    masks, kind = candidate_masks(lay.hidden, region, allowed, 40, seed=1)
    assert masks.shape == (40, 16, 16) and (kind == 0).sum() == 20
    assert not (masks & ~allowed[None]).any()  # nothing the experts need is forbidden
    random = masks[kind == 1]
    assert not (random & ~region[None]).any()
    flipped = (masks[kind == 0] ^ (lay.hidden & allowed)[None]) & region[None]
    assert flipped.any() and not (masks[kind == 0] ^ (lay.hidden & allowed))[:, ~region].any()
