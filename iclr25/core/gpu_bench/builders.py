"""Inputs, our kernel and the references of each benchmarked op, built on one device.

A builder returns a :class:`Built`: ``ours(i)`` and every ``references[name](i)`` compute
the op on input set ``i`` (the harness rotates through ``sets`` identical-valued copies so
caches are cold); ``exact()`` is the high-precision output on set 0 that errors are
measured against (fp32 torch on a GPU for 16-bit inputs, fp64 on the CPU for the fp32
CPU references). References a machine cannot run (an SDPA backend this GPU lacks,
flash-linear-attention not installed) are listed in ``unavailable`` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from iclr25.gpu.tolerance import Tolerance

TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}
#: scores of at most this many bytes per chunk when the fp32 attention reference runs
REFERENCE_CHUNK_BYTES = 1 << 30


@dataclass
class Built:
    """One case, built on its device.

    ``exact()`` gives the high-precision outputs on input set 0 by name (the first is the
    main output, the one every reference's error is measured on); ``ours_outputs()`` gives
    our kernel's outputs under the same names, each checked with ``tolerances[name]``.
    ``kernel`` is the kernel that actually runs (a dispatcher may pick another than the
    case's first choice: ``fallback`` then says why, and gpu-bench warns)."""

    ours: Callable[[int], Any] | None
    references: dict[str, Callable[[int], Any]]
    exact: Callable[[], dict[str, Any]] | None
    ours_outputs: Callable[[], dict[str, Any]] | None = None
    tolerances: dict[str, Tolerance] = field(default_factory=dict)
    kernel: str | None = None
    fallback: str = ""
    unavailable: dict[str, str] = field(default_factory=dict)


def torch_dtype(name: str):
    import torch

    return getattr(torch, TORCH_DTYPES.get(name, name))


def _generator(device: str, seed: int):
    import torch

    return torch.Generator(device=device).manual_seed(seed)


def _rotate(first: tuple, sets: int) -> list[tuple]:
    """``sets`` input sets with the values of ``first`` (copies in distinct memory)."""
    return [first] + [tuple(t.clone() for t in first) for _ in range(sets - 1)]


def _probe(refs: dict[str, Callable[[int], Any]], unavailable: dict[str, str]) -> None:
    """Run every reference once; move those that fail to ``unavailable``."""
    for name in list(refs):
        try:
            refs[name](0)
        except Exception as exc:  # a missing backend or package: report, do not fail the run
            unavailable[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            del refs[name]


# --- GEMM -----------------------------------------------------------------------------------
def _gemm_operand(rows: int, cols: int, layout: str, dtype, device: str, gen):
    """A (rows, cols) operand, stored row-major (``"n"``) or as the transpose of a
    row-major (cols, rows) matrix (``"t"``, e.g. the W of x @ W.T)."""
    import torch

    if layout == "n":
        return torch.randn(rows, cols, device=device, dtype=dtype, generator=gen)
    return torch.randn(cols, rows, device=device, dtype=dtype, generator=gen).T


def build_gemm_gpu(
    m: int,
    n: int,
    k: int,
    dtype: str,
    sets: int,
    seed: int,
    with_ours: bool,
    device: str = "cuda",
    layout: str = "nn",
) -> Built:
    import torch

    from iclr25.gpu.kernels import gemm_bf16

    tdt, gen = torch_dtype(dtype), _generator(device, seed)
    a = _gemm_operand(m, k, layout[0], tdt, device, gen)
    b = _gemm_operand(k, n, layout[1], tdt, device, gen)
    data = _rotate((a, b), sets)
    plan = gemm_bf16.gemm_plan(a, b)
    refs = {"cuBLAS (torch.matmul)": lambda i: torch.matmul(*data[i])}
    return Built(
        ours=(lambda i: gemm_bf16.gemm(*data[i])) if with_ours else None,
        references=refs,
        exact=lambda: {"C": gemm_bf16.gemm_reference(a, b)},
        ours_outputs=lambda: {"C": gemm_bf16.gemm(a, b)},
        tolerances={"C": gemm_bf16.gemm_rms_tolerance(tdt)},
        kernel=plan.kernel,
        fallback=plan.reason,
    )


def build_gemm_cpu(m: int, n: int, k: int, sets: int, seed: int) -> Built:
    import torch

    gen = _generator("cpu", seed)
    a, b = torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen)
    data = _rotate((a, b), sets)
    return Built(
        ours=None,
        references={"torch.matmul (fp32, CPU)": lambda i: torch.matmul(*data[i])},
        exact=lambda: {"C": a.double() @ b.double()},
    )


# --- attention ------------------------------------------------------------------------------
def _qkv(shape_q: tuple, n_kv: int, dtype, device: str, seed: int, kv_heads=None) -> tuple:
    """q of ``shape_q`` (..., H, N, D); k and v with ``kv_heads`` heads (default H)."""
    import torch

    gen = _generator(device, seed)
    q = torch.randn(*shape_q, device=device, dtype=dtype, generator=gen)
    kv_shape = (*shape_q[:-3], kv_heads or shape_q[-3], n_kv, shape_q[-1])
    k, v = (torch.randn(*kv_shape, device=device, dtype=dtype, generator=gen) for _ in range(2))
    return q, k, v


def _sdpa_backends() -> dict[str, Any]:
    from torch.nn.attention import SDPBackend

    names = {
        "flash": "FLASH_ATTENTION",
        "efficient": "EFFICIENT_ATTENTION",
        "cudnn": "CUDNN_ATTENTION",
    }
    return {f"SDPA {k}": getattr(SDPBackend, v) for k, v in names.items() if hasattr(SDPBackend, v)}


def _sdpa(q, k, v, causal: bool):
    """torch SDPA, grouped-query attention through ``enable_gqa`` when k has fewer heads."""
    import torch

    sdpa = torch.nn.functional.scaled_dot_product_attention
    if k.shape[-3] != q.shape[-3]:
        return sdpa(q, k, v, is_causal=causal, enable_gqa=True)
    return sdpa(q, k, v, is_causal=causal)


def build_attention_gpu(
    batch: int,
    heads: int,
    kv_heads: int,
    n: int,
    d: int,
    causal: bool,
    dtype: str,
    sets: int,
    seed: int,
    with_ours: bool,
    device: str = "cuda",
) -> Built:
    from torch.nn.attention import sdpa_kernel

    from iclr25.gpu.kernels import attention_fwd
    from iclr25.gpu.kernels.attention_fwd import (
        LSE_TOLERANCE,
        attention_forward,
        attention_reference,
        attention_rms_tolerance,
        expand_kv,
    )

    tdt = torch_dtype(dtype)
    q, k, v = _qkv((batch, heads, n, d), n, tdt, device, seed, kv_heads)
    data = _rotate((q, k, v), sets)
    plan = attention_fwd.attention_plan(q, k, v)

    def with_backend(backend):
        def run(i):
            with sdpa_kernel(backend):
                return _sdpa(*data[i], causal)

        return run

    refs = {name: with_backend(backend) for name, backend in _sdpa_backends().items()}
    unavailable: dict[str, str] = {}
    _probe(refs, unavailable)
    chunk = max(1, REFERENCE_CHUNK_BYTES // (3 * 4 * n * n))  # scores + softmax + mask
    group = heads // kv_heads

    def exact():
        kx, vx = expand_kv(k, group), expand_kv(v, group)
        o, lse = attention_reference(q, kx, vx, causal, batch_chunk=chunk)
        return {"O": o, "LSE": lse}

    def ours_outputs():
        o, lse = attention_forward(q, k, v, causal=causal, return_lse=True)
        return {"O": o, "LSE": lse}

    return Built(
        ours=(lambda i: attention_forward(*data[i], causal=causal)) if with_ours else None,
        references=refs,
        exact=exact,
        ours_outputs=ours_outputs,
        tolerances={"O": attention_rms_tolerance(tdt), "LSE": LSE_TOLERANCE},
        kernel=plan.kernel,
        fallback=plan.reason,
        unavailable=unavailable,
    )


def build_attention_cpu(
    batch: int, heads: int, kv_heads: int, n: int, d: int, causal: bool, sets: int, seed: int
) -> Built:
    import torch

    from iclr25.gpu.kernels.attention_fwd import attention_reference, expand_kv

    q, k, v = _qkv((batch, heads, n, d), n, torch.float32, "cpu", seed, kv_heads)
    data = _rotate((q, k, v), sets)
    group = heads // kv_heads

    def naive(i):
        qi, ki, vi = data[i]
        return attention_reference(qi, expand_kv(ki, group), expand_kv(vi, group), causal)[0]

    refs = {
        "torch SDPA (fp32, CPU)": lambda i: _sdpa(*data[i], causal),
        "softmax(QK^T)V (fp32, CPU)": naive,
    }
    kx, vx = expand_kv(k, group), expand_kv(v, group)
    return Built(
        ours=None,
        references=refs,
        exact=lambda: {"O": attention_reference(q, kx, vx, causal, dtype=torch.float64)[0]},
    )


# --- attention backward ---------------------------------------------------------------------
def _sdpa_backward_reference(data: list[tuple], causal: bool, backend) -> Callable[[int], Any]:
    """SDPA's backward with ``backend``: the forward graph of every input set is built
    once (untimed); a call runs autograd.grad through it (dQ, dK, dV)."""
    import torch
    from torch.nn.attention import sdpa_kernel

    graphs = []
    for q, k, v, _ in data:
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        with torch.enable_grad(), sdpa_kernel(backend):
            graphs.append((leaves, _sdpa(*leaves, causal)))

    def run(i):
        leaves, out = graphs[i]
        return torch.autograd.grad(out, leaves, data[i][3], retain_graph=True)

    return run


def build_attention_bwd_gpu(
    batch: int,
    heads: int,
    kv_heads: int,
    n: int,
    d: int,
    causal: bool,
    dtype: str,
    sets: int,
    seed: int,
    with_ours: bool,
    device: str = "cuda",
) -> Built:
    import torch

    from iclr25.gpu.kernels.attention_bwd import (
        attention_backward,
        attention_backward_reference,
        attention_grad_tolerance,
    )
    from iclr25.gpu.kernels.attention_fwd import attention_forward

    tdt = torch_dtype(dtype)
    q, k, v = _qkv((batch, heads, n, d), n, tdt, device, seed, kv_heads)
    do = torch.randn(q.shape, device=device, dtype=tdt, generator=_generator(device, seed + 1))
    data = _rotate((q, k, v, do), sets)
    refs, unavailable = {}, {}
    for name, backend in _sdpa_backends().items():
        try:
            refs[name] = _sdpa_backward_reference(data, causal, backend)
        except Exception as exc:  # a backend this GPU or shape lacks
            unavailable[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    _probe(refs, unavailable)
    forward = (
        [attention_forward(*s[:3], causal=causal, return_lse=True) for s in data]
        if with_ours
        else []
    )

    def ours(i):
        qi, ki, vi, doi = data[i]
        return attention_backward(qi, ki, vi, *forward[i], doi, causal)

    def exact():
        o = forward[0][0] if forward else None  # the closed form at our O (see the reference)
        dq, dk, dv = attention_backward_reference(q, k, v, do, causal, o=o)
        return {"dQ": dq, "dK": dk, "dV": dv}

    def ours_outputs():
        return dict(zip(("dQ", "dK", "dV"), ours(0), strict=True))

    tol = attention_grad_tolerance(tdt)
    return Built(
        ours=ours if with_ours else None,
        references=refs,
        exact=exact,
        ours_outputs=ours_outputs,
        tolerances={"dQ": tol, "dK": tol, "dV": tol},
        kernel="attention_bwd",
        unavailable=unavailable,
    )


def build_attention_bwd_cpu(
    batch: int, heads: int, kv_heads: int, n: int, d: int, causal: bool, sets: int, seed: int
) -> Built:
    import torch

    from iclr25.gpu.kernels.attention_bwd import attention_backward_reference

    q, k, v = _qkv((batch, heads, n, d), n, torch.float32, "cpu", seed, kv_heads)
    do = torch.randn(q.shape, generator=_generator("cpu", seed + 1))
    data = _rotate((q, k, v, do), sets)
    sdpa = _sdpa_backward_reference(data, causal, _cpu_backend())
    refs = {
        "torch SDPA backward (fp32, CPU)": sdpa,
        "autograd of softmax(QK^T)V (fp32, CPU)": lambda i: attention_backward_reference(
            *data[i][:3], data[i][3], causal
        ),
    }

    def exact():
        grads = attention_backward_reference(q, k, v, do, causal, dtype=torch.float64)
        return dict(zip(("dQ", "dK", "dV"), grads, strict=True))

    return Built(ours=None, references=refs, exact=exact)


def _cpu_backend():
    from torch.nn.attention import SDPBackend

    return SDPBackend.MATH


# --- linear attention -----------------------------------------------------------------------
def alibi_slopes(heads: int, device: str = "cpu"):
    """Per-head decay slopes 2^(-8 (h + 1) / H) (ALiBi's, as used by Lightning Attention)."""
    import torch

    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)], device=device)


def _fla_native(data: list[tuple], call: Callable) -> Callable[[int], Any]:
    """A flash-linear-attention kernel fed its native (B, T, H, D) layout (contiguous
    copies made once per input set, untimed) and returning a (B, H, T, D) view, as every
    other output; ``call(q, k, v)`` imports fla, so import errors surface when the
    reference is probed."""
    native: dict[int, tuple] = {}

    def run(i):
        if i not in native:
            native[i] = tuple(t.transpose(1, 2).contiguous() for t in data[i])  # (B, T, H, D)
        out = call(*native[i])
        return (out[0] if isinstance(out, tuple) else out).transpose(1, 2)

    return run


def _fla_reference(data: list[tuple], slopes) -> Callable[[int], Any]:
    """flash-linear-attention's chunked linear attention (with decay: simple GLA)."""

    def call(q, k, v):
        from fla.ops.linear_attn import chunk_linear_attn
        from fla.ops.simple_gla import chunk_simple_gla

        if slopes is None:
            return chunk_linear_attn(q, k, v, scale=1.0, normalize=False)
        return chunk_simple_gla(q, k, v, g_gamma=-slopes, scale=1.0)

    return _fla_native(data, call)


def build_linear_gpu(
    batch: int,
    heads: int,
    n: int,
    d: int,
    decay: bool,
    dtype: str,
    sets: int,
    seed: int,
    with_ours: bool,
    device: str = "cuda",
) -> Built:
    from iclr25.gpu.kernels.linear_attention import linear_attention, linear_attention_chunked
    from iclr25.gpu.kernels.linear_attention.reference import linear_attention_rms_tolerance

    tdt = torch_dtype(dtype)
    q, k, v = _qkv((batch, heads, n, d), n, tdt, device, seed)
    q, k = q / math.sqrt(d), k / math.sqrt(d)
    data = _rotate((q, k, v), sets)
    slopes = alibi_slopes(heads, device) if decay else None
    refs = {
        "PyTorch chunked": lambda i: linear_attention_chunked(*data[i], slopes),
        "flash-linear-attention": _fla_reference(data, slopes),
    }
    unavailable: dict[str, str] = {}
    _probe(refs, unavailable)
    return Built(
        ours=(lambda i: linear_attention(*data[i], slopes)) if with_ours else None,
        references=refs,
        exact=lambda: {"O": linear_attention_chunked(q.float(), k.float(), v.float(), slopes)},
        ours_outputs=lambda: {"O": linear_attention(q, k, v, slopes)},
        tolerances={"O": linear_attention_rms_tolerance(tdt)},
        kernel="linear_attention",
        unavailable=unavailable,
    )


def build_linear_cpu(
    batch: int, heads: int, n: int, d: int, decay: bool, sets: int, seed: int
) -> Built:
    import torch

    from iclr25.gpu.kernels.linear_attention import (
        linear_attention_chunked,
        linear_attention_reference,
    )

    q, k, v = _qkv((batch, heads, n, d), n, torch.float32, "cpu", seed)
    q, k = q / math.sqrt(d), k / math.sqrt(d)
    data = _rotate((q, k, v), sets)
    slopes = alibi_slopes(heads) if decay else None
    refs = {
        "PyTorch chunked (fp32, CPU)": lambda i: linear_attention_chunked(*data[i], slopes),
        "quadratic definition (fp32, CPU)": lambda i: linear_attention_reference(*data[i], slopes),
    }
    return Built(
        ours=None,
        references=refs,
        exact=lambda: {"O": linear_attention_reference(q, k, v, slopes, dtype=torch.float64)},
    )


# --- Based ---------------------------------------------------------------------------------
def _fla_based(data: list[tuple]) -> Callable[[int], Any]:
    """flash-linear-attention's fused chunked Based kernel (q is pre-scaled as ours is,
    so ``scale=1``)."""

    def call(q, k, v):
        from fla.ops.based import fused_chunk_based

        return fused_chunk_based(q, k, v, scale=1.0, use_norm=True)

    return _fla_native(data, call)


def build_based_gpu(
    batch: int,
    heads: int,
    n: int,
    d: int,
    dv: int,
    dtype: str,
    sets: int,
    seed: int,
    with_ours: bool,
    device: str = "cuda",
) -> Built:
    from iclr25.gpu.kernels.linear_attention import based, linear_attention_chunked

    tdt = torch_dtype(dtype)
    q, k, v = _based_qkv(batch, heads, n, d, dv, tdt, device, seed)
    data = _rotate((q, k, v), sets)
    refs = {
        "PyTorch chunked": lambda i: based.based_attention(
            *data[i], linear=linear_attention_chunked
        ),
        "flash-linear-attention": _fla_based(data),
    }
    unavailable: dict[str, str] = {}
    _probe(refs, unavailable)
    exact = _based_exact(q, k, v, n)
    return Built(
        ours=(lambda i: based.based_attention(*data[i])) if with_ours else None,
        references=refs,
        exact=lambda: {"O": exact()},
        ours_outputs=lambda: {"O": based.based_attention(q, k, v)},
        tolerances={"O": based.based_tolerance(tdt)},
        kernel="linear_attention",
        unavailable=unavailable,
    )


def _based_qkv(batch, heads, n, d, dv, dtype, device, seed) -> tuple:
    """q, k (B, H, N, d') with unit-variance q·k/√d' logits; v (B, H, N, Dv)."""
    q, k, _ = _qkv((batch, heads, n, d), n, dtype, device, seed)
    _, _, v = _qkv((batch, heads, n, dv), n, dtype, device, seed + 1)
    return q, k, v


def _based_exact(q, k, v, n: int):
    """The fp32 composition on the fp32 chunked algorithm (the quadratic definition needs
    N² memory per head at gpu-bench sizes; the CPU tests tie the two together)."""
    import torch

    from iclr25.gpu.kernels.linear_attention import based, linear_attention_chunked

    def exact():
        q32, k32, v32 = (t.float() for t in (q, k, v))
        if n <= 1024:
            return based.based_reference(q32, k32, v32, dtype=torch.float32)
        return based.based_attention(q32, k32, v32, linear=linear_attention_chunked)

    return exact


def build_based_cpu(batch: int, heads: int, n: int, d: int, dv: int, sets: int, seed: int) -> Built:
    import torch

    from iclr25.gpu.kernels.linear_attention import based, linear_attention_chunked

    q, k, v = _based_qkv(batch, heads, n, d, dv, torch.float32, "cpu", seed)
    data = _rotate((q, k, v), sets)
    refs = {
        "PyTorch chunked (fp32, CPU)": lambda i: based.based_attention(
            *data[i], linear=linear_attention_chunked
        ),
        "quadratic definition (fp32, CPU)": lambda i: based.based_reference(
            *data[i], dtype=torch.float32
        ),
    }
    return Built(
        ours=None,
        references=refs,
        exact=lambda: {"O": based.based_reference(q, k, v, dtype=torch.float64)},
    )


# --- hot paths of other kernels -------------------------------------------------------------
def build_hot_path(case, with_ours: bool) -> Built:
    """A kernel's :class:`iclr25.gpu.hotpath.HotPathCase`: its reference is the peer and the
    error is measured against the reference's output (there is no separate exact)."""
    ours, reference = case.setup()
    return Built(
        ours=(lambda i: ours()) if with_ours else None,
        references={case.reference: lambda i: reference()},
        exact=lambda: {"out": reference()},
        ours_outputs=lambda: {"out": ours()},
        tolerances={"out": Tolerance(rtol=case.rtol, atol=case.atol)},
        kernel=case.op,
    )
