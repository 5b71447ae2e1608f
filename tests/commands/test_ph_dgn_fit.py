"""`iclr25 ph-dgn fit / predict` through the real console script."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.testing import error_line
from tests.core.ph_dgn.test_fit import toy_arrays, write_csv

FAST = ("--epochs", "3", "--width", "4", "--depth", "2", "--json", "--quiet")


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_csv_and_npz_give_identical_results_and_the_saved_model_predicts(cli, tmp_path):
    arrays = toy_arrays()
    edges, nodes = write_csv(tmp_path, arrays)
    np.savez(tmp_path / "g.npz", **arrays)
    model = tmp_path / "m.safetensors"
    csv_run = cli("ph-dgn", "fit", "--edges", edges, "--nodes", nodes, "--target", "t",
                  "--undirected", "--save", model, *FAST)  # fmt: skip
    npz_run = cli("ph-dgn", "fit", "--data", tmp_path / "g.npz", "--undirected", *FAST)
    assert csv_run.returncode == 0 and npz_run.returncode == 0, (csv_run, npz_run)
    res = csv_run.json()["results"]
    assert {k: v for k, v in res.items() if k != "saved"} == {
        k: v for k, v in npz_run.json()["results"].items() if k != "saved"
    }
    assert res["metric"] == "mse" and res["n_graphs"] == 6 and len(res["history"]) == 1
    pred = cli("ph-dgn", "predict", "--load", model, "--data", tmp_path / "g.npz",
               "--undirected", "--json", "--out", tmp_path / "run")  # fmt: skip
    assert pred.returncode == 0, pred
    out = pred.json()["results"]
    assert len(out["predictions"]) == 24 and out["metric"] == "mse"
    assert (tmp_path / "run" / "predictions.csv").read_text().count("\n") == 25


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (("--data", "nan.npz"), "remove or fill those rows"),
    ],
)  # the other bad inputs: tests/core/ph_dgn/test_fit.py (same error path, no process)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(cli, tmp_path, args, fix):
    arrays = toy_arrays()
    x = arrays["x"].copy()
    x[3, 1] = np.nan
    np.savez(tmp_path / "nan.npz", **{**arrays, "x": x})
    args = [tmp_path / a if a.endswith(".npz") else a for a in args]
    if "--data" not in args:
        args += ["--data", tmp_path / "nan.npz"]
    save, out = tmp_path / "m.safetensors", tmp_path / "run"
    result = cli("ph-dgn", "fit", *args, "--save", save, "--out", out)
    assert result.returncode == 2, result
    assert fix in error_line(result.stderr)
    assert not save.exists() and not out.exists()


@pytest.mark.slow
def test_generated_property_data_trains_with_fit_at_graph_level(cli, tmp_path):
    out = tmp_path / "data"
    gen = cli("ph-dgn", "generate", "--task", "diameter", "--graphs", "10,2,2", "--out", out)
    assert gen.returncode == 0, gen
    train = np.load(out / "train.npz")
    assert train["y"].shape == (10,) and train["y"].max() == 1.0  # normalised by train max
    result = cli("ph-dgn", "fit", "--data", out / "train.npz", "--level", "graph", *FAST)
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["level"] == "graph" and res["n_graphs"] == 10 and res["n_test"] == 1


@pytest.mark.slow
def test_property_reports_log10_mse_per_model_and_the_mean_predictor(cli):
    args = ("--models", "phdgn-c,gcn", "--graphs", "8,4,4", "--epochs", "3", "--depth", "2")
    result = cli("ph-dgn", "property", "--task", "sssp", *args, "--seeds", "2", "--json")
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert set(res["log10_mse"]) == {"phdgn-c", "gcn"} and res["level"] == "node"
    cell = res["log10_mse"]["gcn"]
    assert len(cell["per_seed"]) == 2 and cell["ci95"][0] <= cell["mean"] <= cell["ci95"][1]


@pytest.mark.parametrize("verb", ["property", "transfer", "generate"])
def test_graph_counts_are_checked_alike_by_every_verb(cli, tmp_path, verb):
    result = cli("ph-dgn", verb, "--graphs", "8,4", "--out", tmp_path / "o")
    assert result.returncode == 2, result
    assert "--graphs '8,4' needs three positive counts" in result.stderr
    assert not (tmp_path / "o").exists()
