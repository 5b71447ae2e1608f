"""`iclr25 ph-dgn` through the real console script: JSON, backends, bad input."""

from __future__ import annotations

import pytest

from iclr25.testing import error_line

TINY = (
    "ph-dgn", "transfer", "--distances", "3", "--graphs", "8,4,4", "--epochs", "3",
    "--seeds", "1", "--models", "phdgn-c,mlp", "--json", "--quiet", "--no-cache",
)  # fmt: skip


def test_energy_json_reports_a_symplectic_step(cli):
    result = cli("ph-dgn", "energy", "--distance", "3", "--steps", "100", "--json", "--quiet")
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["symplecticity_residual"] < 1e-10 and abs(res["log_abs_det"]) < 1e-10
    assert set(res["rel_energy_error"]["symplectic"]) == {"1", "10", "100"}
    assert res["explicit_symplecticity_residual"] > 1e-6


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_transfer_results_are_identical_in_process_and_with_two_workers(cli):
    one, two = cli(*TINY), cli(*TINY, "--workers", "2")
    assert one.returncode == 0 and two.returncode == 0, (one, two)
    res = one.json()["results"]
    assert res == two.json()["results"]
    assert res["verdict"].startswith("no verdict")
    assert [c["model"] for c in res["cells"]] == ["phdgn-c", "mlp"]
    assert res["cells"][0]["hops"] == 2 and res["cells"][0]["aggregations_per_forward"] == 12


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (("transfer", "--models", "gat"), "use: phdgn-c"),
        (("transfer", "--distances", "1"), "--distances 3,5,10"),
        (("transfer", "--distances", "a,b"), "e.g. --distances"),
        (("transfer", "--eps", "0"), "--eps 0.2"),
        (("transfer", "--variant", "paper"), "use: copy, official"),
        (("transfer", "--aggregation", "max"), "--aggregation p=gcn,q=sum"),
        (("energy", "--steps", "0"), "--steps ≥ 10"),
        (("energy", "--graph", "/nonexistent/edges.csv"), "existing CSV"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_fix(cli, args, fix):
    result = cli("ph-dgn", *args)
    assert result.returncode == 2, result
    assert fix in error_line(result.stderr)


def test_energy_reads_an_edge_list_and_rejects_non_integer_ids(cli, tmp_path):
    good = tmp_path / "edges.csv"
    good.write_text("src,dst\n10,20\n20,30\n30,10\n")
    result = cli("ph-dgn", "energy", "--graph", good, "--undirected", "--steps", "20", "--json")
    assert result.returncode == 0, result
    assert result.json()["results"]["n_nodes"] == 3 and result.json()["results"]["n_edges"] == 6
    bad = tmp_path / "bad.csv"
    bad.write_text("src,dst\n1,x\n")
    result = cli("ph-dgn", "energy", "--graph", bad)
    assert result.returncode == 2 and "non-integer node id" in error_line(result.stderr)


def test_official_variant_reports_the_identity_score_and_no_verdict(cli):
    args = [a if a != "phdgn-c,mlp" else "mlp" for a in TINY]
    result = cli(*args, "--variant", "official")
    assert result.returncode == 0, result
    res = result.json()["results"]
    (cell,) = res["cells"]
    assert cell["identity_mse"] == pytest.approx(2 / 3)  # y = x misses 2 of 3 nodes by 1
    assert res["verdict"].startswith("official: no verdict")
    assert "mlp_beats_identity_d3" in res["checks"]


def test_generate_writes_npz_splits_that_match_transfer_data(cli, tmp_path):
    import numpy as np

    out = tmp_path / "data"
    args = ("ph-dgn", "generate", "--distance", "4", "--graphs", "3,2,2", "--quiet")
    result = cli(*args, "--out", out)
    assert result.returncode == 0, result
    train = np.load(out / "train.npz")
    assert train["x"].shape == (12, 2) and train["edge_index"].shape == (2, 18)
    assert np.array_equal(train["y"], train["x"].reshape(3, 4, 2)[:, 0, 0])
    assert np.array_equal(train["batch"], np.repeat(np.arange(3), 4))
    again = cli(*args, "--out", out)  # never overwritten
    assert again.returncode == 2, again


@pytest.mark.slow  # ~20 s of CLI runs; the round trip itself is tested in core (test_transfer)
def test_save_models_then_sensitivity_of_the_trained_models(cli, tmp_path):
    folder = tmp_path / "models"
    result = cli(*TINY, "--save-models", folder)
    assert result.returncode == 0, result
    assert result.json()["results"]["saved_models"]["count"] == 2
    assert sorted(p.name for p in folder.glob("*.safetensors")) == [
        "mlp-d3-s0.safetensors", "phdgn-c-d3-s0.safetensors"
    ]  # fmt: skip
    sens = cli("ph-dgn", "sensitivity", "--load-models", folder, "--models", "phdgn-c", "--json")
    assert sens.returncode == 0, sens
    res = sens.json()["results"]
    assert res["trained"] and list(res["log10_sensitivity"]) == ["phdgn-c"]
    assert res["distances"] == [3] and res["topologies"] == ["line"]
    # the folder is no longer empty: a second run refuses before training, writes nothing
    before = sorted(p.name for p in folder.iterdir())
    again = cli(*TINY, "--save-models", folder)
    assert again.returncode == 2 and "pass --overwrite" in error_line(again.stderr), again
    assert sorted(p.name for p in folder.iterdir()) == before
