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
        "timm.models.save_for_hf(m, sys.argv[1], model_args=a); "
        "a = {**a, 'class_token': False, 'global_pool': 'avg'}; "
        "m = timm.create_model('vit_tiny_patch16_224', pretrained=False, **a); "
        "m.pretrained_cfg = {**m.pretrained_cfg, 'input_size': (3, 16, 16)}; "
        "timm.models.save_for_hf(m, sys.argv[2], model_args=a)"
    )
    subprocess.run([sys.executable, "-c", code, root / "vit", root / "vit_nocls"], check=True)
    return root


def image_folders(root):
    """ImageFolders with one bad property each: one class, a class with one image, two
    unreadable images (10 classes × 2 textures otherwise)."""
    from iclr25.core.mim_refine.data import Split, write_image_folder
    from iclr25.core.mim_refine.textures import CLASSES, make_textures

    images, labels = make_textures(20, seed=1)
    for name in ("one_class", "one_image", "broken"):
        write_image_folder(root / name, Split(images, labels, CLASSES))
    for cls in CLASSES[1:]:
        for path in (root / "one_class" / cls).glob("*.png"):
            path.unlink()
    next((root / "one_image" / "dots").glob("*.png")).unlink()
    broken = sorted((root / "broken").rglob("*.png"))[:2]
    for path in broken:
        path.write_bytes(b"not a png")
    return broken[0]


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
    np.savez(tmp_path / "nolabels.npz", features=feats)
    np.savez(tmp_path / "nan.npz", features=np.where(feats > 3, np.nan, feats), labels=labels)
    (tmp_path / "text.npz").write_text("not an npz")
    a, b = ("--train", tmp_path / "a.npz"), ("--test", tmp_path / "b.npz")
    cases = [
        (("--train", tmp_path / "a.npz", "--test", tmp_path / "d5.npz"), "same model and block"),
        (("--train", tmp_path / "nolabels.npz", *b), "labels=(N,) ints"),
        ((*a, "--test", tmp_path / "nan.npz"), "drop or fix them"),
        ((*a, "--test", tmp_path / "text.npz"), "pass an NPZ file"),
        ((*a, *b, "--k", "0"), "pick 1 ≤ k ≤ bank"),
        ((*a, *b, "--k", "61"), "pick 1 ≤ k ≤ bank"),  # the bank holds 60
        ((*a, *b, "--tau", "0"), "e.g. --tau 0.07"),
        ((*a, *b, "--tau", "-1"), "e.g. --tau 0.07"),
    ]
    out = tmp_path / "out"
    for args, fix in cases:
        bad = cli("mim-refine", "knn", *args, "--out", out)
        assert bad.returncode == 2, (args, bad)
        assert fix in error_line(bad.stderr), args
        assert not out.exists(), args


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_bad_input_exits_2_with_one_line_and_writes_nothing(cli, folders, tmp_path):
    """The issue's bad-input list (the k-NN feature files: the test above)."""
    save, out = tmp_path / "refined", tmp_path / "out"
    first_broken = image_folders(tmp_path)
    vit = ("--model", folders / "vit")
    refine = ("refine", *vit, "--save", save)
    cases = [
        (("profile", "--model", tmp_path), "timm save_for_hf folder"),
        (("profile", "--model", folders / "vit_nocls", "--pooling", "cls"), "--pooling mean"),
        (("profile", *vit, "--data", tmp_path / "one_class"), "at least two classes"),
        (("profile", *vit, "--data", tmp_path / "one_image"), "at least 2 images"),
        (
            ("profile", *vit, "--data", tmp_path / "broken"),
            f"2 unreadable image(s) under {tmp_path / 'broken'}, first: {first_broken}",
        ),  # fmt: skip
        (("profile", *vit, "--k", "0"), "pick 1 ≤ k ≤ bank"),
        (("profile", *vit, "--k", "31"), "outside 1..30"),  # validation bank: 3 per class
        (("profile", *vit, "--tau", "0"), "e.g. --tau 0.07"),
        ((*refine, "--heads", "0,2"), "e.g. --heads auto"),
        ((*refine, "--heads", "4"), "e.g. --heads auto"),  # depth 3
        ((*refine, "--heads", "2,2"), "once"),
        ((*refine, "--tau", "0"), "e.g. --tau 0.2"),
        ((*refine, "--lr", "0"), "e.g. --lr 1e-3"),
        ((*refine, "--lr", "nan"), "e.g. --lr 1e-3"),
        ((*refine, "--queue", "31", "--batch-size", "8"), "use --queue ≥ 32"),
        (("experiment", "--seeds", "1"), "use --seeds 3"),
    ]
    for args, fix in cases:
        bad = cli("mim-refine", *args, "--n-train", "40", "--n-test", "20", "--out", out)
        assert bad.returncode == 2, (args, bad)
        assert fix in error_line(bad.stderr), args
        assert not save.exists() and not out.exists(), args
    save.mkdir()
    (save / "keep.txt").write_text("mine")
    bad = cli("mim-refine", *refine, "--n-train", "40", "--n-test", "20")
    assert bad.returncode == 2 and "--overwrite" in error_line(bad.stderr)
    assert [p.name for p in save.iterdir()] == ["keep.txt"]


@pytest.mark.slow  # a CLI start plus a few training steps
def test_a_nan_loss_exits_1_and_saves_nothing(cli, folders, tmp_path):
    save = tmp_path / "refined"
    args = ("mim-refine", "refine", "--model", folders / "vit", "--save", save, "--lr", "1e30",
            "--head-steps", "4", "--steps", "2", "--batch-size", "8", "--queue", "32",
            "--topk", "3", "--n-train", "40", "--n-test", "20")  # fmt: skip
    bad = cli(*args)
    assert bad.returncode == 1, bad
    assert "lower --lr" in error_line(bad.stderr)
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
