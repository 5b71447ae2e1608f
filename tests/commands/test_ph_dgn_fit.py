"""`iclr25 ph-dgn fit / predict` through the real console script."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.testing import error_line
from tests.core.ph_dgn.test_fit import toy_arrays, write_csv

FAST = ("--epochs", "3", "--width", "4", "--depth", "2", "--json", "--quiet")


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
        (("--model", "gat"), "use: phdgn-c"),
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
