"""`iclr25 exicl` through the real console script: exact verdicts, errors, reproducibility."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iclr25.core.exicl.demos import Demos, save_npz
from iclr25.core.exicl.layouts import make_layout

EXPERT = [(0, 0), (1, 1), (1, 2), (1, 3), (2, 3), (3, 3), (3, 2), (3, 1), (4, 0)]


@pytest.fixture
def small(tmp_path):
    """A 5×5 spec, the expert over a hidden wall at x = 2, and masks (hidden, empty)."""
    env = tmp_path / "env.json"
    env.write_text(json.dumps({"type": "grid2d", "width": 5, "height": 5}))
    demos = tmp_path / "demos.npz"
    save_npz(demos, Demos([np.array(EXPERT)]))
    masks = np.zeros((2, 5, 5), bool)
    masks[0, 0:3, 2] = True
    path = tmp_path / "masks.npz"
    np.savez(path, masks=masks)
    return env, demos, path


def test_verify_gives_the_hand_computed_verdicts(cli, small):
    env, demos, masks = small
    result = cli("exicl", "verify", "--env", env, "--demos", demos, "--masks", masks, "--json")
    assert result.returncode == 0, result
    res = result.json()["results"]
    hidden, empty = res["constraints"]
    assert hidden["exact_feasible"] and hidden["return_gap"] == pytest.approx(0, abs=1e-9)
    assert not empty["exact_feasible"]
    assert empty["return_gap"] == pytest.approx(2 + 2 * np.sqrt(2))  # 6 + 2√2 − 4
    assert res["n_exact_feasible"] == 1 and res["n_distinct_feasible"] == 1


def test_verify_builtin_layout_hidden_constraint_is_feasible(cli, tmp_path):
    lay = make_layout("box", 3)
    path = tmp_path / "m.npz"
    np.savez(path, masks=np.stack([lay.hidden, np.zeros_like(lay.hidden)]))
    result = cli("exicl", "verify", "--layout", "box", "--seed", "3", "--masks", path, "--json")
    assert result.returncode == 0, result
    rows = result.json()["results"]["constraints"]
    assert rows[0]["exact_feasible"] and rows[0]["iou_with_true"] == 1.0
    assert not rows[1]["exact_feasible"]


@pytest.mark.parametrize(
    "args, message",
    [
        (("--env", "missing.json"), "--env missing.json: no such file"),
        (("--k", "0"), "--k 0 is out of range"),
        (("--tolerance", "-0.1"), "--tolerance -0.1"),
        (("--sparsity", "-1"), "--sparsity -1.0 is out of range"),
        (("--horizon", "5"), "--horizon 5 is below episode"),
    ],
)
def test_recover_bad_input_is_one_line_exit_2(cli, small, tmp_path, args, message):
    env, demos, _ = small
    base = ["exicl", "recover", "--env", env, "--demos", demos, "--out", tmp_path / "o"]
    if args[0] == "--env":
        base = ["exicl", "recover", "--demos", demos, "--out", tmp_path / "o"]
    result = cli(*base, *args)
    assert result.returncode == 2, result
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()


def test_unknown_env_type_and_unexplainable_demo(cli, tmp_path):
    env = tmp_path / "env.json"
    env.write_text(json.dumps({"type": "maze", "width": 5, "height": 5}))
    demos = tmp_path / "d.npz"
    save_npz(demos, Demos([np.array([(0, 0), (1, 0), (1, 1), (0, 1), (0, 2)])]))
    result = cli("exicl", "recover", "--env", env, "--demos", demos)
    assert result.returncode == 2 and "grid2d, point2d" in result.stderr
    env.write_text(json.dumps({"type": "grid2d", "width": 5, "height": 5}))
    result = cli("exicl", "recover", "--env", env, "--demos", demos)
    assert result.returncode == 2
    assert "no state constraint explains episode 0" in result.stderr
    assert "gap 2.000" in result.stderr


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_prior_for_another_spec_is_refused(cli, small, tmp_path):
    env, demos, _ = small
    prior = tmp_path / "p.safetensors"
    small_prior = ("--train-steps", "5", "--trajectories", "20", "--horizon", "12", "--json")
    trained = cli("exicl", "train-prior", "--env", env, "--demos", demos, "--save", prior,
                  *small_prior)  # fmt: skip
    assert trained.returncode == 0, trained
    res = trained.json()["results"]
    assert res["saved_to"] == str(prior) and 0 <= res["legal_move_rate"] <= 1
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"type": "grid2d", "width": 5, "height": 5, "walls": [[4, 4]]}))
    result = cli("exicl", "recover", "--env", other, "--demos", demos, "--prior", prior)
    assert result.returncode == 2 and "trained for another spec" in result.stderr
    again = cli("exicl", "train-prior", "--env", env, "--demos", demos, "--save", prior)
    assert again.returncode == 2 and "--overwrite" in again.stderr


@pytest.mark.slow  # > 10 s: run by `make test-slow`
@pytest.mark.timeout(1200)  # three console-script runs; slow only on a crowded machine
def test_recover_same_seed_same_results(cli, small, tmp_path):
    env, demos, _ = small
    prior = tmp_path / "p.safetensors"
    cli("exicl", "train-prior", "--env", env, "--demos", demos, "--save", prior,
        "--train-steps", "20", "--trajectories", "40", "--horizon", "12")  # fmt: skip
    args = ("exicl", "recover", "--env", env, "--demos", demos, "--prior", prior, "--k", "1",
            "--rounds", "2", "--samples", "4", "--json", "--seed", "5")  # fmt: skip
    a, b = cli(*args, timeout=600), cli(*args, timeout=600)
    assert a.returncode == 0, a
    ra, rb = a.json()["results"], b.json()["results"]
    assert ra == rb
    assert len(ra["constraints"]) == 1 and ra["trivial"] is False
    for row in ra["constraints"]:  # the exact verdict agrees with its own gap
        if row["exact_feasible"]:
            assert row["expert_violations"] == 0 and row["relative_gap"] <= 0.1 + 1e-9


def test_calibrate_reports_precision_and_recall(cli):
    result = cli("exicl", "calibrate", "--candidates", "2", "--json")
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["candidates"] == 2 and set(res["by_kind"]) == {"perturbed", "random"}
    assert res["gdv_feasible"] + res["exact_feasible"] <= 4
    for key in ("precision", "recall"):
        assert res[key] is None or 0.0 <= res[key] <= 1.0
    bad = cli("exicl", "calibrate", "--candidates", "0")
    assert bad.returncode == 2 and "--candidates 0 is below 1" in bad.stderr
