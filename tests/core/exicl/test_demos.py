"""Reading and validating demonstrations: npz = parquet, one clear error per defect."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.exicl.demos import Demos, load_demos, save_npz
from iclr25.core.exicl.spec import spec_from_dict
from iclr25.errors import InputError

from .conftest import EXPERT

SPEC = spec_from_dict({"type": "grid2d", "width": 5, "height": 5, "walls": [[4, 4]]})


def _npz(tmp_path, states, actions=None, name="d.npz", lengths=None):
    path = tmp_path / name
    arrays = {"states": np.asarray(states, float)}
    if actions is not None:
        arrays["actions"] = np.asarray(actions, float)
    if lengths is not None:
        arrays["lengths"] = np.asarray(lengths)
    np.savez(path, **arrays)
    return path


def test_npz_and_parquet_agree(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    demos = Demos([np.array(EXPERT), np.array([(0, 0), (1, 0), (2, 0)])])
    save_npz(tmp_path / "d.npz", demos)
    rows = {"episode": [], "t": [], "x": [], "y": [], "dx": [], "dy": []}
    for k, e in enumerate(demos.episodes):
        for t, (x, y) in enumerate(e):
            d = e[t + 1] - e[t] if t + 1 < len(e) else (None, None)
            for key, v in zip(rows, (k, t, x, y, *d), strict=True):
                rows[key].append(None if v is None else int(v))
    pq.write_table(pa.table(rows), tmp_path / "d.parquet")
    a = load_demos(tmp_path / "d.npz", SPEC)
    b = load_demos(tmp_path / "d.parquet", SPEC)
    assert len(a) == len(b) == 2
    for x, y in zip(a.episodes, b.episodes, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    "states, actions, match",
    [
        ([[[0, 0], [1, 0], [7, 0]]], None, r"episode 0, t = 2: state \[7, 0\] is off the 5×5"),
        ([[[0, 0], [1, 0], [1.5, 0]]], None, r"t = 2: state \[1.5, 0.0\] is not a cell"),
        ([[[3, 3], [4, 4]]], None, r"t = 1: state \[4, 4\] is a wall"),
        ([[[0, 0], [2, 0]]], None, r"t = 0: move \[2, 0\] from \[0, 0\] is longer than a cell"),
        ([[[3, 4], [4, 3]]], None, r"cuts a wall's corner"),
        ([[[0, 0], [np.nan, 0]]], None, r"t = 1: NaN"),
        ([[[0, 0], [1, 0], [2, 0]]], [[[1, 0], [0, 1]]], r"episode 0, t = 1: action \[0.0, 1.0\]"),
    ],
)
def test_bad_demos_name_episode_and_step(tmp_path, states, actions, match):
    path = _npz(tmp_path, states, actions)
    with pytest.raises(InputError, match=match):
        load_demos(path, SPEC)


def test_short_episode_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="episode 1 has 1 state"):
        load_demos(_npz(tmp_path, [[[0, 0], [1, 0]], [[0, 0], [0, 0]]], lengths=[2, 1]), SPEC)
    with pytest.raises(InputError, match="no such file"):
        load_demos(tmp_path / "missing.npz", SPEC)


def test_unknown_env_type_lists_the_types():
    with pytest.raises(InputError, match="grid2d, point2d"):
        spec_from_dict({"type": "maze"})
