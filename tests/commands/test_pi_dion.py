"""`iclr25 pi-dion` through the real console script."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.testing import error_line


@pytest.fixture(scope="module")
def inproc():
    """The command run in this process by typer's runner: the console script's code path
    (parsing, checks, the one-line error, exit 2) without the ~5 CPU-s of a fresh
    interpreter's imports per call. Each error path is also run once through the real
    console script (``cli``) below."""
    from typer.testing import CliRunner

    from iclr25.cli import build_app

    app, runner = build_app(), CliRunner()

    class Result:
        def __init__(self, res):
            self.returncode, self.stdout, self.stderr = res.exit_code, res.stdout, res.stderr

        def json(self) -> dict:
            import json

            return json.loads(self.stdout)

        def __repr__(self) -> str:
            return f"<exit {self.returncode}; stderr={self.stderr[-800:]!r}>"

    return lambda *args: Result(runner.invoke(app, [str(a) for a in args]))


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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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
        (("--dim", "3"), "--dim 1 or --dim 2"),
        (("--dim", "2", "--baselines", "bundled"), "1-D only"),
        (("--dim", "2", "--model", "MODEL1D"), "--dim 1, not --dim 2"),
        (("--sensors", "subdomain:0.6,0.2"), "0 ≤ A < B ≤ 1"),
        (("--seeds", "2"), "3 seeds"),
        (("--labels", "10,x"), "integers"),
        (("--sensors", "BAD"), "duplicate sensor"),  # the other file errors: core tests
    ],
)
def test_bad_input_is_one_line_and_exit_2(inproc, tmp_path, args, needle):
    out = tmp_path / "run"
    (tmp_path / "bad.csv").write_text("x\n" + "0.1\n" * 9)
    from iclr25.core.pi_dion.saved import BUNDLED

    swap = {"BAD": tmp_path / "bad.csv", "MODEL1D": BUNDLED}
    args = tuple(swap.get(a, a) if isinstance(a, str) else a for a in args)
    result = inproc("pi-dion", "compare", *args, "--out", out)
    assert result.returncode == 2, result
    assert needle in error_line(result.stderr)
    assert not out.exists()


@pytest.mark.slow  # a fresh interpreter (~5 CPU-s); `make test` runs the same checks in-process
def test_bad_input_through_the_console_script(cli, tmp_path):
    out = tmp_path / "run"
    result = cli("pi-dion", "compare", "--pde", "poisson", "--out", out)
    assert result.returncode == 2, result
    assert "reaction-diffusion, helmholtz" in error_line(result.stderr)
    assert not out.exists()


@pytest.mark.parametrize("args", [("--seeds", "2"), ("--steps", "0"), ("--labels", "10,x"),
                                  ("--dim", "2", "--baselines", "bundled")])  # fmt: skip
def test_compare_usage_errors_come_before_torch_loads(args):
    """A mistyped option costs a second, not the ~5 CPU-s of importing torch: the checks
    that need no file run first (fresh interpreter: the test process has torch loaded)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from iclr25.cli import build_app\n"
        f"res = CliRunner().invoke(build_app(), ['pi-dion', 'compare', *{list(args)!r}])\n"
        "print(res.exit_code, 'torch' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.split() == ["2", "False"], proc.stdout + proc.stderr


def test_generate_reads_a_sensor_file(inproc, tmp_path):
    positions = np.array([0.05, 0.9, 0.15, 0.3, 0.45, 0.6, 0.75, 0.2, 0.5, 0.55])
    (tmp_path / "s.csv").write_text("x\n" + "".join(f"{v}\n" for v in positions))
    out = tmp_path / "data"
    res = inproc("pi-dion", "generate", "--sensors", tmp_path / "s.csv", "--n-train", "3",
              "--n-test", "2", "--out", out, "--json")  # fmt: skip
    assert res.returncode == 0, res
    train = np.load(out / "train.npz")
    assert np.array_equal(train["x"][:, 0], np.sort(positions)) and train["u"].shape == (3, 10)
    assert "not determined" not in res.stderr  # hull reaches both ends (gap 0.15 ≥ 0.05, 0.1)


