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
