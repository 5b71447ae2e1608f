from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25 import atomic
from iclr25.errors import UsageError
from iclr25.output import dumps, to_jsonable
from iclr25.testing import assert_close


def test_write_json_is_atomic_and_leaves_no_temp(tmp_path):
    target = tmp_path / "a" / "x.json"
    atomic.write_json(target, {"a": 1})
    assert target.read_text().strip() == '{\n  "a": 1\n}'
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_written_files_get_ordinary_permissions(tmp_path):
    import os

    mask = os.umask(0o022)
    try:
        target = tmp_path / "w.bin"
        atomic.write_bytes(target, b"x")
        assert target.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(mask)


def test_failed_write_keeps_old_file(tmp_path):
    target = tmp_path / "x.json"
    atomic.write_json(target, {"a": 1})
    with pytest.raises(ValueError):
        atomic.write_json(target, {"a": float("nan")})  # strict JSON refuses NaN
    assert target.read_text().strip().endswith("}")
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_staged_dir_success_and_failure(tmp_path):
    final = tmp_path / "out"
    with atomic.staged_dir(final) as stage:
        (stage / "f.txt").write_text("x")
        assert not final.exists()
    assert (final / "f.txt").read_text() == "x"
    with pytest.raises(UsageError):
        with atomic.staged_dir(final):
            pass
    with pytest.raises(RuntimeError):
        with atomic.staged_dir(final, overwrite=True) as stage:
            (stage / "g.txt").write_text("y")
            raise RuntimeError("fail mid-way")
    assert sorted(p.name for p in final.iterdir()) == ["f.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with atomic.staged_dir(final, overwrite=True) as stage:
        (stage / "g.txt").write_text("y")
    assert sorted(p.name for p in final.iterdir()) == ["g.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_refuse_existing_file(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(UsageError, match="--overwrite"):
        atomic.refuse_existing(f, overwrite=False)
    atomic.refuse_existing(f, overwrite=True)


def test_to_jsonable_handles_numpy_and_non_finite():
    data = {
        "a": np.float32(1.5),
        "b": np.arange(3),
        "c": float("nan"),
        "d": -math.inf,
        "e": (1, 2),
        "f": {np.int64(3): np.bool_(True)},
    }
    out = to_jsonable(data)
    assert out == {"a": 1.5, "b": [0, 1, 2], "c": None, "d": "-inf", "e": [1, 2], "f": {"3": True}}
    dumps({"x": out})  # strict JSON


def test_assert_close_reports_worst_element():
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]))
    with pytest.raises(AssertionError, match=r"1 of 3 elements differ.*index \(2,\)"):
        assert_close(np.array([1.0, 2.0, 3.5]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(AssertionError, match="shape mismatch"):
        assert_close(np.zeros(2), np.zeros(3))
    with pytest.raises(AssertionError):
        assert_close(np.array([np.nan]), np.array([1.0]))
    assert_close(np.array([np.nan, np.inf]), np.array([np.nan, np.inf]))
