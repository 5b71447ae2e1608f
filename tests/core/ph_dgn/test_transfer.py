"""The copy task's data, its oracle, and the verdict's clauses (fixed in advance)."""

from __future__ import annotations

import pytest
import torch

from iclr25.core.ph_dgn import transfer
from iclr25.core.ph_dgn.energy import EnergyConfig, run_energy
from iclr25.core.ph_dgn.graphs import topology
from iclr25.core.ph_dgn.models import ModelSpec, build
from iclr25.core.ph_dgn.sensitivity import SensitivityConfig, run_sensitivity, source_sensitivity
from iclr25.core.ph_dgn.transfer import TransferConfig, ci95, verdict
from iclr25.core.ph_dgn.transfer_data import copy_data, official_data
from iclr25.errors import UsageError


def test_copy_data_targets_are_the_source_values_and_an_oracle_scores_zero():
    data = copy_data("line", 5, 7, seed=3)
    x = data["x"].view(7, 5, 2)  # (G, n, [value, marker])
    assert torch.equal(data["y"], x[:, 0, 0])
    assert x[:, 0, 1].eq(1).all() and x[:, 4, 1].eq(-1).all() and x[:, 1:4, 1].eq(0).all()

    def oracle(feats, aggs):  # carries the source value to every node of its graph
        return feats.view(7, 5, 2)[:, :1, :1].expand(7, 5, 1).reshape(35, 1)

    assert transfer._mse(oracle, data) == 0.0
    sum_agg = data["aggs"]["sum"]
    assert sum_agg.n == 35 and sum_agg.rows.numel() == 7 * 8  # 4 undirected edges per graph


def test_official_data_has_constant_target_labels_and_identity_scores_2_over_n():
    data = official_data("line", 5, 6, seed=0)
    x, y = data["x"].view(6, 5), data["y"].view(6, 5)
    assert x[:, 0].eq(1).all() and x[:, 4].eq(0).all()
    assert y[:, 4].eq(1).all() and y[:, 0].eq(0).all() and torch.equal(x[:, 1:4], y[:, 1:4])
    assert torch.mean((x.reshape(-1) - data["y"]) ** 2).item() == pytest.approx(2 / 5)


def test_train_mean_predictor_scores_about_one_twelfth():
    ys = copy_data("line", 3, 4000, seed=1)["y"]
    assert torch.mean((ys - ys.mean()) ** 2).item() == pytest.approx(1 / 12, rel=0.05)


def test_ci95_matches_the_t_interval_by_hand():
    # mean 2, sd 1, n = 3: half-width t_{0.975, 2} · 1/√3 = 4.302653 / 1.732051 = 2.484138
    low, high = ci95([1.0, 2.0, 3.0])
    assert (low, high) == pytest.approx((2 - 2.484138, 2 + 2.484138), rel=1e-6)


def _cells(mse: dict[str, float], distances=(3, 5, 10), half=0.005):
    return [
        {"model": m, "distance": d, "mean_mse": v, "val_mse": v, "ci95": [v - half, v + half]}
        for d in distances
        for m, v in mse.items()
    ]


CHANCE = {3: 0.08, 5: 0.08, 10: 0.08}
GOOD = {"phdgn-c": 0.02, "phdgn": 0.01, "gcn": 0.08, "gin": 0.079, "mlp": 0.081}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({}, "met"),
        ({"mlp": 0.03}, "void: solvable without edges"),
        ({"phdgn": 0.05, "phdgn-c": 0.06}, "not met: phdgn mean MSE"),
        ({"gin": 0.012}, "not met: gin"),
    ],
)
def test_verdict_names_the_failed_clause(change, expected):
    cfg = TransferConfig(models=tuple(GOOD))
    assert verdict(cfg, _cells({**GOOD, **change}), CHANCE)["verdict"].startswith(expected)


def test_verdict_needs_distance_10_and_three_seeds_and_says_quick():
    assert verdict(TransferConfig(seeds=2, models=tuple(GOOD)), _cells(GOOD), CHANCE)[
        "verdict"
    ].startswith("no verdict")
    quick = TransferConfig(quick=True, models=tuple(GOOD))
    assert verdict(quick, _cells(GOOD), CHANCE)["verdict"] == "quick: no verdict"


def test_config_rejects_bad_values():
    for kwargs in ({"distances": (1,)}, {"eps": 0.0}, {"models": ("gat",)}, {"epochs": 0}):
        with pytest.raises(UsageError):
            TransferConfig(**kwargs)


def test_one_cell_trains_and_is_reproducible():
    cfg = TransferConfig(distances=(3,), models=("phdgn-c",), epochs=4, graphs=(8, 4, 4), seeds=1)
    (task,) = transfer.tasks(cfg, 0)
    first, again = (
        transfer.train_cell(task.config, task.seed),
        transfer.train_cell(task.config, task.seed),
    )
    assert first == again and first["aggregations_per_forward"] == 12


