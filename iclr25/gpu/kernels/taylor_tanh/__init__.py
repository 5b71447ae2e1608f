"""Fused Taylor-mode tanh layer for PI-DION's trunk: a CUDA kernel as a torch autograd op.

One tanh layer of the forward Taylor propagation in :mod:`iclr25.core.pi_dion.model`
maps the pre-activations (z, z', z'') to (a, a', a'') = (tanh z, s z', s z'' − 2 a s z'²),
s = 1 − a²; torch runs that as ~10 elementwise kernels forward and more backward, the
fused kernels as one each way (``kernel.cu``). :func:`taylor_tanh` is differentiable
(torch autograd Function; CUDA float32 tensors through CuPy, anything else through the
torch reference). Tested: the hand backward against autograd (CPU, float64), the kernel
against the reference (``gpu`` marker, not yet run: no GPU here). The PI-DION trunk
(:func:`iclr25.core.pi_dion.model.taylor_trunk`) calls it on CUDA devices. Not timed: the
issue's ≥ 2× at M·width ≥ 10⁶ and the whole-step gain are not measured.
"""

from __future__ import annotations

from iclr25.gpu.kernels.taylor_tanh.reference import (
    taylor_tanh_backward_reference,
    taylor_tanh_reference,
)
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="taylor_tanh",
    package=__name__,
    description="fused Taylor-mode tanh layer (a, a', a'') forward and backward (PI-DION)",
)
THREADS = 256  # must match __launch_bounds__ in kernel.cu
MAX_BLOCKS = 65535


def _launch(name: str, inputs, n_out: int):
    """Run kernel ``name`` on same-shape CUDA float32 tensors → ``n_out`` new tensors."""
    import numpy as np
    import torch

    from iclr25.gpu import get_cupy

    cp = get_cupy()
    flat = [cp.from_dlpack(t.contiguous().view(-1)) for t in inputs]
    outs = [torch.empty_like(inputs[0]) for _ in range(n_out)]
    out_cp = [cp.from_dlpack(t.view(-1)) for t in outs]
    n = inputs[0].numel()
    if n:
        blocks = min((n + THREADS - 1) // THREADS, MAX_BLOCKS)
        load_module(SPEC.name).get_function(name)(
            (blocks,), (THREADS,), (*flat, np.int64(n), *out_cp)
        )
    return outs


def _on_kernel(z) -> bool:
    import torch

    from iclr25.gpu import get_cupy

    return z.is_cuda and z.dtype == torch.float32 and get_cupy() is not None


def _make_function():
    import torch

    class TaylorTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z, z1, z2):
            ctx.save_for_backward(z, z1, z2)
            if _on_kernel(z):
                return tuple(_launch("taylor_tanh_fwd_f32", (z, z1, z2), 3))
            return taylor_tanh_reference(z, z1, z2)

        @staticmethod
        def backward(ctx, g, g1, g2):
            z, z1, z2 = ctx.saved_tensors
            grads = [torch.zeros_like(z) if x is None else x for x in (g, g1, g2)]
            if _on_kernel(z):
                return tuple(_launch("taylor_tanh_bwd_f32", (z, z1, z2, *grads), 3))
            return taylor_tanh_backward_reference(z, z1, z2, *grads)

    return TaylorTanh


_FUNCTION = None


def taylor_tanh(z, z1, z2):
    """(tanh z, s z', s z'' − 2 tanh(z) s z'²), s = 1 − tanh² z, differentiable."""
    global _FUNCTION
    if _FUNCTION is None:
        _FUNCTION = _make_function()
    return _FUNCTION.apply(z, z1, z2)


__all__ = ["SPEC", "taylor_tanh", "taylor_tanh_backward_reference", "taylor_tanh_reference"]
