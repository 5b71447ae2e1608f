"""`iclr25 pi-dion` through the real console script."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.testing import error_line

TINY = ("--n-train", "20", "--n-test", "6", "--seeds", "3", "--labels", "5,10", "--steps", "3")
TINY += ("--width", "8", "--basis", "4", "--no-cache")


def test_generate_writes_unlabelled_train_and_labelled_test(cli, tmp_path):
    out = tmp_path / "data"
    result = cli("pi-dion", "generate", "--n-train", "7", "--n-test", "3", "--out", out, "--json")
    assert result.returncode == 0, result
    train, test = np.load(out / "train.npz"), np.load(out / "test.npz")
    assert set(train.files) == {"x", "u"} and train["u"].shape == (7, 64)
    assert train["x"].shape == (64, 1)
    assert test["f"].shape == (3, 129) and np.all(test["u_true"][:, [0, -1]] == 0)
    assert result.json()["results"]["n_train"] == 7


def test_compare_json_same_seed_same_results(cli, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    a = cli("pi-dion", "compare", *TINY, "--json", "--quiet", "--seed", "4", env=env)
    b = cli("pi-dion", "compare", *TINY, "--json", "--quiet", "--seed", "4", env=env)
    assert a.returncode == 0, a
    ra, rb = a.json()["results"], b.json()["results"]
    assert ra["rel_l2_f"] == rb["rel_l2_f"] and ra["nmse_f"] == rb["nmse_f"]
    assert ra["bayes_nmse_f"] <= min(ra["nmse_f"].values()) + 1e-12
    assert isinstance(ra["effect_reproduced"], bool) and "PI-DION" in ra["verdict"]
    assert ra["rel_l2_f"]["pi_dion"]["ci_low"] <= ra["rel_l2_f"]["pi_dion"]["mean"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--pde", "poisson"), "reaction-diffusion, helmholtz"),
        (("--k", "-1"), "k ≥ 0"),
        (("--pde", "helmholtz", "--kappa", "6.29"), "eigenvalue"),
        (("--noise", "-0.1"), "noise"),
        (("--nu", "0"), "positive"),
        (("--dim", "2"), "--dim 1"),
        (("--sensors", "subdomain:0.6,0.2"), "0 ≤ A < B ≤ 1"),
        (("--seeds", "2"), "3 seeds"),
        (("--labels", "10,x"), "integers"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, tmp_path, args, needle):
    out = tmp_path / "run"
    result = cli("pi-dion", "compare", *args, "--out", out)
    assert result.returncode == 2, result
    assert needle in error_line(result.stderr)
    assert not out.exists()


def test_generate_needs_out(cli):
    result = cli("pi-dion", "generate", "--n-train", "2")
    assert result.returncode == 2 and "--out" in error_line(result.stderr)
