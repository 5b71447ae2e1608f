"""scripts/train_icl_model.py is deterministic: two short runs write identical weights,
and the data it trains on has the label noise and class counts it documents."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "train_icl_model.py"


def _train(out: Path) -> bytes:
    subprocess.run(
        [sys.executable, str(SCRIPT), "--steps", "3", "--batch-size", "4", "--eval-every", "2"]
        + ["--eval-episodes", "4", "--final-episodes", "4", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=600,
        env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    return (out / "model.safetensors").read_bytes()


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_two_short_runs_write_identical_weights(tmp_path):
    assert _train(tmp_path / "a") == _train(tmp_path / "b")
    import json

    log = json.loads((tmp_path / "a" / "training_log.json").read_text())
    assert log["steps"] == 3 and log["wall_s"] > 0 and log["torch_threads"] == 1
    assert log["provenance"]["command_line"][1] == "scripts/train_icl_model.py"


def test_training_episodes_have_up_to_six_classes():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import train_icl_model as script
    finally:
        sys.path.pop(0)
    from iclr25.core.icl_order import synthetic

    rng = np.random.default_rng(0)
    classes = set()
    for _ in range(2000):
        segments, shown = script.render_episode(rng, synthetic.content_words())
        assert len(segments) == script.N_DEMOS
        assert [seg.split()[1] for seg in segments] == shown  # trained on what is shown
        classes.add(len(set(shown)))
    assert max(classes) == 6 and min(classes) == 1  # 2 classes, noise-free, one label drawn


def test_label_noise_rate_and_never_the_same_label():
    from iclr25.core.icl_order.synthetic import add_label_noise

    rng = np.random.default_rng(0)
    labels = ["a", "b", "c", "d"] * 5000
    noisy = add_label_noise(rng, labels, 0.2)
    changed = np.mean([x != y for x, y in zip(labels, noisy, strict=True)])
    assert abs(changed - 0.2) < 0.01  # binomial sd 0.003
    assert set(noisy) == {"a", "b", "c", "d"}
    assert add_label_noise(rng, ["a", "a"], 1.0) == ["a", "a"]  # no other label to take