@pytest.mark.slow  # > 10 s under load; the core test covers the α rule in `make test`
def test_solve_tikhonov_uses_gcv_without_a_noise_level(cli, measured):
    res = cli("pi-dion", "solve", "--measurements", measured / "plain.npz", "--method",
              "tikhonov", "--grid", "17", "--json", "--quiet")  # fmt: skip
    assert res.returncode == 0, res
    r = res.json()["results"]
    assert r["alpha_rule"] == "gcv" and len(r["noise_std_estimate"]) == 10
    # the data carry noise sd 0.01 on top of a smooth profile: GCV's σ̂ is near it
    assert 0.003 < float(np.median(r["noise_std_estimate"])) < 0.03


@pytest.mark.slow  # the 2-D prior operators take ~10 CPU-s (twice)
def test_generate_and_solve_2d(cli, tmp_path):
    out = tmp_path / "data2d"
    res = cli("pi-dion", "generate", "--dim", "2", "--n-train", "3", "--n-test", "2",
              "--out", out, "--json", "--quiet")  # fmt: skip
    assert res.returncode == 0, res
    train, test = np.load(out / "train.npz"), np.load(out / "test.npz")
    assert train["x"].shape == (256, 2) and train["u"].shape == (3, 256)
    assert test["f"].shape == (2, 33, 33) and np.all(test["u_true"][:, 0, :] == 0)
    assert res.json()["results"]["noise_std"] > 0
    # the exact Bayes mean on those data: f far better than zero (measured ≈ 0.14 on 20
    # draws), u to a few per cent; then the default method, the bundled 2-D PI-DION
    res = cli("pi-dion", "solve", "--dim", "2", "--measurements", out / "test.npz",
              "--method", "bayes", "--grid", "33", "--json", "--quiet")  # fmt: skip
    assert res.returncode == 0, res
    r = res.json()["results"]
    f_hat, f = np.array(r["f"]), test["f"].reshape(2, -1)
    assert np.all(np.linalg.norm(f_hat - f, axis=1) / np.linalg.norm(f, axis=1) < 0.4)
    res = cli("pi-dion", "solve", "--dim", "2", "--measurements", out / "test.npz",
              "--grid", "33", "--json", "--quiet")  # fmt: skip
    assert res.returncode == 0, res
    r = res.json()["results"]
    f_hat, u_hat = np.array(r["f"]), np.array(r["u"])
    assert r["method"] == "pi-dion" and f_hat.shape == (2, 33 * 33)
    # held-out rel. L² ≈ 0.45 (f) and 0.06 (u) over 100 draws (train_log_2d.json)
    assert np.all(np.linalg.norm(f_hat - f, axis=1) / np.linalg.norm(f, axis=1) < 0.9)
    u = test["u_true"].reshape(2, -1)
    assert np.all(np.linalg.norm(u_hat - u, axis=1) / np.linalg.norm(u, axis=1) < 0.2)


@pytest.mark.slow  # the 2-D prior operators (~10 CPU-s), a few training steps, two solves
def test_train_and_solve_2d_pi_dion(cli, tmp_path):
    out = tmp_path / "data2d"
    res = cli("pi-dion", "generate", "--dim", "2", "--n-train", "3", "--n-test", "2",
              "--out", out, "--json", "--quiet")  # fmt: skip
    assert res.returncode == 0, res
    # a 2-D PI-DION trained label-free on train.npz, then used by solve
    model = tmp_path / "m2d.safetensors"
    res = cli("pi-dion", "train", "--dim", "2", "--data", out, "--steps", "3", "--width", "8",
              "--basis", "4", "--save", model, "--json", "--quiet")  # fmt: skip
    assert res.returncode == 0, res
    r = res.json()["results"]
    assert r["dim"] == 2 and r["mode"] == "label-free" and r["held_out"]["instances"] == 2
    res = cli("pi-dion", "solve", "--dim", "2", "--measurements", out / "test.npz",
              "--model", model, "--grid", "5", "--json", "--quiet")  # fmt: skip
    assert res.returncode == 0, res
    r = res.json()["results"]
    assert r["method"] == "pi-dion" and np.array(r["f"]).shape == (2, 25)
    assert np.all(np.array(r["u"]).reshape(2, 5, 5)[:, 0, :] == 0)  # u = 0 on ∂Ω
    res = cli("pi-dion", "solve", "--measurements", out / "test.npz", "--model", model)
    assert res.returncode == 2 and "--dim 2" in error_line(res.stderr)


