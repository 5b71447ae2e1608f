"""`iclr25 pi-dion ... --pde darcy` in process (typer's runner: parsing, checks, the
one-line error, exit 2) and through the files it writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iclr25.testing import error_line


@pytest.fixture(scope="module")
def inproc():
    from typer.testing import CliRunner

    from iclr25.cli import build_app

    app, runner = build_app(), CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def darcy_data(inproc, tmp_path_factory):
    out = tmp_path_factory.mktemp("darcy") / "data"
    res = inproc("pi-dion", "generate", "--pde", "darcy", "--n-train", "6", "--n-test", "3",
                 "--out", out, "--json", "--seed", "3")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    return out


def test_generate_darcy_writes_g_a_and_u_true(darcy_data):
    train, test = np.load(darcy_data / "train.npz"), np.load(darcy_data / "test.npz")
    assert set(train.files) == {"x", "u"} and train["u"].shape == (6, 64)
    assert set(test.files) == {"x", "u", "grid", "g", "a", "u_true"}
    assert np.allclose(test["a"], np.exp(test["g"])) and test["u_true"].shape == (3, 129)
    assert np.all(test["u_true"][:, [0, -1]] == 0) and np.all(test["u_true"][:, 1:-1] > 0)


def test_train_and_solve_darcy(inproc, darcy_data, tmp_path):
    model = tmp_path / "m.safetensors"
    res = inproc("pi-dion", "train", "--pde", "darcy", "--data", darcy_data, "--steps", "3",
                 "--width", "8", "--basis", "4", "--batch", "3", "--save", model, "--json",
                 "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    held = json.loads(res.stdout)["results"]["held_out"]
    assert held["instances"] == 3 and {"rel_l2_a", "rel_l2_g", "rel_l2_u"} <= set(held)
    for method in ("pi-dion", "tikhonov"):
        res = inproc("pi-dion", "solve", "--pde", "darcy", "--measurements",
                     darcy_data / "test.npz", "--model", model, "--method", method, "--grid",
                     "17", "--json", "--quiet")  # fmt: skip
        assert res.exit_code == 0, res.stderr
        r = json.loads(res.stdout)["results"]
        a, g, u = (np.array(r[k]) for k in ("a", "g", "u"))
        assert a.shape == g.shape == u.shape == (3, 17) and np.allclose(a, np.exp(g))
        assert r["method"] == method and np.all(np.abs(u[:, [0, -1]]) < 1e-12)
    # Tikhonov from the generator's σ: a within 35% in rel. L² on all three instances
    test = np.load(darcy_data / "test.npz")
    res = inproc("pi-dion", "solve", "--pde", "darcy", "--measurements", darcy_data / "test.npz",
                 "--method", "tikhonov", "--noise-std", "0.0016", "--json", "--quiet")  # fmt: skip
    a = np.array(json.loads(res.stdout)["results"]["a"])
    err = np.linalg.norm(a - test["a"], axis=1) / np.linalg.norm(test["a"], axis=1)
    assert np.all(err < 0.35), err


@pytest.mark.parametrize(
    ("command", "args", "needle"),
    [
        ("compare", ("--dim", "2"), "darcy is 1-D"),
        ("generate", ("--dim", "2"), "darcy is 1-D"),
        ("compare", ("--k", "2"), "--k does not apply"),
        ("generate", ("--kappa", "3"), "--kappa does not apply"),
        ("compare", ("--noise", "-0.1"), "noise"),
        ("compare", ("--nu", "0"), "positive"),
        ("generate", ("--ell", "-1"), "positive"),
        ("compare", ("--model", "bundled"), "not built for compare --pde darcy"),
        ("noise", ("--methods", "pi_dion,bayes"), "nonlinear"),
        ("noise", ("--dim", "2"), "darcy is 1-D"),
        ("solve", ("--method", "bayes"), "nonlinear"),
        ("solve", ("--model", "RD"), "the model is for reaction-diffusion, not darcy"),
    ],
)
def test_bad_darcy_input_is_one_line_exit_2_nothing_written(inproc, darcy_data, tmp_path,
                                                            command, args, needle):  # fmt: skip
    from iclr25.core.pi_dion.saved import BUNDLED

    out = tmp_path / "run"
    extra = ("--measurements", darcy_data / "test.npz") if command == "solve" else ()
    args = tuple(BUNDLED if a == "RD" else a for a in args)
    res = inproc("pi-dion", command, "--pde", "darcy", *extra, *args, "--out", out)
    assert res.exit_code == 2, res.stderr
    assert needle in error_line(res.stderr)
    assert not out.exists()


def test_a_darcy_model_is_refused_for_another_pde(inproc, darcy_data, tmp_path):
    model = tmp_path / "m.safetensors"
    res = inproc("pi-dion", "train", "--pde", "darcy", "--data", darcy_data, "--steps", "1",
                 "--width", "8", "--basis", "4", "--save", model, "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    out = tmp_path / "run"
    res = inproc("pi-dion", "solve", "--measurements", darcy_data / "test.npz", "--model", model,
                 "--out", out)  # fmt: skip
    assert res.exit_code == 2 and "the model is for darcy" in error_line(res.stderr)
    assert not out.exists()


def test_a_linear_model_trained_beside_darcy_data_skips_the_held_out_score(inproc, darcy_data):
    """test.npz of darcy holds g, not f: the linear held-out score is skipped, no crash."""
    res = inproc("pi-dion", "train", "--data", darcy_data, "--steps", "1", "--width", "8",
                 "--basis", "4", "--json", "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["results"]["held_out"] is None


def test_solve_darcy_with_the_bundled_model(inproc, darcy_data):
    """--model bundled with --pde darcy is the darcy model (scripts/train_pi_dion.py
    --pde darcy), recorded by its sha256."""
    from iclr25.core.pi_dion import saved

    res = inproc("pi-dion", "solve", "--pde", "darcy", "--measurements", darcy_data / "test.npz",
                 "--json", "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    r = json.loads(res.stdout)["results"]
    assert r["method"] == "pi-dion" and np.array(r["a"]).shape == (3, 129)
    assert r["model"]["sha256"] == saved.sha256_of(saved.BUNDLED_DARCY)


def test_the_bundled_darcy_model_is_refused_for_reaction_diffusion(inproc, tmp_path):
    """The darcy model given to a reaction-diffusion solve (same 64-sensor layout): one
    line naming both PDEs, exit 2, nothing written."""
    from iclr25.core.pi_dion.saved import BUNDLED_DARCY

    data = tmp_path / "rd"
    res = inproc("pi-dion", "generate", "--n-train", "1", "--n-test", "2", "--out", data,
                 "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    out = tmp_path / "run"
    res = inproc("pi-dion", "solve", "--measurements", data / "test.npz", "--model",
                 BUNDLED_DARCY, "--out", out)  # fmt: skip
    assert res.exit_code == 2
    assert "the model is for darcy, not reaction-diffusion" in error_line(res.stderr)
    assert not out.exists()


def test_noise_darcy_runs_and_claims_no_rate(inproc, tmp_path):
    res = inproc("pi-dion", "noise", "--pde", "darcy", "--n-train", "4", "--n-test", "3",
                 "--steps", "2", "--batch", "4", "--no-cache", "--json", "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    r = json.loads(res.stdout)["results"]
    assert r["methods"] == ["pi_dion", "tikhonov"] and len(r["noise_levels"]) == 6
    assert r["predicted_slope"] is None and r["rate_reproduced"] is None
    assert set(r["fitted_slope"]) == {"pi_dion", "tikhonov"} and "rel_l2_f" not in r
