"""Preset names and sources."""

from __future__ import annotations

import pytest

from iclr25.core.carbon_report.presets import (
    GPU_FIELDS,
    SITE_FIELDS,
    datacenter,
    find_gpu_model_key,
    gpu_model,
    load_presets,
)
from iclr25.errors import InputError


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("H100", "h100-sxm"),
        ("h100", "h100-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),  # nvidia-smi names
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA H100 NVL", "h100-nvl"),
        ("A100", "a100-sxm"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm"),
        ("NVIDIA A100-SXM4-40GB", "a100-sxm"),  # the nvidia-smi examples
        ("NVIDIA H200", "h200-sxm"),
        ("nvidia h100 80gb hbm3", "h100-sxm"),
        ("NVIDIA H100-SXM5-80GB", "h100-sxm"),
        ("2 x NVIDIA H100 80GB HBM3", "h100-sxm"),  # CodeCarbon's gpu_model column
        ("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("H200", "h200-sxm"),
        ("NVIDIA H200 NVL", "h200-nvl"),
        ("h200-sxm", "h200-sxm"),
    ],
)
def test_gpu_names_match_case_insensitively(name, key):
    assert find_gpu_model_key(name) == key
    assert find_gpu_model_key(name.upper()) == key


def test_unknown_gpu_lists_the_valid_names():
    assert find_gpu_model_key("Tesla V100-SXM2-16GB") is None
    assert find_gpu_model_key("NVIDIA GH200 480GB") is None  # not an H200: no silent match
    assert find_gpu_model_key("NVIDIA H1000") is None
    with pytest.raises(InputError) as err:
        gpu_model("V100")
    assert "h100-sxm" in err.value.fix and "a100-sxm" in err.value.fix


def test_datacenter_aliases_and_unknown():
    assert datacenter("Jupiter").name == "texas"
    assert datacenter("AUGUSTA").pue == 1.12
    with pytest.raises(InputError) as err:
        datacenter("mars")
    assert "iowa, lumi, texas" in err.value.fix


def test_every_constant_has_a_value_and_a_source():
    presets = load_presets()
    for entry in presets["datacenters"].values():
        for field in SITE_FIELDS:
            assert isinstance(entry[field]["value"], int | float) and entry[field]["source"]
    for entry in presets["gpus"].values():
        for field in GPU_FIELDS:
            assert entry[field]["value"] > 0 and entry[field]["source"]
    assert gpu_model("H100").assumed == ()  # the paper's own figures
    assert "embodied_co2e_kg_per_gpu" in gpu_model("A100").assumed
