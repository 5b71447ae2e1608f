"""Scored (not retrained) networks in the compare study, and `train_pi_dion.py --baselines`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from iclr25.core.pi_dion import compare, problem, saved, train
from iclr25.core.pi_dion.problem import Problem
from iclr25.parallel import Execution
from iclr25.testing import error_line

ROOT = Path(__file__).resolve().parents[3]
CFG = train.TrainConfig(steps=3, batch=10, collocation=16, width=8, basis=4)
TINY = compare.CompareConfig(Problem(), n_train=20, n_test=6, seeds=3, labels=(5, 10), train=CFG)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A tiny PI-DION and supervised DeepONets N = 5, 10 for the default 64-sensor layout."""
    root = tmp_path_factory.mktemp("baselines")
    p = Problem()
    data = problem.generate(p, 20, np.random.default_rng(0), problem.operators(p))
    model, _ = train.train_pi_dion(data.d, data.x, p.c, CFG, 0)
    saved.save(root / "pi.safetensors", model, data.x, p.pde, p.c, {"train": CFG.__dict__})
    for n in (5, 10):
        sup, _ = train.train_supervised(data.d[:n], data.f[:n], data.grid, p.c, CFG, 0)
        meta = {"train": CFG.__dict__, "labels": n}
        saved.save(saved.baseline_path(root, n), sup, data.x, p.pde, p.c, meta)
    return root


def scored(folder: Path, per_seed: bool) -> compare.CompareConfig:
    return replace(TINY, model=str(folder / "pi.safetensors"), baselines=str(folder),
                   test_per_seed=per_seed)  # fmt: skip


def test_scored_networks_vary_only_with_the_test_draw(folder):
    fixed, _ = compare.run_compare(replace(scored(folder, False), seeds=2, labels=(5,)), 5,
                                   Execution(cache=False))  # fmt: skip
    drawn, _ = compare.run_compare(replace(scored(folder, True), seeds=2, labels=(5,)), 5,
                                   Execution(cache=False))  # fmt: skip
    for name in ("pi_dion", "supervised_N5", "bayes"):
        f = fixed["rel_l2_f"][name]
        assert f["ci_low"] == f["ci_high"]  # same networks, same test set on every seed
        d = drawn["rel_l2_f"][name]
        assert d["ci_low"] < d["mean"] < d["ci_high"]  # two test draws
    assert "test draws only" in drawn["verdict"]


@pytest.mark.slow  # one more compare run
def test_a_scored_baseline_is_the_saved_network(folder):
    cfg = scored(folder, True)
    res, _ = compare.run_compare(cfg, 5, Execution(cache=False))
    model = saved.load(saved.baseline_path(folder, 10)).model
    p, errs = cfg.problem, []
    for i in range(cfg.seeds):
        seed = [compare.TEST_SEED, compare.derive_seed(5, "data", i)]
        test = problem.generate(p, cfg.n_test, np.random.default_rng(seed), problem.operators(p))
        errs.append(problem.rel_l2(train.predict(model, test.d, test.grid)[1], test.f).mean())
    assert res["rel_l2_f"]["supervised_N10"]["mean"] == pytest.approx(np.mean(errs), rel=1e-6)


def test_quick_scores_the_bundled_models_on_the_default_problem_only():
    q = compare.quick(compare.CompareConfig())
    assert q.model == "bundled" and q.baselines == "bundled" and q.test_per_seed
    assert q.labels == saved.BASELINE_LABELS
    other = compare.quick(compare.CompareConfig(problem=Problem(sensors="subdomain:0,0.5")))
    assert other.model is None and other.baselines is None  # trained: no bundled model fits


def _script():
    spec = importlib.util.spec_from_file_location(
        "train_pi_dion", ROOT / "scripts" / "train_pi_dion.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("text", "needle"),
    [("10,x", "integers"), ("0,10", "1..--n-train"), ("10,2000", "1..--n-train"),
     ("10,10", "repeated")],
)  # fmt: skip
def test_bad_baseline_lists_are_refused(text, needle):
    args = SimpleNamespace(baselines=text, baselines_only=False, n_train=1000)
    with pytest.raises(ValueError, match=needle.replace(".", r"\.")):
        _script().parse_baselines(args)


def test_data_parallel_baselines_need_an_instance_per_process():
    args = SimpleNamespace(baselines="1,10", baselines_only=False, n_train=1000)
    with pytest.raises(ValueError, match=r"every N must be in 2\.\.--n-train .* 2 processes"):
        _script().parse_baselines(args, world_size=2)
    assert _script().parse_baselines(args, world_size=1) == [1, 10]


def test_baseline_lists():
    parse = _script().parse_baselines
    assert parse(SimpleNamespace(baselines=None, baselines_only=False, n_train=1000)) == []
    only = SimpleNamespace(baselines=None, baselines_only=True, n_train=1000)
    assert parse(only) == list(saved.BASELINE_LABELS)
    assert parse(SimpleNamespace(baselines="30,10", baselines_only=False, n_train=30)) == [10, 30]


def test_the_script_refuses_a_bad_list_before_writing(tmp_path):
    out = tmp_path / "out" / "m.safetensors"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train_pi_dion.py"), "--baselines", "10,x",
         "--out", str(out)],
        capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert error_line(done.stderr).startswith("Error: --baselines '10,x'")
    assert not out.parent.exists()