def test_generate_needs_out(inproc):
    result = inproc("pi-dion", "generate", "--n-train", "2")
    assert result.returncode == 2 and "--out" in error_line(result.stderr)


TRAIN_TINY = ("--steps", "3", "--width", "8", "--basis", "4", "--batch", "5", "--json", "--quiet")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """Ten instances on 12 sensors, as NPZ with garbage labels, NPZ without, and CSV."""
    root = tmp_path_factory.mktemp("measured")
    rng = np.random.default_rng(3)
    x = np.arange(1, 13) / 13
    u = np.sin(np.pi * x)[None] * rng.normal(size=(10, 1)) + 0.01 * rng.normal(size=(10, 12))
    np.savez(root / "plain.npz", x=x[:, None], u=u)
    np.savez(root / "with_f.npz", x=x[:, None], u=u, f=np.full((10, 5), np.nan), grid=np.ones(5))
    rows = [
        f"{i},{float(xs)!r},{float(v)!r}" for i in range(10) for xs, v in zip(x, u[i], strict=True)
    ]
    (root / "m.csv").write_text("instance,x,u\n" + "\n".join(rows) + "\n")
    return root


@pytest.fixture(scope="module")
def tiny_model(measured):
    """A tiny trained model for the 12-sensor layout (trained in-process, 3 steps)."""
    from iclr25.core.pi_dion import measurements, saved, train

    data = measurements.read(measured / "plain.npz")
    cfg = train.TrainConfig(steps=3, batch=5, width=8, basis=4)
    model, _ = train.train_pi_dion(data.u, data.x, 1.0, cfg, 0)
    path = measured / "tiny.safetensors"
    saved.save(path, model, data.x, "reaction-diffusion", 1.0, {"train": cfg.__dict__})
    return (path,)


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_train_never_reads_f(cli, measured, tmp_path):
    sha = []
    for name in ("plain", "with_f"):
        model = tmp_path / f"{name}.safetensors"
        res = cli("pi-dion", "train", "--measurements", measured / f"{name}.npz",
                  "--save", model, *TRAIN_TINY)  # fmt: skip
        assert res.returncode == 0, res
        assert res.json()["results"]["mode"] == "label-free"
        sha.append(res.json()["results"]["sha256"])
    assert sha[0] == sha[1]  # the NaN labels beside u changed nothing


@pytest.mark.slow
def test_solve_reads_csv_like_npz(cli, measured, tiny_model):
    solved = [cli("pi-dion", "solve", "--measurements", measured / name, "--model", tiny_model[0],
                  "--grid", "17", "--json", "--quiet").json()["results"]
              for name in ("plain.npz", "m.csv")]  # fmt: skip
    assert solved[0]["f"] == solved[1]["f"] and len(solved[0]["f"]) == 10
    assert len(solved[0]["grid"]) == 17 and solved[0]["identifiable_fraction"] == 1.0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--model", "MODEL", "--measurements", "FEW"), "train one for it"),
        (("--method", "ridge"), "pi-dion, tikhonov, bayes"),
    ],
)
def test_solve_bad_input_is_one_line_and_exit_2(inproc, measured, tiny_model, tmp_path, args,
                                                needle):  # fmt: skip
    few = tmp_path / "few.npz"
    np.savez(few, x=np.arange(1, 10)[:, None] / 10, u=np.ones((2, 9)))
    args = tuple({"MODEL": tiny_model[0], "FEW": few}.get(a, a) for a in args)
    if "--measurements" not in args:
        args = ("--measurements", measured / "plain.npz", *args)
    out = tmp_path / "run"
    result = inproc("pi-dion", "solve", *args, "--out", out)
    assert result.returncode == 2, result
    assert needle in error_line(result.stderr)
    assert not out.exists()


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_train_refuses_to_overwrite_and_labels_need_f(cli, measured, tmp_path):
    taken = tmp_path / "taken.safetensors"
    taken.write_text("keep")
    res = cli("pi-dion", "train", "--measurements", measured / "plain.npz", "--save", taken)
    assert res.returncode == 2 and "exists" in error_line(res.stderr)
    assert taken.read_text() == "keep"
    res = cli("pi-dion", "train", "--measurements", measured / "plain.npz", "--labels", "3")
    assert res.returncode == 2 and "no f labels" in error_line(res.stderr)


