"""Error bounds of a kernel's output against its fp32 reference, relative to the output's size.

A bound is elementwise:

    |ours - exact| <= atol_rms * rms_row(exact) + rtol * |exact| + atol

where ``rms_row`` is the root mean square of the exact output over its last dimension (a row
of C, a query's output vector). An absolute tolerance fixed in advance is meaningless once
outputs shrink (attention outputs at N = 4097 have an RMS of ~0.026, below bf16's 4u =
0.0156), and one RMS over the whole tensor is dominated by the largest rows (causal
attention's first rows): a row's own RMS is the scale its rounding errors have. The
constants of each kernel live in its ``reference.py``, each checked against a CPU model of
the kernel's roundings in tests/gpu/test_rounding_model.py (the model stays well inside, a
model with a real bug falls far outside).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    rtol: float = 0.0  # times |exact|, elementwise
    atol_rms: float = 0.0  # times the RMS of the exact row
    atol: float = 0.0  # absolute
    #: times the RMS of the whole exact tensor: a floor for rows whose exact value cancels
    #: to (almost) nothing while the kernel's rounding does not (causal dQ of query 0)
    atol_tensor_rms: float = 0.0

    def bound(self, exact):
        """The elementwise bound for ``exact`` (a float64 torch tensor)."""
        bound = self.rtol * exact.abs() + self.atol
        if self.atol_rms and exact.ndim:
            bound = bound + self.atol_rms * exact.pow(2).mean(dim=-1, keepdim=True).sqrt()
        if self.atol_tensor_rms and exact.numel():
            bound = bound + self.atol_tensor_rms * float(exact.pow(2).mean().sqrt())
        return bound

    def describe(self) -> str:
        parts = [f"{self.atol_rms:.3g} x row RMS"] if self.atol_rms else []
        parts += [f"{self.atol_tensor_rms:.3g} x RMS"] if self.atol_tensor_rms else []
        parts += [f"{self.rtol:.3g} x |exact|"] if self.rtol else []
        parts += [f"{self.atol:.3g}"] if self.atol else []
        return " + ".join(parts) or "exact"


@dataclass(frozen=True)
class ErrorReport:
    """How one output compares with its exact value."""

    name: str  # e.g. "C", "O", "LSE", "dQ"
    max_abs_err: float
    error_ratio: float  # max over elements of |error| / bound: <= 1 is within tolerance
    ok: bool
    tolerance: str  # the bound in words

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "max_abs_err": self.max_abs_err,
            "error_ratio": self.error_ratio,
            "ok": self.ok,
            "tolerance": self.tolerance,
        }


def compare(name: str, ours, exact, tol: Tolerance) -> ErrorReport:
    """Compare ``ours`` with ``exact`` (torch tensors, any dtypes, same shape) under ``tol``;
    a non-finite value in ``ours`` is never within tolerance."""
    import torch

    a = ours.double()
    e = exact.double().to(a.device)
    if a.shape != e.shape:
        raise ValueError(f"{name}: shape {tuple(a.shape)} vs exact {tuple(e.shape)}")
    if a.numel() == 0:
        return ErrorReport(name, 0.0, 0.0, True, tol.describe())
    diff = (a - e).abs()
    finite = bool(torch.isfinite(a).all())
    bound = tol.bound(e)
    ratio = diff / torch.where(bound > 0, bound, torch.full_like(bound, float("inf")))
    ratio = torch.where((diff > 0) & (bound == 0), torch.full_like(ratio, float("inf")), ratio)
    worst = float(ratio.max()) if finite else float("inf")
    max_err = float(diff.max()) if finite else float("inf")
    return ErrorReport(name, max_err, worst, finite and worst <= 1.0, tol.describe())
