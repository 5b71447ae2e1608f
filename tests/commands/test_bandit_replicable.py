"""`iclr25 bandit-replicable` through the real console script."""

from __future__ import annotations

import pytest

from iclr25.testing import error_line

SMALL = ("--horizon", "3000", "--runs", "200", "--k", "4", "--seed", "3")


def test_run_json_contract_and_reproducibility(cli):
    first = cli("bandit-replicable", "run", "--algo", "etc", *SMALL, "--json")
    assert first.returncode == 0, first
    results = first.json()["results"]
    assert isinstance(results["mean_regret"], float)
    lo, hi = results["mean_regret_ci95"]
    assert lo <= results["mean_regret"] <= hi
    assert isinstance(results["traces_covering_1_minus_delta"], int)
    assert results["list_bound"] == 4 and results["guarantee_held"] is True
    assert results["distinct_traces"] <= 4
    again = cli("bandit-replicable", "run", "--algo", "etc", *SMALL, "--json")
    assert again.json()["results"] == results
    other = cli("bandit-replicable", "run", "--algo", "etc", *SMALL[:-1], "4", "--json")
    assert other.json()["results"]["mean_regret"] != results["mean_regret"]


@pytest.mark.parametrize(
    "args,fix",
    [
        (("--k", "1"), "--k 2"),
        (("--k", "5", "--horizon", "3"), "--horizon 5"),
        (("--delta", "1.5"), "--delta 0.05"),
        (("--means", "0.5,1.2"), "--noise gaussian"),
        (("--algo", "list-batched", "--batches", "1"), "--batches 2"),
        (("--algo", "greedy"), "list-k-delta"),
        (("--runs", "1000000000000"), "--runs"),
    ],
)
def test_bad_input_exits_2_with_a_fix(cli, args, fix):
    result = cli("bandit-replicable", "run", "--horizon", "1000", *args)
    assert result.returncode == 2, result
    assert error_line(result.stderr).startswith("Error: ") and fix in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "args,fix",
    [
        (("sweep", "--gap-points", "0"), "--gap-points 8"),
        (("sweep", "--t-min", "100", "--t-max", "10"), "--t-min 1000"),
        (("compare", "--algos", "etc,nope"), "replicable-elimination"),
        (("lower-bound", "--gap", "0"), "--gap 0.2"),
    ],
)
def test_other_commands_reject_bad_input(cli, args, fix):
    result = cli("bandit-replicable", *args)
    assert result.returncode == 2, result
    assert error_line(result.stderr).startswith("Error: ") and fix in result.stderr


def test_memory_error_says_how_much(cli):
    result = cli("bandit-replicable", "run", "--runs", "1000000000000", "--horizon", "1000")
    assert "GiB" in result.stderr


def test_out_dir_has_plots_and_is_not_overwritten(cli, tmp_path):
    out = tmp_path / "run"
    args = ("bandit-replicable", "run", "--algo", "list-batched", *SMALL, "--out", out)
    first = cli(*args)
    assert first.returncode == 0, first
    names = sorted(p.name for p in out.iterdir())
    assert names == ["config.json", "regret_curve.png", "result.json", "trace_frequencies.png"]
    before = (out / "result.json").read_bytes()
    second = cli(*args)
    assert second.returncode == 2 and "--overwrite" in second.stderr
    assert (out / "result.json").read_bytes() == before


def test_linear_runs(cli):
    ball = cli(
        "bandit-replicable",
        "run",
        "--algo",
        "linear-batched",
        "--env",
        "linear",
        "--arms",
        "0",
        "--dim",
        "3",
        "--horizon",
        "20000",
        "--runs",
        "200",
        "--json",
    )
    assert ball.returncode == 0, ball
    results = ball.json()["results"]
    assert results["instance"]["kind"] == "linear-ball"
    assert results["list_bound"] == 49 and results["guarantee_held"] is True
    wrong = cli("bandit-replicable", "run", "--algo", "ucb1", "--env", "linear", "--arms", "0")
    assert wrong.returncode == 2 and "--arms N" in wrong.stderr


def test_compare_sweep_and_lower_bound(cli, tmp_path):
    compare = cli(
        "bandit-replicable",
        "compare",
        "--algos",
        "etc,list-2k,thompson",
        *SMALL,
        "--json",
        "--out",
        tmp_path / "cmp",
    )
    assert compare.returncode == 0, compare
    algos = compare.json()["results"]["algorithms"]
    assert [a["algorithm"] for a in algos] == ["etc", "list-2k", "thompson"]
    assert algos[2]["distinct_traces"] == 200  # Thompson: every execution its own trace
    assert (tmp_path / "cmp" / "trace_frequencies.png").exists()
    sweep_args = (
        *("bandit-replicable", "sweep", "--algo", "list-batched", "--batches", "2"),
        *("--t-min", "1000", "--t-max", "100000", "--points", "3", "--runs", "100"),
        *("--gap-points", "3"),
    )
    sweep = cli(*sweep_args, "--json")
    assert sweep.returncode == 0, sweep
    doc = sweep.json()["results"]
    assert doc["claimed_exponent"] == 0.625 and abs(doc["design_exponent"] - 2 / 3) < 1e-12
    assert doc["batches"] == 2 and doc["batches_needed_for_claim"] == 3
    human = " ".join(cli(*sweep_args).stdout.split())
    assert "claimed 0.625" in human and "claim needs ≥ 3 batches" in human
    assert isinstance(doc["fitted_exponent"], float) and len(doc["rows"]) == 3
    lower = cli(
        "bandit-replicable",
        "lower-bound",
        "--t-min",
        "1000",
        "--t-max",
        "100000",
        "--points",
        "3",
        "--runs",
        "200",
        "--json",
    )
    assert lower.returncode == 0, lower
    rows = lower.json()["results"]["rows"]
    assert rows[-1]["capped_worst_regret_over_T"] > 10 * rows[-1]["etc_worst_regret_over_T"]


def test_shared_randomness_measures_rho(cli):
    args = ("--means", "0.75,0,0.375", "--noise", "gaussian", "--sigma", "0.05")
    base = ("bandit-replicable", "run", "--algo", "replicable-elimination", *args)
    base += ("--horizon", "300000", "--runs", "400", "--delta", "0.2", "--json")
    fresh = cli(*base).json()["results"]
    shared = cli(*base, "--shared-randomness").json()["results"]
    assert fresh["shared_randomness"] is False and shared["shared_randomness"] is True
    assert fresh["pair_agreement"] < 0.4 and fresh["rho_held"] is None
    assert shared["pair_agreement"] >= 0.8 and shared["rho_held"] is True
    lo, hi = shared["pair_agreement_ci95"]
    assert lo <= shared["pair_agreement"] <= hi


def test_help_lists_json_keys_and_algorithms(cli):
    result = cli("bandit-replicable", "run", "--help")
    assert result.returncode == 0
    text = "".join(c for c in result.stdout if not c.isspace() and c not in "│╭╮╰╯─")
    assert "traces_covering_1_minus_delta" in text and "successive-elimination" in text
    assert "pair_agreement" in text and "replicable-elimination" in text


def test_demo_step_headline(tmp_path):
    from iclr25.commands.bandit_replicable import DEMO
    from iclr25.commands.demo import _run_step

    (step,) = DEMO
    outcome = _run_step(step, tmp_path / "demo", seed=0, device="cpu")
    assert outcome["status"] == "ok", outcome
    assert outcome["headline"].startswith("Alg. 1:") and "UCB1: 400 traces" in outcome["headline"]
    assert (tmp_path / "demo" / "trace_frequencies.png").exists()
