"""Reference paths of the fused Taylor-mode tanh layer (see ``kernel.cu``).

- :func:`taylor_tanh_reference`: the forward in plain torch ops (a, a', a'' from z, z',
  z''), differentiable by autograd — the definition the kernel must equal;
- :func:`taylor_tanh_backward_reference`: the hand-written backward of ``kernel.cu`` in
  torch ops, tested against autograd of the forward (float64) on the CPU.
"""

from __future__ import annotations


def taylor_tanh_reference(z, z1, z2):
    """(a, a', a'') = (tanh z, s z', s z'' − 2 a s z'²) with s = 1 − tanh² z."""
    import torch

    a = torch.tanh(z)
    s = 1 - a * a
    return a, s * z1, s * z2 - 2 * a * s * z1 * z1


def taylor_tanh_backward_reference(z, z1, z2, g, g1, g2):
    """(∂L/∂z, ∂L/∂z', ∂L/∂z'') from the output gradients (g, g1, g2), as in the kernel."""
    import torch

    t = torch.tanh(z)
    s = 1 - t * t
    dz = g * s - 2 * t * s * (g1 * z1 + g2 * z2) - 2 * g2 * s * (s - 2 * t * t) * z1 * z1
    return dz, g1 * s - 4 * g2 * t * s * z1, g2 * s
