"""Kernel registry: one folder per CUDA kernel under ``iclr25/gpu/kernels/``.

Each kernel folder is a Python package holding

- ``kernel.cu``: the CUDA C++ source (package data, read through importlib.resources),
- ``__init__.py``: ``SPEC`` (a :class:`KernelSpec`) and a thin wrapper that compiles the
  source lazily with ``cupy.RawModule`` for the current device's arch (cached), and
- ``reference.py``: a numpy/torch reference implementation the kernel is tested against.

Shared headers (the tile layer) live in ``iclr25/gpu/include/`` and are on the include
path of every kernel; their content is part of every kernel's source hash.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path

from iclr25.paths import package_file

DEFAULT_ARCHS = ("sm_80", "sm_90a")


@dataclass(frozen=True)
class KernelSpec:
    """A registered CUDA kernel."""

    name: str
    package: str  # the kernel folder's package, e.g. "iclr25.gpu.kernels.pairwise_sqdist"
    description: str = ""
    source: str = "kernel.cu"
    #: archs the kernel applies to; others are reported as skipped, with ``skip_reason``
    archs: tuple[str, ...] = DEFAULT_ARCHS
    skip_reason: str = "not built for this architecture"
    #: extra options for nvcc and NVRTC (e.g. "-DTILE=64"); "-std=c++17" is always passed
    options: tuple[str, ...] = ()
    #: template instantiations to compile with CuPy (``name_expressions``)
    name_expressions: tuple[str, ...] = field(default_factory=tuple)

    def source_path(self) -> Path:
        return package_file(self.package, self.source)

    def read_source(self) -> str:
        return self.source_path().read_text(encoding="utf-8")

    def source_hash(self) -> str:
        """Hash of the source, every shared header, and the options."""
        digest = hashlib.sha256(self.read_source().encode())
        for header in sorted(include_dir().glob("*.cuh")):
            digest.update(header.name.encode())
            digest.update(header.read_bytes())
        digest.update(repr(self.options).encode())
        return digest.hexdigest()


def include_dir() -> Path:
    return package_file("iclr25.gpu", "include")


@functools.lru_cache(maxsize=1)
def all_kernels() -> tuple[KernelSpec, ...]:
    """Every registered kernel, discovered from the ``iclr25.gpu.kernels`` folders."""
    import iclr25.gpu.kernels as kernels_pkg

    specs = []
    for info in sorted(pkgutil.iter_modules(kernels_pkg.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{kernels_pkg.__name__}.{info.name}")
        spec = getattr(module, "SPEC", None)
        if isinstance(spec, KernelSpec):
            specs.append(spec)
    return tuple(specs)


def get_kernel(name: str) -> KernelSpec:
    for spec in all_kernels():
        if spec.name == name:
            return spec
    raise KeyError(name)


def device_arch(cupy) -> str:
    """The ``sm_XY`` arch of the current CuPy device (``sm_90a`` on Hopper)."""
    major, minor = divmod(int(cupy.cuda.Device().compute_capability), 10)
    arch = f"sm_{major}{minor}"
    return arch + "a" if (major, minor) == (9, 0) else arch


def needs_arch_specific_target(spec: KernelSpec) -> bool:
    """True when every arch the kernel is built for is an arch-specific target (``sm_90a``):
    it uses features (wgmma, setmaxnreg) that the plain ``sm_90`` target lacks."""
    return all(arch.endswith("a") for arch in spec.archs)


def nvrtc_options(spec: KernelSpec) -> tuple[str, ...]:
    """Options for ``cupy.RawModule(code=...)``. No ``-arch``: CuPy appends
    ``-arch=sm_XY`` for the current device itself. A second arch option is an error in older
    NVRTC (NVRTC_ERROR_INVALID_OPTION, CuPy issue #3292); NVRTC 12.9 accepts it, with a
    "followed by" warning or silently, and which target wins depends on the pair — so the
    build would depend on the NVRTC version. Targets CuPy cannot ask for (sm_90a) go
    through nvcc instead (:func:`load_module`)."""
    return ("-std=c++17", f"-I{include_dir()}", *spec.options)


@functools.cache
def load_module(name: str):
    """Compile kernel ``name`` for the current device, once per process.

    Kernels for plain archs go through CuPy's NVRTC path (``RawModule(code=...)``, cached
    on disk by CuPy under ``CUPY_CACHE_DIR``). CuPy cannot request an arch-specific target
    such as ``sm_90a``, so kernels built only for such targets are compiled with nvcc into
    a cached cubin (:func:`iclr25.gpu.compile.build_cubin`) and loaded from it."""
    from iclr25.gpu import get_cupy

    cupy = get_cupy()
    if cupy is None:
        raise RuntimeError("load_module needs CuPy and a CUDA device")
    spec = get_kernel(name)
    arch = device_arch(cupy)
    if needs_arch_specific_target(spec):
        if arch not in spec.archs:
            raise RuntimeError(f"kernel {name} runs only on {', '.join(spec.archs)}, not {arch}")
        from iclr25.gpu.compile import build_cubin

        return cupy.RawModule(path=str(build_cubin(spec, arch)))
    return cupy.RawModule(
        code=spec.read_source(),
        options=nvrtc_options(spec),
        name_expressions=spec.name_expressions or None,
    )
