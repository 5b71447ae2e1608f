"""`iclr25 diffusion-at` through the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from iclr25.testing import error_line

TINY = ["--diffusion-steps", "50", "--width", "16", "--batch-size", "32"]


def _script() -> list[str]:
    script = Path(sys.executable).parent / "iclr25"
    return [str(script)] if script.exists() else [sys.executable, "-m", "iclr25"]


def _run(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # tiny models: no oversubscription
    return subprocess.run(
        [*_script(), "diffusion-at", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny model trained for 30 steps, with checkpoints at steps 15 and 30."""
    root = tmp_path_factory.mktemp("dat")
    proc = _run(
        "train",
        *TINY,
        "--steps",
        "30",
        "--out",
        root / "run",
        "--checkpoint-dir",
        root / "ckpt",
        "--checkpoint-every",
        "15",
        "--json",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    return root, json.loads(proc.stdout)


def _tensors(path: Path, prefix: str) -> dict:
    from safetensors.torch import load_file

    return {k: v for k, v in load_file(str(path)).items() if k.startswith(prefix)}


def test_train_writes_the_run_and_checkpoints(trained):
    root, doc = trained
    results = doc["results"]
    assert results["steps"] == 30 and results["objective"] == "ddpm"
    assert len(results["loss_curve"]) == 10 and results["model_file"] == "model.safetensors"
    assert results["final_loss"] > 0 and "steps_per_s" in doc["timings"]
    names = {p.name for p in (root / "run").iterdir()}
    assert {"model.safetensors", "loss.png", "samples.png", "result.json", "config.json"} <= names
    ckpts = sorted(p.name for p in (root / "ckpt").iterdir())
    assert ckpts == ["last.safetensors", "step-0000015.safetensors", "step-0000030.safetensors"]


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_resume_equals_the_uninterrupted_run(trained, tmp_path):
    root, _ = trained
    proc = _run(
        "train",
        "--resume",
        root / "ckpt" / "step-0000015.safetensors",
        "--steps",
        "30",
        "--out",
        tmp_path / "resumed",
        "--json",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]["resumed_from_step"] == 15
    full = _tensors(root / "run" / "model.safetensors", "model.")
    resumed = _tensors(tmp_path / "resumed" / "model.safetensors", "model.")
    assert full.keys() == resumed.keys()
    assert all((full[k] == resumed[k]).all() for k in full)


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_resuming_a_finished_run_or_another_configuration_is_refused(trained):
    root, _ = trained
    done = _run("train", "--resume", root / "ckpt" / "last.safetensors", "--steps", "30")
    assert done.returncode == 2, done.stderr
    assert "already at step 30" in done.stderr and "--steps above 30" in done.stderr
    other = _run(
        "train",
        "--resume",
        root / "ckpt" / "step-0000015.safetensors",
        "--steps",
        "40",
        "--at",
        "fgsm",
        "--alpha",
        "0.1",
    )
    assert other.returncode == 2
    assert (
        "another configuration" in other.stderr
        and "at.alpha: checkpoint 0.0, now 0.1" in other.stderr
    )
    assert "Traceback" not in other.stderr


def test_checkpoint_dir_is_never_overwritten(trained):
    root, _ = trained
    before = (root / "ckpt" / "last.safetensors").read_bytes()
    proc = _run("train", *TINY, "--steps", "5", "--checkpoint-dir", root / "ckpt")
    assert proc.returncode == 2 and "already holds checkpoints" in proc.stderr
    assert "--resume" in proc.stderr
    assert (root / "ckpt" / "last.safetensors").read_bytes() == before


def test_sample_writes_samples_in_the_data_units(trained, tmp_path):
    root, _ = trained
    proc = _run(
        "sample",
        "--checkpoint",
        root / "run" / "model.safetensors",
        "--nfe",
        "5",
        "--n",
        "100",
        "--out",
        tmp_path / "s",
        "--json",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    samples = np.load(tmp_path / "s" / "samples.npy")
    assert samples.shape == (100, 2) and results["finite"] and results["nfe"] == 5
    assert np.allclose(results["mean"], samples.mean(axis=0))


def test_nfe_larger_than_the_diffusion_steps_is_refused(trained):
    root, _ = trained
    proc = _run("sample", "--checkpoint", root / "run" / "model.safetensors", "--nfe", "60")
    assert proc.returncode == 2
    assert "larger than the 50 diffusion steps" in proc.stderr and "NFE <= 50" in proc.stderr


def test_eval_reports_metrics_per_nfe_and_the_mismatch_curve(trained):
    root, _ = trained
    proc = _run(
        "eval",
        "--checkpoint",
        root / "run" / "model.safetensors",
        "--nfe",
        "2,5",
        "--n",
        "200",
        "--n-reference",
        "200",
        "--mismatch-nfe",
        "5",
        "--json",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert [row["nfe"] for row in results["per_nfe"]] == [2, 5]
    assert set(results["per_nfe"][0]) == {"sampler", "nfe", "sw", "w2", "mmd"}
    assert results["primary_label"] == "SW₂"
    curve = results["mismatch"]["curve"]
    assert len(curve) == 6 and curve[-1]["t"] == -1 and results["primary_metric"] == "sw"


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_compare_runs_every_variant_with_paired_tests(tmp_path):
    proc = _run(
        "compare",
        *TINY,
        "--steps",
        "20",
        "--seeds",
        "2",
        "--nfe",
        "2,5",
        "--n",
        "150",
        "--mismatch-nfe",
        "5",
        "--alpha",
        "0.05",
        "--no-cache",
        "--json",
        "--quiet",
        "--out",
        tmp_path / "cmp",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    results = doc["results"]
    assert [row["nfe"] for row in results["per_nfe"]] == [2, 5]
    assert results["variants"] == ["baseline", "at", "replay", "noise"]
    from iclr25.commands.diffusion_at import DEMO
    from iclr25.core.diffusion_at.compare import seeds_for

    headline = DEMO[0].headline(doc)
    assert headline.startswith("8gaussians NFE 2 SW₂: baseline ") and "noise " in headline
    assert headline.endswith(results["verdict"]["statement"])
    for row in results["per_nfe"]:
        for variant in results["variants"]:
            assert set(row[variant]) == {"sw", "w2", "mmd"}
            assert set(row[variant]["sw"]) == {"mean", "sd", "low", "high"}
        for test in row["versus_baseline"].values():
            assert {"difference", "p_value", "p_holm", "significant", "better_seeds"} <= set(test)
        assert set(row["at_versus"]) == {"replay", "noise"}
        assert set(row["significant"]) <= {"at", "replay", "noise"}
    assert results["seeds"] == list(seeds_for(0, 2)) and len(results["mismatch"]["curve"]) == 6
    assert results["hypothesis"]["pass_conditions"]["H1"].startswith("AT significantly better")
    assert doc["environment"]["execution"]["backend"] == "in-process"
    names = {p.name for p in (tmp_path / "cmp").iterdir()}
    assert {"sw_vs_nfe.png", "mismatch_mmd.png", "samples.png"} <= names


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_compare_with_fgsm_runs_no_controls_and_says_so():
    proc = _run(
        "compare",
        *TINY,
        "--steps",
        "6",
        "--seeds",
        "2",
        "--nfe",
        "2",
        "--n",
        "100",
        "--mismatch-nfe",
        "0",
        "--at",
        "fgsm",
        "--no-cache",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["results"]["variants"] == ["baseline", "at"]
    assert any("replay and noise control(s) mirror free AT" in w for w in doc["warnings"])
    assert doc["results"]["verdict"]["adversarial_effect_observed"] is None


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_train_with_the_paper_preset(tmp_path):
    proc = _run("train", *TINY, "--steps", "8", "--preset", "paper", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout)["config"]
    at = config["at"]
    assert at["method"] == "free" and at["alpha"] == 0.1 and at["free_replays"] == 3
    assert abs(at["step"] * 2**0.5 - 0.1) < 1e-12  # an absolute ℓ2 step of 0.1 in 2-D
    assert config["schedule"] == "cosine" and config["at_start"] == 6
    # an explicit option wins over the preset
    proc = _run("train", *TINY, "--steps", "8", "--preset", "paper", "--alpha", "0.2", "--json")
    assert json.loads(proc.stdout)["config"]["at"]["alpha"] == 0.2


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_paper_preset_fine_tunes_a_plain_checkpoint(trained, tmp_path):
    root, _ = trained
    proc = _run(
        "train",
        "--resume",
        root / "ckpt" / "last.safetensors",
        "--steps",
        "36",
        "--preset",
        "paper",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["config"]["at_start"] == 30 and doc["results"]["resumed_from_step"] == 30
    assert doc["config"]["schedule"] == "linear" and doc["config"]["diffusion_steps"] == 50
    assert any("with its linear schedule" in w for w in doc["warnings"])
    assert doc["results"]["mean_delta_norm"] > 0  # AT ran on the pretrained model


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_train_previews_images_within_the_budget(tmp_path):
    proc = _run(
        "train",
        "--data",
        "digits",
        "--width",
        "8",
        "--diffusion-steps",
        "50",
        "--batch-size",
        "16",
        "--steps",
        "3",
        "--out",
        tmp_path / "d",
        "--json",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert 0 <= doc["results"]["preview_n"] <= 64
    assert "preview_s" in doc["timings"] and "train_s" in doc["timings"]
    proc = _run(
        "train",
        "--data",
        "digits",
        "--width",
        "8",
        "--diffusion-steps",
        "50",
        "--batch-size",
        "16",
        "--steps",
        "2",
        "--preview",
        "5",
        "--out",
        tmp_path / "e",
        "--json",
    )
    assert json.loads(proc.stdout)["results"]["preview_n"] == 5
    assert (tmp_path / "e" / "samples.png").exists()


@pytest.mark.parametrize(
    "args, message, fix",
    [
        (
            ["train", "--alpha", "-1", "--at", "fgsm"],
            "--alpha must be a finite number >= 0",
            "pass a radius",
        ),
        (["compare", "--alpha", "inf"], "--alpha must be a finite number >= 0", "pass a radius"),
        (["train", "--cm-target-ema", "1"], "--cm-target-ema must lie in [0, 1)", "0.95"),
        (["train", "--batch-size", "100000000"], "GiB of memory", "smaller --batch-size"),
        (["train", "--at", "trades"], "--at must be one of", "pass --at none"),
        (["train", "--objective", "cd"], "needs a teacher", "--teacher PATH"),
        (
            ["eval", "--checkpoint", "/nonexistent.safetensors"],
            "no such checkpoint",
            "written by train",
        ),
        (["train", "--data", "moons"], "unknown data set", "8gaussians"),
        (["compare", "--nfe", "2,x"], "comma-separated list", "--nfe 1,2,5,10"),
        (["compare", "--variants", "at,adv"], "unknown variant(s) adv", "subset of baseline"),
        (["compare", "--at", "replay"], "is a control, which compare runs", "--at free"),
        (["compare", "--preset", "iclr"], "--preset must be one of", "--preset paper"),
        (["compare", "--workers", "0"], "--workers 0 must be at least 1", "--workers 1"),
    ],
)
def test_bad_input_exits_2_with_the_fix(args, message, fix):
    proc = _run(*args)
    assert proc.returncode == 2, proc.stderr
    assert (
        error_line(proc.stderr).startswith("Error: ")
        and message in proc.stderr
        and fix in proc.stderr
    )
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_image_folder_with_mixed_sizes_and_a_corrupt_file(tmp_path):
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i, size in enumerate([(8, 8), (12, 10), (20, 20)]):
        Image.new("L", size, 40 * i).save(folder / f"{i}.png")
    (folder / "broken.jpg").write_bytes(b"\xff\xd8 truncated")
    proc = _run(
        "train",
        "--data",
        folder,
        "--image-size",
        "8",
        "--steps",
        "2",
        "--width",
        "8",
        "--diffusion-steps",
        "20",
        "--at",
        "fgsm",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["config"]["model"]["data_shape"] == [1, 8, 8]
    assert doc["config"]["at"]["alpha"] == 0.05  # --at without --alpha: the measured default
    assert any(
        "1 unreadable image file(s) skipped" in w and "broken.jpg" in w for w in doc["warnings"]
    )


def test_an_existing_out_dir_is_not_overwritten(tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    proc = _run("train", *TINY, "--steps", "2", "--out", out)
    assert proc.returncode == 2 and "--overwrite" in proc.stderr
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


@pytest.mark.slow
def test_quick_compare_is_the_demo(tmp_path):
    proc = _run("compare", "--quick", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert [row["nfe"] for row in results["per_nfe"]] == [3, 5, 10, 20]
    assert len(results["seeds"]) == 3 and results["steps"] == 800