def test_energy_is_conserved_by_symplectic_euler_and_not_by_explicit():
    # the drift ratio compares the first tenth with the whole run: K must span many
    # oscillations of H (K = 200 does not at ε = 0.1), so this uses the default K = 1000
    edges, n, _, _ = topology("ring", 6)
    res = run_energy(EnergyConfig(edges, n, "ring 6", steps=1000, eps=0.1, width=4))
    assert res["symplecticity_residual"] < 1e-12 and abs(res["log_abs_det"]) < 1e-12
    assert res["drift_ratio_symplectic"] < 1.5 and res["growth_ratio_explicit"] > 10
    assert res["conserved"] and res["energy_nonincreasing"]
    assert res["explicit_symplecticity_residual"] > 1e-4


def test_sensitivity_is_zero_beyond_the_receptive_field_and_for_the_mlp():
    # a GCN with L layers sees L hops: on a line of 5 nodes (4 hops) L = 3 gives exactly 0
    torch.manual_seed(0)
    shallow = build(ModelSpec("gcn", 2, 1, width=4, steps=3)).double()
    deep = build(ModelSpec("gcn", 2, 1, width=4, steps=4)).double()
    assert source_sensitivity(shallow, 5) == 0.0 and source_sensitivity(deep, 5) > 0.0
    mlp = build(ModelSpec("mlp", 2, 1, width=4, steps=5)).double()
    assert source_sensitivity(mlp, 5) == 0.0
    res = run_sensitivity(SensitivityConfig((3, 5), ("phdgn-c", "mlp"), width=4, seeds=1), 0)
    assert res["log10_sensitivity"]["mlp"] == {"3": None, "5": None}
    assert res["log10_slope"]["phdgn-c"] < 0


def test_longer_distances_are_reported_as_measured_without_a_verdict():
    far = {20: 0.08, 50: 0.08}
    cfg = TransferConfig(distances=(20, 50), models=tuple(GOOD))
    text = verdict(cfg, _cells(GOOD, distances=(20, 50)), far)["verdict"]
    assert text.startswith("no verdict") and "20, 50 reported as measured" in text


def test_saved_models_reload_to_the_same_test_mse_and_sensitivity(tmp_path):
    from iclr25.core.ph_dgn import saved
    from iclr25.core.ph_dgn.sensitivity import run_saved_sensitivity
    from iclr25.core.ph_dgn.transfer_data import make_data

    cfg = TransferConfig(distances=(3,), models=("phdgn-c", "gcn"), epochs=4,
                         graphs=(8, 4, 4), seeds=1)  # fmt: skip
    task_list = transfer.tasks(cfg, 0, keep_state=True)
    outcomes = [transfer.train_cell(t.config, t.seed) for t in task_list]
    plain = transfer.train_cell(transfer.tasks(cfg, 0)[0].config, task_list[0].seed)
    assert {k: v for k, v in outcomes[0].items() if k not in ("spec", "state")} == plain
    names = saved.write(tmp_path / "m", saved.entries(task_list, outcomes))
    assert names == ["phdgn-c-d3-s0", "gcn-d3-s0"]
    loaded = saved.read(tmp_path / "m")
    c = task_list[0].config
    test = make_data(c["variant"], c["topology"], 3, 4, c["data_seed"] + 2)
    for (meta, model), res in zip(loaded, outcomes, strict=True):
        assert meta["test_mse"] == res["test_mse"]
        assert transfer._mse(model, test) == pytest.approx(res["test_mse"], rel=1e-6)
    table = run_saved_sensitivity(loaded)
    assert table["trained"] and set(table["log10_sensitivity"]) == {"phdgn-c", "gcn"}
    # a trained model is measured, not a fresh one: the values differ from initialisation
    init = run_sensitivity(SensitivityConfig(distances=(3,), models=("gcn",), seeds=1), 0)
    assert table["log10_sensitivity"]["gcn"]["3"] != init["log10_sensitivity"]["gcn"]["3"]


def test_saved_model_folders_are_checked_before_training(tmp_path):
    from iclr25.core.ph_dgn import saved
    from iclr25.errors import InputError

    saved.check_target(tmp_path / "new", overwrite=False)  # may be created
    (tmp_path / "file").write_text("x")
    for target in (tmp_path / "no" / "m", tmp_path / "file"):
        with pytest.raises(InputError):
            saved.check_target(target, overwrite=False)
    saved.check_target(tmp_path, overwrite=True)  # non-empty, overwrite given
    with pytest.raises(InputError, match="not empty"):
        saved.check_target(tmp_path, overwrite=False)
    with pytest.raises(InputError, match="no models.json"):
        saved.read(tmp_path)
    (tmp_path / "models.json").write_text(f'{{"format": "{saved.FORMAT}", "models": ["x"]}}')
    with pytest.raises(InputError, match="unreadable"):
        saved.read(tmp_path)  # listed, but x.json and x.safetensors are missing
