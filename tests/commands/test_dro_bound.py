"""`iclr25 dro-bound` through the real console script."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iclr25.testing import error_line


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
    """The default radius is calibrated: c from held-out rows (stated), the model fitted and
    certified on the others, and every output says so."""
    result = cli(
        "dro-bound",
        "certify",
        "--synthetic",
        "gaussian-classes",
        "--n",
        "300",
        "--bootstrap",
        "20",
        "--json",
        "--quiet",
    )
    assert result.returncode == 0, result
    doc = result.json()
    res = doc["results"]
    assert res["radius_kind"] == "calibrated" and res["risk_kind"] == "exact"
    split = res["radius"]["split"]
    assert split["calibration_rows"] == 90 and split["certified_rows"] == 210 == res["n"]
    assert res["rho"] == pytest.approx(res["radius_constant"] * (np.log(20) / 210) ** 0.5)
    assert (
        res["guarantee"].startswith("calibrated")
        and "never on the 210 certified" in (res["guarantee"])
    )
    assert res["statement"].startswith("[calibrated]")
    assert any("is calibrated" in w for w in doc["warnings"])
    assert res["radius"]["bootstrap"]["optimism_correction"] >= 0
    assert res["robust_risk"] >= res["empirical_risk"]
    assert res["certified_margin"] == pytest.approx(res["robust_risk"] - res["empirical_risk"])
    assert "n = 210" in res["statement"] and "95%" in res["statement"]
    assert isinstance(res["bound_holds"], bool) and res["true_risk"] > 0


def test_certify_with_the_theory_radius(cli):
    """ball-classes, d = 3: ‖x‖₂ ≤ 1 + √5 ≈ 3.236 on the support; the theory radius of the
    ERM model is a proof under that bound, and its terms are in the output."""
    result = cli(
        "dro-bound", "certify", "--synthetic", "ball-classes", "--d", "3", "--rho", "theory",
        "--support-radius", "3.24", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["radius_kind"] == "theory" and res["statement"].startswith("[theory]")
    terms = res["radius"]["theory"]
    assert "Bartlett & Mendelson" in terms["theorem"] and "not Le & Malick" in terms["theorem"]
    assert res["rho"] == pytest.approx(terms["uniform_deviation"] / terms["dual_norm"])
    assert res["bound_holds"] is True and res["robust_risk"] > res["true_risk"]
    assert "ERM" in res["model_source"]


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_entropic_certificate_with_auto_radius(cli):
    """--rho auto works with --epsilon, and the statement bounds the smoothed risk."""
    result = cli(
        "dro-bound", "certify", "--synthetic", "gaussian-classes", "--n", "120", "--d", "2",
        "--epsilon", "0.05", "--samples", "16", "--bootstrap", "10", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result
    doc = result.json()
    res = doc["results"]
    assert res["risk_kind"] == "entropic" and res["radius_kind"] == "calibrated"
    assert "smoothed true risk" in res["statement"] and "not a bound on E_P ℓ" in res["statement"]
    assert res["entropic"]["sigma"] > 0 and "smoothed_true_risk" in res
    assert res["bound_holds"] == (res["robust_risk"] >= res["smoothed_true_risk"])
    assert any("smoothed risk" in w for w in doc["warnings"])


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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
    cres = cert.json()["results"]
    assert cres["radius_kind"] == "user" and cres["radius"]["constant"] == 0.5
    assert cres["guarantee"].startswith("user") and not cert.json()["warnings"]
    # --save never overwrites
    again = cli("dro-bound", "fit", "--data", csv_data, "--target", "label", "--save", model)
    assert again.returncode == 2
    assert "choose another --save path" in again.stderr
    # scoring is not fitting: with --load a test set of one class (and a constant column) is
    # fine, but its labels must be the model's
    positives = tmp_path / "pos.csv"
    positives.write_text("a,b,c,label\n0.5,0,1,1\n1.5,0,-1,1\n-0.2,0,0.3,1\n")
    coef = json.loads(model.read_text())["coefficients"]
    risk = cli("dro-bound", "risk", "--data", positives, "--load", model, "--rho", "0.05", "--json")
    assert risk.returncode == 0, risk
    res = risk.json()["results"]
    # q = 1, κ = ∞: R = E_n ℓ + ρ‖w‖₂ (closed form), all labels +1
    assert res["robust_risk"] == pytest.approx(
        res["empirical_risk"] + 0.05 * np.linalg.norm(coef), rel=1e-9
    )
    wrong = tmp_path / "pm.csv"
    wrong.write_text("a,b,c,label\n0.5,0,1,1\n1.5,0,-1,-1\n")
    bad = cli("dro-bound", "risk", "--data", wrong, "--load", model, "--rho", "0.05")
    assert bad.returncode == 2
    assert "labels -1, 1 are not the model's (0, 1)" in bad.stderr


@pytest.mark.parametrize(
    "args,fix",
    [
        (("risk", "--synthetic", "gaussian-classes", "--rho", "-0.1"), "pass ρ ≥ 0"),
        (("risk", "--synthetic", "gaussian-classes", "--epsilon", "0"), "pass ε > 0"),
        (("risk", "--data", "missing.csv"), "check the --data path"),
        (("fit", "--synthetic", "linear-gaussian", "--loss", "squared", "--q", "1"), "--q 2"),
        (("certify", "--synthetic", "gaussian-classes", "--rho", "theory"), "--support-radius"),
        (("risk", "--synthetic", "gaussian-classes", "--rho", "lots"), "or theory"),
        (
            (
                "certify",
                "--synthetic",
                "gaussian-classes",
                "--rho",
                "0.1",
                "--radius-constant",
                "1",
            ),
            "pass one of --rho R and --radius-constant C",
        ),
        (("coverage", "--n-grid", "ten"), "--n-grid 50,200,800"),
        (("coverage", "--kinds", "theory"), "theory kind does not apply"),
    ],
)
def test_bad_options_exit_2_with_a_fix(cli, args, fix):
    result = cli("dro-bound", *args)
    assert result.returncode == 2, result
    assert error_line(result.stderr).startswith("Error: ")
    assert fix in result.stderr
    assert "Traceback" not in result.stderr


BAD_TABLES = [
    # (CSV text, what the error must say) — each refused with exit 2, no traceback
    (
        "a,b,label\n1,2,0\nnan,4,1\n5,inf,1\n7,,0\n",
        "3 missing or infinite value(s) in 3 of 4 data rows, by column: 'a': 1 (row 2); "
        "'b': 2 (rows 3, 4)",
    ),
    ("a,b,label\n1,2,0\n3,4,1\n5,6,\n", "'label': 1 (row 3)"),
    ("a,b,label\n1,2,0\n3,x,1\n", "column 'b' is not numeric (data row 2: 'x')"),
    ("a,b,label\n1,2,0\n3,4,2\n5,6,1\n", "labels 0, 1, 2 are not in {−1, 1} or {0, 1}"),
    ("a,b,label\n1,2,0.5\n3,4,2.25\n5,6,1\n", "use --model linear for a real-valued target"),
    ("a,b,label\n1,2,1\n3,4,1\n", "the target has a single class (1)"),
    ("a,b,label\n", "no rows"),
    ("a,b,label\n1,2,0\n1,4,1\n1,6,1\n", "constant feature column(s) ['a']"),
]


@pytest.mark.parametrize("text,message", BAD_TABLES)
def test_bad_table_names_the_problem_and_location(cli, tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    result = cli("dro-bound", "fit", "--data", path, "--target", "label", "--rho", "0.1")
    assert result.returncode == 2, result
    assert error_line(result.stderr).startswith(f"Error: {path}: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_target_names_the_option(cli, csv_data):
    wrong = cli("dro-bound", "fit", "--data", csv_data, "--target", "y")
    assert wrong.returncode == 2
    assert "no target column 'y'" in wrong.stderr and "--target" in wrong.stderr


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_coverage_is_the_same_on_every_backend_writes_plots_and_never_overwrites(cli, tmp_path):
    """Trials are tasks of iclr25.parallel: in-process and two worker processes give the
    same results exactly (seeds come from derive_seed, not worker order)."""
    out = tmp_path / "cov"
    args = (
        "dro-bound", "coverage", "--distribution", "ball-classes", "--n-grid", "60,120",
        "--d-grid", "2", "--trials", "2", "--bootstrap", "10", "--calibration-split", "0.4",
        "--test-size", "2000", "--thetas", "3", "--no-cache", "--json",
    )  # fmt: skip
    first = cli(*args, "--out", out)
    assert first.returncode == 0, first
    res = first.json()["results"]
    assert res["kinds"] == ["calibrated", "theory"]
    assert {(c["kind"], c["n"]) for c in res["cells"]} == {
        (k, n) for k in ("calibrated", "theory", "empirical") for n in (60, 120)
    }
    assert all(0.0 <= c["coverage"] <= 1.0 for c in res["cells"])
    assert set(res["verdict"]) >= {"covers", "control_fails", "gap_shrinks", "overall"}
    assert {p.name for p in out.iterdir()} >= {
        "coverage_vs_n.png",
        "uniform_coverage_vs_n.png",
        "gap_loglog.png",
        "result.json",
    }
    parallel = cli(*args, "--workers", "2")
    assert parallel.returncode == 0, parallel
    assert parallel.json()["results"] == res
    assert parallel.json()["environment"]["execution"]["backend"] == "processes:2"
    second = cli(*args, "--out", out)
    assert second.returncode == 2 and "--overwrite" in second.stderr


def test_unstandardised_scales_are_warned_about(cli, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2)) * np.array([1.0, 1000.0])
    y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    path = tmp_path / "scales.csv"
    rows = "".join(f"{a},{b},{t}\n" for (a, b), t in zip(X, y, strict=True))
    path.write_text("a,b,label\n" + rows)
    result = cli("dro-bound", "fit", "--data", path, "--target", "label", "--rho", "0.1", "--json")
    assert result.returncode == 0, result
    assert any("differ by" in w and "--standardize" in w for w in result.json()["warnings"])


def test_shared_options_are_declared_once_and_reach_every_command():
    """risk/fit/certify take the ProblemOptions fields as explicit typer options (less the
    per-command omissions); a default override (risk's --rho 0.1) shows in the signature."""
    import dataclasses
    import inspect

    from iclr25.commands import dro_bound
    from iclr25.commands.dro_bound_options import ProblemOptions

    fields = {f.name for f in dataclasses.fields(ProblemOptions)}
    params = {
        name: inspect.signature(getattr(dro_bound, name)).parameters
        for name in ("risk", "fit", "certify")
    }
    assert set(params["risk"]) == fields | {"run"}
    assert set(params["fit"]) == fields - {"load", "coef", "intercept"} | {"save", "run"}
    assert set(params["certify"]) == fields - {"coef", "intercept"} | {"run"}
    assert params["risk"]["rho"].default == "0.1" and params["fit"]["rho"].default == "calibrated"


def test_help_lists_result_keys(cli):
    result = cli("dro-bound", "fit", "--help")
    assert result.returncode == 0
    for key in ("robust_objective", "lambda", "coefficients", "erm_objective"):
        assert key in result.stdout


def test_unconverged_inner_maximisation_is_reported(cli):
    """3 ascent iterations cannot meet the 8-iteration convergence window: the share is in
    the diagnostics and the warning (JSON ``warnings``) names the fix."""
    result = cli(
        "dro-bound",
        "risk",
        "--synthetic",
        "gaussian-classes",
        "--n",
        "50",
        "--d",
        "2",
        "--coef",
        "1,-1",
        "--solver",
        "pga",
        "--inner-iters",
        "3",
        "--json",
    )
    assert result.returncode == 0, result
    doc = result.json()
    assert doc["results"]["diagnostics"]["converged_fraction"] < 1.0
    assert doc["results"]["method"].startswith("estimate: projected gradient ascent")
    assert doc["results"]["risk_kind"] == "estimate"
    assert any("raise --inner-iters" in w for w in doc["warnings"])


def test_certify_beyond_the_critical_radius_warns(cli):
    """At ρ = 100 the robust logistic fit is w = 0 (q = 1, κ = ∞: R = E_n ℓ + ρ‖w‖): the robust
    and empirical risks coincide, and certify says the bound has no margin."""
    result = cli(
        "dro-bound",
        "certify",
        "--synthetic",
        "gaussian-classes",
        "--n",
        "100",
        "--rho",
        "100",
        "--json",
    )
    assert result.returncode == 0, result
    doc = result.json()
    res = doc["results"]
    assert res["coefficients"] == pytest.approx([0.0] * 5, abs=1e-6)
    assert res["certified_margin"] == pytest.approx(0.0, abs=1e-9)
    assert res["guarantee"].startswith("user") and res["radius_kind"] == "user"
    assert any("bound has no margin" in w for w in doc["warnings"])
