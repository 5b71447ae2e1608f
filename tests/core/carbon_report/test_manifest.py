"""Manifest parsing (YAML, JSON, CSV), precedence of overrides, and bad input."""

from __future__ import annotations

import json

import pytest

from iclr25.core.carbon_report.accounting import summarize
from iclr25.core.carbon_report.manifest import Overrides, load_runs
from iclr25.errors import InputError

RUNS = [
    {
        "name": "a",
        "stage": "development",
        "datacenter": "texas",
        "energy_kwh": 1200,
        "energy_includes_pue": True,
        "gpu_hours": 1000,
        "gpu_model": "H100",
    },
    {
        "name": "b",
        "stage": "final",
        "datacenter": "iowa",
        "hours": 10,
        "gpus": 8,
        "avg_power_w": 500,
        "gpu_model": "NVIDIA H100 80GB HBM3",
    },
    {
        "name": "c",
        "stage": "inference",
        "pue": 1.1,
        "carbon_intensity_kg_per_kwh": 0.5,
        "wue_onsite_l_per_kwh": 1.0,
        "wue_offsite_l_per_kwh": 2.0,
        "gpu_hours": 100,
        "utilization": 0.5,
        "gpu_model": "A100",
    },
]


def _write(tmp_path, suffix, runs=RUNS, defaults=None):
    path = tmp_path / f"m{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps({"runs": runs, **({"defaults": defaults} if defaults else {})}))
    elif suffix == ".yaml":
        import yaml

        path.write_text(
            yaml.safe_dump({"runs": runs, **({"defaults": defaults} if defaults else {})})
        )
    else:
        keys = sorted({k for r in runs for k in r})
        lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in runs]
        path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".csv"])
def test_formats_give_the_same_hand_computed_figures(tmp_path, suffix):
    specs, _ = load_runs(_write(tmp_path, suffix))
    out = {r["name"]: r for r in summarize(specs)["runs"]}
    assert out["a"]["it_energy_kwh"] == pytest.approx(1000.0)  # 1200 facility / PUE 1.2
    assert out["b"]["gpu_hours"] == 80 and out["b"]["it_energy_kwh"] == pytest.approx(
        40.0
    )  # 80 h x 500 W
    assert out["b"]["co2e_kg"] == pytest.approx(40 * 1.12 * 0.352)
    assert out["c"]["it_energy_kwh"] == pytest.approx(100 * 0.5 * 400 / 1000)  # A100 SXM TDP 400 W
    assert out["c"]["water_l"] == pytest.approx(20 * 1.0 + 20 * 1.1 * 2.0)
    assert out["c"]["estimated"] and not out["b"]["estimated"]


def test_defaults_and_command_line_precedence(tmp_path):
    runs = [{"name": "x", "stage": "final", "energy_kwh": 100}]
    path = _write(tmp_path, ".yaml", runs, defaults={"datacenter": "texas", "pue": 1.5})
    (spec,), _ = load_runs(path)
    assert spec.site.pue == 1.5 and spec.site.carbon_intensity_kg_per_kwh == 0.332
    (spec,), _ = load_runs(path, Overrides(pue=1.3))
    assert spec.site.pue == 1.3  # a command-line constant overrides the run and defaults
    (spec,), _ = load_runs(path, Overrides(datacenter="iowa"))
    assert spec.site.pue == 1.12  # --datacenter re-sites: the manifest's constants are ignored
    (spec,), _ = load_runs(path, Overrides(energy_includes_pue=True))
    assert spec.it_energy_kwh == pytest.approx(100 / 1.5)


def test_energy_without_gpu_hours_warns_that_embodied_is_not_counted(tmp_path):
    path = _write(
        tmp_path,
        ".json",
        [{"name": "x", "stage": "final", "energy_kwh": 10, "datacenter": "texas"}],
    )
    (spec,), warnings = load_runs(path)
    assert any("embodied" in w and "not counted" in w for w in warnings)
    assert summarize([spec])["runs"][0]["embodied_counted"] is False


