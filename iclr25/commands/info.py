"""`iclr25 info`: versions, CUDA devices, NVML, nvcc and kernel compile status."""

from typing import Annotated

import typer

from iclr25.demo import DemoStep
from iclr25.output import rows_table
from iclr25.runner import Run, with_common_options

NAME = "info"
HELP = "Show versions, CUDA devices, NVML/nvcc availability and kernel compile status."


def _cuda_devices() -> list[dict]:
    from iclr25.gpu import cuda_available, get_cupy

    if not cuda_available():
        return []
    cupy = get_cupy()
    devices = []
    if cupy is not None:
        for index in range(cupy.cuda.runtime.getDeviceCount()):
            props = cupy.cuda.runtime.getDeviceProperties(index)
            name = props["name"]
            devices.append(
                {
                    "index": index,
                    "name": name.decode() if isinstance(name, bytes) else str(name),
                    "memory_gib": round(props["totalGlobalMem"] / 2**30, 2),
                    "compute_capability": f"{props['major']}.{props['minor']}",
                }
            )
        return devices
    import torch

    for index in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(index)
        devices.append(
            {
                "index": index,
                "name": p.name,
                "memory_gib": round(p.total_memory / 2**30, 2),
                "compute_capability": f"{p.major}.{p.minor}",
            }
        )
    return devices


def _nvml_status() -> dict:
    try:
        import pynvml
    except ImportError:
        return {"available": False, "reason": "nvidia-ml-py is not installed"}
    try:
        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
            count = pynvml.nvmlDeviceGetCount()
        finally:
            pynvml.nvmlShutdown()
    except pynvml.NVMLError as exc:
        return {"available": False, "reason": f"NVML could not start: {exc}"}
    driver = version.decode() if isinstance(version, bytes) else str(version)
    return {"available": True, "driver": driver, "devices": count}


def collect_info(compile_kernels: bool) -> dict:
    from iclr25.gpu.compile import cached_status, compile_all, nvcc_path, nvcc_version
    from iclr25.gpu.registry import all_kernels
    from iclr25.output import package_versions

    if compile_kernels:
        kernels = [
            {k: r.as_dict()[k] for k in ("name", "arch", "ok", "skipped", "registers", "spills")}
            for r in compile_all()
        ]
    else:
        kernels = cached_status()
    return {
        "versions": package_versions(("typer", "rich", "numpy", "torch", "transformers", "cupy")),
        "cuda_devices": _cuda_devices(),
        "nvml": _nvml_status(),
        "nvcc": {"path": nvcc_path(), "version": nvcc_version()},
        "kernels_registered": [spec.name for spec in all_kernels()],
        "kernels": kernels,
    }


def _render(console, results) -> None:
    from iclr25.output import render_mapping

    render_mapping(console, {k: v for k, v in results.items() if k != "kernels"}, title="iclr25")
    if results["kernels"]:
        console.print(rows_table(results["kernels"], title="kernel compile status"))


def info(
    compile_kernels: Annotated[
        bool, typer.Option("--compile", help="Compile-check every kernel with nvcc now (cached).")
    ] = False,
    *,
    run: Run,
) -> None:
    """JSON results: ``versions``, ``cuda_devices``, ``nvml``, ``nvcc``,
    ``kernels_registered`` and ``kernels`` (compile status per kernel and arch)."""
    results = collect_info(compile_kernels)
    results["device"] = run.device.as_dict()
    run.finish(results, {"compile": compile_kernels}, _render)


app = with_common_options(info)

DEMO = (
    DemoStep(
        "info",
        ("info",),
        lambda doc: (
            f"device {doc['results']['device']['kind']}, "
            f"{len(doc['results']['kernels_registered'])} kernels registered"
        ),
    ),
)
