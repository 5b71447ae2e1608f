"""∇H of one Hamiltonian half as one autograd node, with its backward written out.

Paper symbols (Heilig et al., ICLR 2025, §2; :mod:`.phdgn`): for one half s ∈ {p, q},
  Z = s Wᵀ + b + A (s Vᵀ),   σ = tanh Z,   ∇_s H = σ W + Aᵀ (σ V)        (n, d)
with W, b, V the half's weights and A its aggregation (Φ). Autograd would record eight
nodes (two linears, a sparse product, an add, tanh, two matmuls, a sparse product, an
add) and, in backward, accumulate the two paths into ∂s, ∂W and ∂V with separate adds.
Here, with G = ∂L/∂(∇_s H):
  ∂σ = G Wᵀ + (A G) Vᵀ,   ∂Z = ∂σ ⊙ (1 − σ²),   r = Aᵀ ∂Z
  ∂s = ∂Z W + r V,   ∂W = σᵀ G + ∂Zᵀ s,   ∂V = σᵀ (A G) + rᵀ s,   ∂b = Σ_rows ∂Z
every sum formed by BLAS accumulation (``addmm_``, β = 1) instead of a separate pass,
tanh in place, and only σ and s kept for backward. Same number of dense and sparse
products as autograd (12 and 4 per half): the saving is in passes over (n, d) arrays and
in autograd bookkeeping. ``A`` is anything with ``__call__`` (A @ x) and ``transposed()``;
:class:`.graphs.Aggregation` also adds its product straight into Z. First-order only
(``once_differentiable``): nothing in ph-dgn differentiates twice.

GPU fast path: on a CUDA float32 state with a CSR :class:`.graphs.Aggregation`, the
forward can form σ = tanh(Z + A (s Vᵀ)) in one CuPy kernel
(``iclr25/gpu/kernels/csr_spmm_tanh``: SpMM, add and tanh fused) instead of
torch.sparse + add + tanh. Issue 28 ships the kernel only if it is ≥ 1.2× faster than
torch.sparse at n ≥ 10⁵, which no run here has measured (no CUDA device), so it is off
by default: :func:`use_cuda_kernel` (or ``ICLR25_PH_DGN_CUDA_KERNEL=1``) turns it on.
The CPU path never uses it; the backward is the same either way (it needs only σ).
"""

from __future__ import annotations

import os

import numpy as np
import torch
from torch.autograd.function import once_differentiable

_NUMPY_FLOATS = (torch.float32, torch.float64)
_CUDA_KERNEL = {"on": os.environ.get("ICLR25_PH_DGN_CUDA_KERNEL", "") == "1"}


def use_cuda_kernel(on: bool) -> bool:
    """Turn the fused CuPy SpMM + tanh kernel on or off; returns the previous setting."""
    before, _CUDA_KERNEL["on"] = _CUDA_KERNEL["on"], bool(on)
    return before


def _kernel_tanh(agg, z: torch.Tensor, u: torch.Tensor) -> torch.Tensor | None:
    """tanh(z + A u) by the CuPy kernel when it applies (module docstring), else None."""
    if not (_CUDA_KERNEL["on"] and z.is_cuda and z.dtype == torch.float32):
        return None
    csr = getattr(agg, "csr", None)
    if csr is None or not csr.is_cuda or csr.crow_indices().dtype != torch.int32:
        return None
    from iclr25.gpu import get_cupy
    from iclr25.gpu.kernels.csr_spmm_tanh import MAX_D, csr_spmm_tanh_cuda

    cp = get_cupy()
    if cp is None or z.shape[1] > MAX_D:
        return None
    values = csr.values().to(torch.float32)
    with cp.cuda.ExternalStream(torch.cuda.current_stream(z.device).cuda_stream):
        out = csr_spmm_tanh_cuda(csr.crow_indices(), csr.col_indices(), values,
                                 u.contiguous(), z.contiguous())  # fmt: skip
    return torch.from_dlpack(out)


def tanh_(z: torch.Tensor) -> torch.Tensor:
    """tanh in place. On a contiguous CPU float32/float64 tensor through NumPy's SIMD tanh
    (≈ 7× faster than ``torch.tanh_`` at (10⁴, 64) float32 on this machine's AMD EPYC, one
    thread; at most 1 ulp from it); anywhere else ``torch.tanh_``."""
    if z.device.type == "cpu" and z.dtype in _NUMPY_FLOATS and z.is_contiguous():
        a = z.numpy()
        np.tanh(a, out=a)
        return z
    return z.tanh_()


def _owned(buf: torch.Tensor, *others: torch.Tensor) -> bool:
    """Whether ``buf`` may be overwritten: a contiguous tensor sharing no storage with
    ``others`` (an aggregation may hand back its input, e.g. the identity)."""
    ptr = buf.untyped_storage().data_ptr()
    return buf.is_contiguous() and all(o.untyped_storage().data_ptr() != ptr for o in others)


def _add_product(agg, out: torch.Tensor, x: torch.Tensor) -> None:
    """out += A @ x, in place (into the sparse product itself for a CSR Aggregation)."""
    add_into = getattr(agg, "add_into", None)
    if add_into is not None:
        add_into(out, x)
    else:
        out.add_(agg(x))


class HamiltonianGrad(torch.autograd.Function):
    """∇_s H_s(s) = σ(Z) W + Aᵀ σ(Z) V for one half; see the module docstring."""

    @staticmethod
    def forward(ctx, s, w, b, v, agg):
        z = torch.addmm(b, s, w.t())  # s Wᵀ + b
        u = s @ v.t()
        sig = _kernel_tanh(agg, z, u)  # GPU fast path: tanh(Z + A u) fused, or None
        if sig is None:
            _add_product(agg, z, u)  # + A (s Vᵀ)
            sig = tanh_(z)
        out = agg.transposed()(torch.mm(sig, v, out=u))  # Aᵀ (σ V), σ V into u's buffer
        out.addmm_(sig, w)  # + σ W
        ctx.save_for_backward(s, sig, w, v)
        ctx.agg = agg
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        s, sig, w, v = ctx.saved_tensors
        agg = ctx.agg
        g = g.contiguous()
        ag = agg(g)  # A G
        dsig = g @ w.t()
        dsig.addmm_(ag, v.t())  # ∂σ = G Wᵀ + (A G) Vᵀ
        dz = torch.ops.aten.tanh_backward.grad_input(dsig, sig, grad_input=dsig)  # ∂σ ⊙ (1 − σ²)
        r = agg.transposed()(dz)  # Aᵀ ∂Z
        need_s, need_w, need_b, need_v = ctx.needs_input_grad[:4]
        ds = dw = db = dv = None
        if need_w:
            dw = sig.t() @ g
            dw.addmm_(dz.t(), s)
        if need_b:
            db = dz.sum(0)
        if need_v:
            dv = sig.t() @ ag
            dv.addmm_(r.t(), s)
        if need_s:  # last: it writes into A G's buffer (no longer read)
            ds = torch.mm(dz, w, out=ag) if _owned(ag, g) else dz @ w
            ds.addmm_(r, v)
        return ds, dw, db, dv, None


def hamiltonian_grad(s, w, b, v, agg) -> torch.Tensor:
    """∇_s H_s for weights W (d, d), b (d,), V (d, d) and aggregation ``agg``  (n, d)."""
    return HamiltonianGrad.apply(s, w, b, v, agg)
