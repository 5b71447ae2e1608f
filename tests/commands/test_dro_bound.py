"""`iclr25 dro-bound` through the real console script."""

from __future__ import annotations

import json

import numpy as np
import pytest


@pytest.fixture
def csv_data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X @ np.array([1.0, -0.5, 0.2]) + 0.5 * rng.normal(size=120) > 0).astype(int)
    path = tmp_path / "train.csv"
    lines = ["a,b,c,label"] + [f"{r[0]},{r[1]},{r[2]},{t}" for r, t in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_certify_on_synthetic_data(cli):
    result = cli(
        "dro-bound",
        "certify",
        "--synthetic",
        "gaussian-classes",
        "--n",
        "300",
        "--bootstrap",
        "40",
        "--json",
        "--quiet",
    )
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["rho"] == pytest.approx(res["radius_constant"] * (np.log(20) / 300) ** 0.5)
    assert res["robust_risk"] >= res["empirical_risk"]
    assert res["certified_margin"] == pytest.approx(res["robust_risk"] - res["empirical_risk"])
    assert "n = 300" in res["statement"] and "95%" in res["statement"]
    assert isinstance(res["bound_holds"], bool) and res["true_risk"] > 0


def test_fit_save_then_risk_and_certify_load(cli, csv_data, tmp_path):
    model = tmp_path / "model.json"
    fit = cli(
        "dro-bound",
        "fit",
        "--data",
        csv_data,
        "--target",
        "label",
        "--rho",
        "0.05",
        "--save",
        model,
        "--json",
    )
    assert fit.returncode == 0, fit
    res = fit.json()["results"]
    for key in ("robust_objective", "lambda", "coefficients", "erm_objective"):
        assert key in res
    assert len(res["coefficients"]) == 3
    assert res["robust_objective"] < res["erm_robust_risk"]  # robust fit is better robustly
    assert res["erm_objective"] <= res["empirical_risk"] + 1e-9  # and ERM fits better
    assert json.loads(model.read_text())["features"] == ["a", "b", "c"]
    # the loaded model's robust risk at the same radius is the fitted objective (q = 1 exact)
    risk = cli("dro-bound", "risk", "--data", csv_data, "--load", model, "--rho", "0.05", "--json")
    assert risk.returncode == 0, risk
    assert risk.json()["results"]["robust_risk"] == pytest.approx(res["robust_objective"], rel=1e-9)
    cert = cli(
        "dro-bound",
        "certify",
        "--data",
        csv_data,
        "--load",
        model,
        "--radius-constant",
        "0.5",
        "--json",
    )
    assert cert.returncode == 0, cert
    assert cert.json()["results"]["radius_source"] == "user-supplied"
    # --save never overwrites
    again = cli("dro-bound", "fit", "--data", csv_data, "--target", "label", "--save", model)
    assert again.returncode == 2
    assert "choose another --save path" in again.stderr


@pytest.mark.parametrize(
    "args,fix",
    [
        (("risk", "--synthetic", "gaussian-classes", "--rho", "-0.1"), "pass ρ ≥ 0"),
        (("risk", "--synthetic", "gaussian-classes", "--epsilon", "0"), "pass ε > 0"),
        (("risk", "--data", "missing.csv"), "check the --data path"),
        (("fit", "--synthetic", "linear-gaussian", "--kappa", "1"), "classification only"),
        (("fit", "--synthetic", "linear-gaussian", "--loss", "squared", "--rho", "0.1"), "--q 2"),
        (("coverage", "--n-grid", "ten"), "--n-grid 50,200,800"),
        (
            ("risk", "--synthetic", "gaussian-classes", "--model", "mlp", "--rho", "auto"),
            "--radius-constant",
        ),
    ],
)
def test_bad_options_exit_2_with_a_fix(cli, args, fix):
    result = cli("dro-bound", *args)
    assert result.returncode == 2, result
    assert result.stderr.startswith("Error: ")
    assert fix in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_table_names_the_location(cli, tmp_path):
    path = tmp_path / "nan.csv"
    path.write_text("a,b,label\n1,2,0\n3,,1\n5,6,1\n")
    result = cli("dro-bound", "fit", "--data", path, "--target", "label")
    assert result.returncode == 2
    assert "1 missing or infinite value(s) in column(s) ['b'], rows 2" in result.stderr
    wrong = cli("dro-bound", "fit", "--data", path, "--target", "y")
    assert "--target" in wrong.stderr


def test_coverage_writes_plots_and_never_overwrites(cli, tmp_path):
    out = tmp_path / "cov"
    args = (
        "dro-bound",
        "coverage",
        "--n-grid",
        "60,120",
        "--d-grid",
        "2",
        "--trials",
        "10",
        "--bootstrap",
        "20",
        "--test-size",
        "5000",
        "--json",
        "--out",
        out,
    )
    first = cli(*args)
    assert first.returncode == 0, first
    res = first.json()["results"]
    assert [c["n"] for c in res["cells"]] == [60, 120]
    assert all(0.0 <= c["coverage"] <= 1.0 for c in res["cells"])
    assert {p.name for p in out.iterdir()} >= {
        "coverage_vs_n.png",
        "gap_vs_n.png",
        "coverage_vs_d.png",
        "result.json",
    }
    second = cli(*args)
    assert second.returncode == 2 and "--overwrite" in second.stderr


def test_help_lists_result_keys(cli):
    result = cli("dro-bound", "fit", "--help")
    assert result.returncode == 0
    for key in ("robust_objective", "lambda", "coefficients", "erm_objective"):
        assert key in result.stdout
