"""`iclr25 pn-gail` through the real console script, and the study on every backend."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iclr25.testing import error_line

# the paper note's game, closed forms computed by hand there:
# GAIL p_d = 0.2·A + 0.8·B; 2IWIL B/ΣB; PN-GAIL max(0, κB − N)
NOTE_POINTS = {
    "gail": [0.240, 0.100, 0.660],
    "2iwil": [0.489, 0.100, 0.411],
    "pn-gail": [0.738, 0.100, 0.162],
}


def test_fixed_point_matches_the_note_and_warns_when_play_is_short(cli):
    # the learned points' accuracy is tested in tests/core/pn_gail/test_fixed_point.py;
    # here the command path: closed forms, JSON keys, and the warning of a short play
    result = cli("pn-gail", "fixed-point", "--rounds", "10", "--json")
    assert result.returncode == 0, result
    doc = result.json()
    res = doc["results"]
    for method, expected in NOTE_POINTS.items():
        assert res["closed_form"][method] == pytest.approx(expected, abs=1e-3), method
        assert len(res["learned"][method]) == 3
    assert res["max_abs_error"] > 0.02  # 10 rounds cannot get there
    assert any("--rounds" in w for w in doc["warnings"])
    assert "Warning: " in result.stderr


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (("fixed-point", "--probs", "0.5,0.6;0.5,0.5"), "sums"),
        (("train", "--method", "dagger"), "pn-gail"),
        (("demos", "--labeled-fraction", "1.5"), "(0, 1]"),
        (("train", "--env", "NoSuchEnv-v9"), "pendulum"),
        (("compare", "--settings", "easy"), "dominated"),
    ],
)
def test_bad_options_one_line_exit_2(cli, args, fix):
    result = cli("pn-gail", *args)
    assert result.returncode == 2, result
    line = error_line(result.stderr)
    assert fix in line, line


@pytest.mark.slow  # > 10 s: run by `make test-slow`
@pytest.mark.timeout(1200)  # several CLI runs; minutes on a loaded shared machine
def test_demos_then_confidence_and_bad_files(cli, tmp_path):
    demos = tmp_path / "D.npz"
    made = cli("pn-gail", "demos", "--episodes", "1", "--save", demos, "--json")
    assert made.returncode == 0, made
    res = made.json()["results"]
    assert [d["level"] for d in res["demonstrators"]] == [0.0, 0.4, 0.6, 0.8, 1.0]
    conf = [d["confidence"] for d in res["demonstrators"]]
    assert all(a > b for a, b in zip(conf, conf[1:], strict=False))  # confidence falls as ε rises
    assert res["labeled"] == pytest.approx(0.2 * res["pairs"], abs=1)
    again = cli("pn-gail", "demos", "--episodes", "1", "--save", demos)
    assert again.returncode == 2 and "--overwrite" in error_line(again.stderr)

    completed = tmp_path / "D2.npz"
    args = ("--classifier-steps", "200", "--save", completed, "--json")
    filled = cli("pn-gail", "confidence", "--demos", demos, *args)
    assert filled.returncode == 0, filled
    res = filled.json()["results"]
    assert 0 <= res["mae_unlabeled"] <= 1 and res["correlation"] > 0
    saved = np.load(completed)
    assert not np.isnan(saved["confidence"]).any()

    data = dict(np.load(demos))
    data["confidence"] = np.where(np.isnan(data["confidence"]), np.nan, 1.5)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **data)
    out = tmp_path / "never.npz"
    refused = cli("pn-gail", "confidence", "--demos", bad, "--save", out)
    assert refused.returncode == 2, refused
    assert "[0, 1]" in error_line(refused.stderr) and not out.exists()


@pytest.mark.slow  # > 10 s: run by `make test-slow`
@pytest.mark.timeout(1200)  # several CLI runs; minutes on a loaded shared machine
def test_train_gail_short(cli, tmp_path):
    demos = tmp_path / "D.npz"
    assert cli("pn-gail", "demos", "--episodes", "1", "--save", demos).returncode == 0
    args = ("--method", "gail", "--demos", demos, "--steps", "2048", "--oracle-confidence")
    result = cli("pn-gail", "train", *args, "--json")
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["env_steps"] == 2048 and res["curve"][-1]["env_steps"] == 2048
    assert res["normalized_return"] is not None and res["normalized_return"] < 2


@pytest.mark.slow  # several CLI studies: keeps the command's non-slow tests within budget
@pytest.mark.timeout(1200)  # several CLI runs; minutes on a loaded shared machine
def test_study_results_are_the_same_on_every_backend():
    from iclr25.core.pn_gail import study
    from iclr25.core.pn_gail.confidence import ClassifierConfig
    from iclr25.core.pn_gail.demos import DemoConfig
    from iclr25.core.pn_gail.trainer import TrainConfig
    from iclr25.parallel_options import execution

    config = study.CompareConfig(
        settings=("dominated",),
        methods=("gail", "pn-gail-shuffled", "weighted-bc"),
        seeds=2,
        train=TrainConfig(steps=1024, n_envs=4, n_steps=128, critic_batch=128),
        classifier=ClassifierConfig(steps=50),
        demo=DemoConfig(episodes=1),
    )
    config = dataclasses.replace(config, bc=dataclasses.replace(config.bc, steps=50))
    serial, _ = study.run_study(config, 11, execution(1, None, True))
    pooled, _ = study.run_study(config, 11, execution(2, None, True))
    assert serial == pooled
    dom = serial["settings"]["dominated"]["methods"]
    assert set(dom) == {"gail", "pn-gail-shuffled", "weighted-bc"}
    assert serial["conditions"][0]["passed"] is None  # pn-gail was not run: no verdict
    assert serial["verdict"].startswith("incomplete")


def test_a_quick_study_runs_its_fixed_point_check_as_a_first_stage_task(monkeypatch):
    """``compare --quick``'s fixed-point check is a task beside the demonstrations (so
    ``--workers 2`` overlaps them): it is in the results, solved with the run's seed, and
    counted by the progress bar. The solver is replaced by a cheap stand-in here (its
    accuracy is tested in tests/core/pn_gail/test_fixed_point.py)."""
    from iclr25.core.pn_gail import fixed_point, study
    from iclr25.core.pn_gail.confidence import ClassifierConfig
    from iclr25.core.pn_gail.demos import DemoConfig
    from iclr25.parallel_options import execution

    def solve(game, seed=0):
        return {"seed": seed, "p_d": game.p_d.tolist()}

    monkeypatch.setattr(fixed_point, "solve", solve)
    config = study.CompareConfig(
        settings=("dominated",),
        methods=("weighted-bc",),
        seeds=1,
        classifier=ClassifierConfig(steps=20),
        demo=DemoConfig(episodes=1),
        quick=True,
    )
    config = dataclasses.replace(config, bc=dataclasses.replace(config.bc, steps=20))
    done: list = []
    results, (first, _) = study.run_study(config, 7, execution(1, None, True), done.append)
    game = fixed_point.make_game(*study.QUICK_GAME)
    assert results["fixed_point"] == {"seed": 7, "p_d": game.p_d.tolist()}
    assert len(first.results) == 2  # the check and the seed's demonstrations
    assert len(done) == study.task_count(config) == 3
    assert study.task_count(dataclasses.replace(config, quick=False)) == 2


def test_quick_compare_runs_its_two_training_runs_side_by_side_unless_the_machine_is_busy(
    monkeypatch,
):
    """Without --workers, ``compare --quick`` uses two processes (GAIL and PN-GAIL at once;
    the results do not depend on it: tested above) unless other work leaves less than half
    a core free, then in-process; a full study and an explicit --workers keep theirs."""
    from typer.testing import CliRunner

    from iclr25.cli import build_app
    from iclr25.core.pn_gail import study

    assert study.default_workers(True, 2.0) == 2 and study.default_workers(True, 0.6) == 2
    assert study.default_workers(True, 0.4) == 1 and study.default_workers(False, 16.0) == 1
    seen = []

    def run_study(config, seed, execution, on_done):
        seen.append(execution.workers)
        raise SystemExit(0)  # stop before any work

    monkeypatch.setattr(study, "run_study", run_study)
    app, runner = build_app(), CliRunner()
    for free, args in [
        (0.8, ["--quick"]),
        (-3.0, ["--quick"]),
        (1.9, ["--quick", "--workers", "1"]),
        (1.9, ["--seeds", "3"]),
    ]:
        monkeypatch.setattr(study, "free_cores", lambda free=free: free)
        runner.invoke(app, ["pn-gail", "compare", *args, "--no-cache", "--json"])
    assert seen == [2, 1, 1, 1]