@pytest.mark.parametrize(
    ("run", "what", "fix"),
    [
        (
            {"name": "x", "stage": "final", "datacenter": "texas"},
            "neither energy_kwh nor gpu_hours",
            "add energy_kwh",
        ),
        (
            {"name": "x", "stage": "final", "datacenter": "mars", "energy_kwh": 1},
            "unknown data center preset 'mars'",
            "iowa, lumi, texas",
        ),
        (
            {"name": "x", "stage": "final", "energy_kwh": 1},
            "no data center constants",
            "datacenter: texas",
        ),
        (
            {"name": "x", "stage": "manufacturing", "energy_kwh": 1, "datacenter": "texas"},
            "derived",
            "list runs",
        ),
        (
            {"name": "x", "stage": "final", "energy_kwh": -1, "datacenter": "texas"},
            "finite number >= 0",
            "fix energy_kwh",
        ),
        (
            {
                "name": "x",
                "stage": "final",
                "energy_kwh": 1,
                "datacenter": "texas",
                "energy_kWh": 2,
            },
            "unknown field(s) energy_kWh",
            "use only",
        ),
        (
            {"name": "x", "stage": "final", "hours": 3, "avg_power_w": 1, "datacenter": "texas"},
            "needs 'gpus'",
            "add gpus",
        ),
        (
            {"name": "x", "stage": "final", "gpu_hours": 3, "datacenter": "texas"},
            "without a power figure",
            "utilization",
        ),
        (
            {
                "name": "x",
                "stage": "final",
                "gpu_hours": 3,
                "utilization": 1.5,
                "gpu_model": "H100",
                "datacenter": "texas",
            },
            "above 1",
            "fraction",
        ),
        (
            {
                "name": "x",
                "stage": "final",
                "gpu_hours": 3,
                "utilization": 0.5,
                "avg_power_w": 3,
                "datacenter": "texas",
            },
            "both",
            "only one",
        ),
        (
            {
                "name": "x",
                "stage": "final",
                "gpu_hours": 3,
                "hours": 1,
                "gpus": 2,
                "avg_power_w": 3,
                "datacenter": "texas",
            },
            "disagrees",
            "only one",
        ),
        (
            {
                "name": "x",
                "stage": "final",
                "energy_kwh": 1,
                "gpu_hours": 2,
                "gpu_model": "H100",
                "lifetime_years": 0,  # would divide by zero in the amortisation
                "datacenter": "texas",
            },
            "lifetime_years=0 must be above 0",
            "fix lifetime_years",
        ),
        (
            {
                "name": "x",
                "stage": "final",
                "energy_kwh": 1,
                "pue": 0.9,
                "carbon_intensity_kg_per_kwh": 0.1,
                "wue_onsite_l_per_kwh": 0,
                "wue_offsite_l_per_kwh": 0,
            },
            "below 1",
            "PUE",
        ),
    ],
)
def test_bad_runs_give_one_clear_error(tmp_path, run, what, fix):
    with pytest.raises(InputError) as err:
        load_runs(_write(tmp_path, ".json", [run]))
    assert what in err.value.what and fix in err.value.fix


def test_yaml_errors_name_the_line(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(
        "runs:\n  - name: ok\n    stage: final\n    energy_kwh: 1\n    datacenter: texas\n"
        "  - name: bad\n    stage: final\n    datacenter: texas\n"
    )
    with pytest.raises(InputError) as err:
        load_runs(path)
    assert "line 6" in err.value.what and "'bad'" in err.value.what
    path.write_text("runs: [\n")
    with pytest.raises(InputError, match="not valid YAML"):
        load_runs(path)


@pytest.mark.parametrize(
    ("name", "text"), [("m.yaml", ""), ("m.csv", "name,stage\n"), ("m.txt", "x"), ("m.json", "{}")]
)
def test_empty_or_unknown_manifests(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError):
        load_runs(path)
    with pytest.raises(InputError, match="no such manifest"):
        load_runs(tmp_path / "missing.yaml")
