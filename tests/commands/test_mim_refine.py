"""`iclr25 mim-refine` through the real console script: JSON, seeds, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.testing import error_line


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A tiny timm ViT folder and a tiny textures ImageFolder tree (written by make-data)."""
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("mim")
    code = (
        "import timm, timm.models, sys; a = dict(img_size=16, patch_size=8, embed_dim=16, "
        "depth=3, num_heads=2, num_classes=0); "
        "m = timm.create_model('vit_tiny_patch16_224', pretrained=False, **a); "
        "m.pretrained_cfg = {**m.pretrained_cfg, 'input_size': (3, 16, 16)}; "
        "timm.models.save_for_hf(m, sys.argv[1], model_args=a)"
    )
    subprocess.run([sys.executable, "-c", code, str(root / "vit")], check=True)
    return root


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_make_data_then_profile_reports_every_block(cli, folders):
    data = folders / "data"
    made = cli("mim-refine", "make-data", data, "--n-train", "40", "--n-test", "20", "--json")
    assert made.returncode == 0, made
    assert len(list((data / "train" / "rings").glob("*.png"))) == 4
    args = ("mim-refine", "profile", "--model", folders / "vit", "--data", data, "--k", "3",
            "--probe", "--json", "--quiet")  # fmt: skip
    one = cli(*args)
    assert one.returncode == 0, one
    res = one.json()["results"]
    assert res["blocks"] == [1, 2, 3] and len(res["knn_accuracy"]) == 3
    assert len(res["probe_accuracy"]) == 3 and res["chance"] == pytest.approx(0.1)
    assert res["model"] == {"source": "timm", "path": str(folders / "vit"), "depth": 3, "dim": 16}
    assert res["verdict"] in ("holds", "fails", "vacuous", "inconclusive")
    again = cli("mim-refine", "make-data", data, "--n-train", "40", "--n-test", "20")
    assert again.returncode == 2 and "--overwrite" in error_line(again.stderr)


def test_knn_on_feature_files_and_its_bad_input(cli, tmp_path):
    rng = np.random.default_rng(0)
    labels = np.arange(60) % 3
    feats = rng.normal(size=(60, 4)) + 3 * np.eye(4)[labels]
    np.savez(tmp_path / "a.npz", features=feats, labels=labels)
    np.savez(tmp_path / "b.npz", features=feats[:30] + 0.1, labels=labels[:30])
    np.savez(tmp_path / "d5.npz", features=np.ones((3, 5)), labels=np.zeros(3, dtype=int))
    ok = cli("mim-refine", "knn", "--train", tmp_path / "a.npz", "--test", tmp_path / "b.npz",
             "--json")  # fmt: skip
    assert ok.returncode == 0, ok
    assert ok.json()["results"]["accuracy"] > 0.9 and ok.json()["results"]["n_test"] == 30
    # the other bad inputs (no labels, NaN, k, tau) are tested in tests/core/mim_refine
    bad = cli("mim-refine", "knn", "--train", tmp_path / "a.npz", "--test", tmp_path / "d5.npz")
    assert bad.returncode == 2 and "same model and block" in error_line(bad.stderr)


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_bad_input_exits_2_with_one_line_and_writes_nothing(cli, folders, tmp_path):
    save = tmp_path / "refined"
    cases = [
        (("profile", "--model", tmp_path), "timm save_for_hf folder"),
        (("refine", "--model", folders / "vit", "--save", save, "--heads", "2,2"), "once"),
        (("experiment", "--seeds", "1"), "use --seeds 3"),
    ]
    for args, fix in cases:
        bad = cli("mim-refine", *args, "--n-train", "40", "--n-test", "20")
        assert bad.returncode == 2, (args, bad)
        assert fix in error_line(bad.stderr), args
    assert not save.exists()


@pytest.mark.slow  # a CLI start plus two training stages; core tests cover refine and saving
def test_refine_saves_a_loadable_encoder_in_the_input_format(cli, folders, tmp_path):
    from iclr25.core.mim_refine.encoder import load_encoder

    save = tmp_path / "refined"
    args = ("mim-refine", "refine", "--model", folders / "vit", "--save", save, "--heads", "2,3",
            "--head-steps", "2", "--steps", "2", "--batch-size", "8", "--queue", "32",
            "--topk", "3", "--n-train", "40", "--n-test", "20", "--json", "--quiet")  # fmt: skip
    result = cli(*args)
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["heads"] == [2, 3] and len(res["loss_curve"]) == 4
    assert (save / "config.json").exists() and (save / "model.safetensors").exists()
    enc = load_encoder(save)
    assert enc.source == "timm" and enc.depth == 3 and enc.image_size == 16


def test_refine_device_cuda_without_a_device_exits_2_and_writes_nothing(cli, tmp_path):
    from iclr25.gpu import cuda_available

    if cuda_available():
        pytest.skip("a CUDA device is usable here: the gpu test covers refine on cuda")
    save = tmp_path / "refined"
    bad = cli("mim-refine", "refine", "--save", save, "--device", "cuda", "--n-train", "40",
              "--n-test", "20")  # fmt: skip
    assert bad.returncode == 2, bad
    line = error_line(bad.stderr)
    assert "--device cuda" in line and "--device cpu" in line
    assert not save.exists()
