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
tanh in place (on CPU through NumPy's SIMD tanh, :func:`tanh_`), ∂Z in place over ∂σ,
∂s into A G's buffer, and only σ and s kept for backward. Same number of dense and
sparse products as autograd (12 and 4 per half): the saving is in passes over (n, d)
arrays, fresh allocations and autograd bookkeeping. ``A`` is anything with ``__call__``
(A @ x) and ``transposed()``; :class:`.graphs.Aggregation` also adds its products
straight into their sums. First-order only (``once_differentiable``): nothing in ph-dgn
differentiates twice.

:class:`SymplecticStep` is PH-DGN_C's whole step (symplectic Euler, :mod:`.phdgn` steps
1–2) as one node: q' = q + ε ∇_p H(p), p' = p − ε ∇_q H(q'). ε is folded into the
(d, d) weights (q' = q + σ (εW) + Aᵀ (σ (εV)), formed by one ``addmm`` on q and one
accumulated sparse product), so the step needs no scaling or add passes; backward, with
G_p', G_q' the cotangents of p', q' (Hess_s = ∂(∇_s H)/∂s, symmetric):
  ∂L/∂q = G_q' − ε Hess_q G_p',   ∂L/∂p = G_p' + ε Hess_p ∂L/∂q
each half's backward above with cotangent ∓ε G (again folded into the weights) and the
incoming gradient as the ``addmm`` input of ∂s. The model uses it whenever the port
terms are off (α = 0 or no dampening, and β = 0 or no forcing).

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


def _half_forward(s, w, b, v, agg, base=None, c=1.0):
    """(σ, out) for one half: out = c ∇_s H (``base`` None) or ``base`` + c ∇_s H."""
    z = torch.addmm(b, s, w.t())  # s Wᵀ + b
    u = s @ v.t()
    sig = _kernel_tanh(agg, z, u)  # GPU fast path: tanh(Z + A u) fused, or None
    if sig is None:
        _add_product(agg, z, u)  # + A (s Vᵀ)
        sig = tanh_(z)
    wc, vc = (w, v) if c == 1.0 else (w * c, v * c)  # c folded into the (d, d) weights
    torch.mm(sig, vc, out=u)  # c σ V, into u's buffer
    if base is None:
        out = agg.transposed()(u)  # Aᵀ (c σ V)
        out.addmm_(sig, wc)  # + c σ W
    else:
        out = torch.addmm(base, sig, wc)  # base + c σ W
        _add_product(agg.transposed(), out, u)  # + Aᵀ (c σ V)
    return sig, out


def _half_backward(g, s, sig, w, v, agg, needs, base=None, c=1.0):
    """(∂s, ∂W, ∂b, ∂V) for the cotangent c·G of ∇_s H; ∂s has ``base`` added when given.
    ``needs`` says which of ∂W, ∂b, ∂V to form (None where not)."""
    g = g.contiguous()
    ag = agg(g)  # A G
    wc, vc = (w, v) if c == 1.0 else (w * c, v * c)
    dsig = g @ wc.t()
    dsig.addmm_(ag, vc.t())  # ∂σ = c G Wᵀ + c (A G) Vᵀ
    dz = torch.ops.aten.tanh_backward.grad_input(dsig, sig, grad_input=dsig)  # ∂σ ⊙ (1 − σ²)
    r = agg.transposed()(dz)  # Aᵀ ∂Z
    dw = db = dv = None
    if needs[0]:
        dw = dz.t() @ s
        dw.addmm_(sig.t(), g, alpha=c)  # ∂W = c σᵀ G + ∂Zᵀ s
    if needs[1]:
        db = dz.sum(0)
    if needs[2]:
        dv = r.t() @ s
        dv.addmm_(sig.t(), ag, alpha=c)  # ∂V = c σᵀ (A G) + rᵀ s
    # last: ∂s may go into A G's buffer, which nothing reads any more
    into = {"out": ag} if _owned(ag, g, *([] if base is None else [base])) else {}
    ds = torch.mm(dz, w, **into) if base is None else torch.addmm(base, dz, w, **into)
    ds.addmm_(r, v)  # (base +) ∂Z W + r V
    return ds, dw, db, dv


class HamiltonianGrad(torch.autograd.Function):
    """∇_s H_s(s) = σ(Z) W + Aᵀ σ(Z) V for one half; see the module docstring."""

    @staticmethod
    def forward(ctx, s, w, b, v, agg):
        sig, out = _half_forward(s, w, b, v, agg)
        ctx.save_for_backward(s, sig, w, v)
        ctx.agg = agg
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        s, sig, w, v = ctx.saved_tensors
        ds, dw, db, dv = _half_backward(g, s, sig, w, v, ctx.agg, ctx.needs_input_grad[1:4])
        return ds, dw, db, dv, None


def hamiltonian_grad(s, w, b, v, agg) -> torch.Tensor:
    """∇_s H_s for weights W (d, d), b (d,), V (d, d) and aggregation ``agg``  (n, d)."""
    return HamiltonianGrad.apply(s, w, b, v, agg)


class SymplecticStep(torch.autograd.Function):
    """One symplectic Euler step of PH-DGN_C as one autograd node (module docstring)."""

    @staticmethod
    def forward(ctx, p, q, w_p, b_p, v_p, w_q, b_q, v_q, agg_p, agg_q, eps):
        sig_p, q2 = _half_forward(p, w_p, b_p, v_p, agg_p, base=q, c=eps)  # q + ε ∇_p H
        sig_q, p2 = _half_forward(q2, w_q, b_q, v_q, agg_q, base=p, c=-eps)  # p − ε ∇_q H
        ctx.save_for_backward(p, sig_p, q2, sig_q, w_p, v_p, w_q, v_q)
        ctx.aggs, ctx.eps = (agg_p, agg_q), eps
        return p2, q2

    @staticmethod
    @once_differentiable
    def backward(ctx, gp2, gq2):
        p, sig_p, q2, sig_q, w_p, v_p, w_q, v_q = ctx.saved_tensors
        (agg_p, agg_q), eps, needs = ctx.aggs, ctx.eps, ctx.needs_input_grad
        # ∂L/∂q = ∂L/∂q' = G_q' − ε Hess_q G_p'  (p' = p − ε ∇_q H(q'), q' = q + ε ∇_p H(p))
        gq, dw_q, db_q, dv_q = _half_backward(
            gp2, q2, sig_q, w_q, v_q, agg_q, needs[5:8], base=gq2.contiguous(), c=-eps
        )
        # ∂L/∂p = G_p' + ε Hess_p ∂L/∂q
        gp, dw_p, db_p, dv_p = _half_backward(
            gq, p, sig_p, w_p, v_p, agg_p, needs[2:5], base=gp2.contiguous(), c=eps
        )
        return gp, gq, dw_p, db_p, dv_p, dw_q, db_q, dv_q, None, None, None


def symplectic_step(p, q, h_p, h_q, aggs, eps: float):
    """(p', q') = (p − ε ∇_q H(q'), q + ε ∇_p H(p)) for halves ``h_p``, ``h_q`` (modules
    with ``w`` (Linear, W and b) and ``v`` (Linear, V)) and aggregations (Φ_p, Φ_q)."""
    return SymplecticStep.apply(
        p, q, h_p.w.weight, h_p.w.bias, h_p.v.weight,
        h_q.w.weight, h_q.w.bias, h_q.v.weight, *aggs, float(eps),
    )  # fmt: skip
