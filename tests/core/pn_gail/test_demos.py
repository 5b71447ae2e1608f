"""Generated demonstrations, the two file formats, and every refusal of a bad file."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.pn_gail import demo_files
from iclr25.core.pn_gail.demos import DemoConfig, generate
from iclr25.errors import InputError, UsageError
from iclr25.testing import assert_close


@pytest.fixture(scope="module")
def small():
    return generate(DemoConfig(episodes=1), seed=0)


def test_generated_demos_have_the_planned_mixture(small):
    assert len(small) == 5 * 200
    levels = [d["level"] for d in small.demonstrators]
    assert levels == [0.0, 0.4, 0.6, 0.8, 1.0]
    assert (small.true_confidence[small.demonstrator == 0] == 1.0).all()
    assert small.labeled.sum() == 200  # labelled fraction 0.2
    assert_close(small.confidence[small.labeled], small.true_confidence[small.labeled])
    assert np.abs(small.actions).max() <= 2.0


def test_confidence_falls_as_epsilon_rises(small):
    conf = [d["confidence"] for d in small.demonstrators]
    assert conf[0] == 1.0 and conf[-1] == 0.0
    assert all(a > b for a, b in zip(conf, conf[1:], strict=False)), conf
    returns = [d["return_mean"] for d in small.demonstrators]
    assert returns[0] > returns[2] > returns[4]


def test_optimal_setting_is_all_expert_and_generation_is_seeded():
    d = generate(DemoConfig(episodes=1, optimal_share=1.0), seed=3)
    assert (d.true_confidence == 1.0).all() and len(d.demonstrators) == 1
    again = generate(DemoConfig(episodes=1, optimal_share=1.0), seed=3)
    assert np.array_equal(d.obs, again.obs) and np.array_equal(
        d.confidence, again.confidence, equal_nan=True
    )


def test_npz_and_x_mixture_load_alike(tmp_path, small):
    npz = tmp_path / "d.npz"
    small.confidence = small.true_confidence.copy()  # all labelled, like the official files
    demo_files.save_demos(npz, small, overwrite=False)
    pairs = np.hstack([small.obs, small.actions]).astype(np.float64)
    np.save(tmp_path / "X_mixture.npy", pairs)
    np.save(tmp_path / "X_mixture_conf.npy", small.true_confidence)
    a = demo_files.load_demos(npz, dims=(3, 1))
    b = demo_files.load_demos(tmp_path / "X_mixture.npy", tmp_path / "X_mixture_conf.npy", (3, 1))
    for key in ("obs", "actions", "confidence"):
        assert_close(getattr(a, key), getattr(b, key), what=key)
    assert a.demonstrators == small.demonstrators
    with pytest.raises(UsageError, match="--overwrite"):
        demo_files.save_demos(npz, small, overwrite=False)


def _write(tmp_path, **arrays):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    return path


GOOD = {
    "obs": np.zeros((4, 3)),
    "actions": np.zeros((4, 1)),
    "confidence": np.array([1, np.nan, 0.5, np.nan]),
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"obs": None}, "missing key"),
        ({"actions": np.zeros((3, 1))}, "'actions' has 3 rows"),
        ({"obs": np.zeros((4, 5))}, r"\(ds, da\) = \(5, 1\)"),
        (
            {"confidence": np.array([1.5, 0.2, -1, np.nan])},
            r"outside \[0, 1\]: 2 value\(s\), first at index 0",
        ),
        (
            {"obs": np.array([[0, 0, 0], [0, np.nan, 0], [0, 0, 0], [0, 0, np.inf]])},
            "NaN or inf in 'obs': 2 value",
        ),
        ({"confidence": np.full(4, np.nan)}, "no labelled pair"),
    ],
)
def test_bad_files_are_refused_with_the_fix(tmp_path, change, message):
    arrays = {**GOOD, **change}
    arrays = {k: v for k, v in arrays.items() if v is not None}
    with pytest.raises(InputError, match=message):
        demo_files.load_demos(_write(tmp_path, **arrays), dims=(3, 1))


def test_unreadable_and_unpaired_files(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    with pytest.raises(InputError, match="not a readable NPZ"):
        demo_files.load_demos(junk)
    np.save(tmp_path / "X.npy", np.zeros((5, 4)))
    with pytest.raises(InputError, match="--confidence-file"):
        demo_files.load_demos(tmp_path / "X.npy", dims=(3, 1))
    np.save(tmp_path / "c.npy", np.zeros(5))
    with pytest.raises(InputError, match="5 columns|4 columns"):
        demo_files.load_demos(tmp_path / "X.npy", tmp_path / "c.npy", dims=(4, 1))
    with pytest.raises(InputError, match="no such file"):
        demo_files.load_demos(tmp_path / "missing.npz")


def test_bad_generator_settings():
    for config, message in [
        (DemoConfig(labeled_fraction=0.0), "labeled-fraction"),
        (DemoConfig(labeled_fraction=1.5), "labeled-fraction"),
        (DemoConfig(levels=(1.5,)), "levels"),
        (DemoConfig(noise="salt"), "noise"),
    ]:
        with pytest.raises(UsageError, match=message):
            config.validate()


def test_a_missing_rl_stack_names_the_extra(monkeypatch):
    import importlib.util

    import pytest

    from iclr25.core.pn_gail import envs
    from iclr25.errors import UsageError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "sb3_contrib" else real(name)
    )
    with pytest.raises(UsageError, match="sb3_contrib") as info:
        envs.require_rl_stack()
    assert "iclr25[pn-gail]" in info.value.fix
    monkeypatch.setattr(importlib.util, "find_spec", real)
    envs.require_rl_stack()  # installed here: no error