def test_noise_fits_a_slope_per_method(inproc):
    res = inproc("pi-dion", "noise", "--methods", "bayes", "--n-test", "8", "--json", "--quiet")
    assert res.returncode == 0, res
    r = res.json()["results"]
    fit = r["fitted_slope"]["bayes"]
    assert r["predicted_slope"] == 0.5 and len(r["rel_l2_f"]["bayes"]) == 6
    assert fit["ci_low"] <= fit["slope"] <= fit["ci_high"]
    assert 0.2 < fit["slope"] < 0.8  # the Bayes error grows like noise^0.44 (docs/pi-dion.md)
    assert isinstance(r["rate_reproduced"]["bayes"], bool)


@pytest.fixture(scope="module")
def baselines(tmp_path_factory):
    """A tiny PI-DION and supervised N = 5 for the default layout; N = 10 with another recipe."""
    from iclr25.core.pi_dion import problem, saved, train

    root = tmp_path_factory.mktemp("baselines")
    p = problem.Problem()
    data = problem.generate(p, 10, np.random.default_rng(0), problem.operators(p))
    cfg = train.TrainConfig(steps=1, batch=5, collocation=8, width=4, basis=2)
    model, _ = train.train_pi_dion(data.d, data.x, p.c, cfg, 0)
    saved.save(root / "pi.safetensors", model, data.x, p.pde, p.c, {"train": cfg.__dict__})
    for n, recipe in ((5, cfg), (10, {**cfg.__dict__, "steps": 2})):
        meta = {"train": getattr(recipe, "__dict__", recipe), "labels": n}
        saved.save(saved.baseline_path(root, n), model, data.x, p.pde, p.c, meta)
    return root


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--baselines", "FOLDER", "--labels", "5"), "needs --model"),
        (("--model", "MODEL", "--baselines", "FOLDER", "--labels", "5,30"), "N = 30"),
        (("--model", "MODEL", "--baselines", "FOLDER", "--labels", "5,10"), "another recipe"),
    ],
)
def test_compare_baselines_bad_input(inproc, baselines, tmp_path, args, needle):
    out = tmp_path / "run"
    subst = {"FOLDER": baselines, "MODEL": baselines / "pi.safetensors"}
    result = inproc("pi-dion", "compare", *(subst.get(a, a) for a in args), "--out", out)
    assert result.returncode == 2, result
    assert needle in error_line(result.stderr)
    assert not out.exists()


@pytest.mark.slow  # 21 tasks (bundled models, Tikhonov, Bayes on 3 test draws)
def test_compare_quick_scores_the_bundled_models(cli, tmp_path):
    res = cli("pi-dion", "compare", "--quick", "--json", "--quiet", "--no-cache")
    assert res.returncode == 0, res
    r = res.json()["results"]
    assert r["methods"] == ["pi_dion", "supervised_N10", "supervised_N30", "supervised_N100",
                            "supervised_N300", "supervised_N1000", "tikhonov", "tikhonov_gcv",
                            "bayes"]  # fmt: skip
    from iclr25.core.pi_dion import saved

    # the bundled files are recorded by name and sha256, never by where the package lives
    assert r["problem"]["model"] == r["problem"]["baselines"] == "bundled"
    assert r["problem"]["model_sha256"] == saved.sha256_of(saved.BUNDLED)
    assert len(r["problem"]["baselines_sha256"]) == 5 and r["problem"]["test_per_seed"]
    f = r["rel_l2_f"]["pi_dion"]
    assert f["ci_low"] < f["mean"] < f["ci_high"]  # three test draws
    assert "test draws only" in r["verdict"]


def test_bundled_model_and_baselines_are_recorded_by_name_not_install_path():
    """A results file says ``bundled`` + sha256, not the absolute path of this copy of the
    package (a clean clone in /tmp recorded /tmp/... before)."""
    from iclr25.commands.pi_dion import _with_baselines, _with_model
    from iclr25.core.pi_dion import compare, saved

    class Quiet:
        def warn(self, message: str) -> None:
            pass

    config = _with_baselines(_with_model(compare.CompareConfig(), "bundled", Quiet()), "bundled")
    assert config.model == config.baselines == "bundled"
    assert config.model_sha256 == saved.sha256_of(saved.BUNDLED)
    assert len(config.baselines_sha256) == len(config.labels)
