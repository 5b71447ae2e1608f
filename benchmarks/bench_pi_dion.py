"""pi-dion: one physics-loss step (loss + gradient), factorised Taylor mode against autograd.

Ours: the training loss of :func:`iclr25.core.pi_dion.train.train_pi_dion` — τ, τ', τ''
by forward Taylor propagation through the trunk once for the M collocation points (plus
the m sensors), then one GEMM per term (𝓛u_θ = Σ_k b^R_k 𝓛φ_k). Peer: the same loss by
plain torch autograd through the network at all N·M points (u_θ evaluated per instance
and point, u'' by two nested ``torch.autograd.grad`` calls with ``create_graph``), which
is how a PINN-style physics-informed DeepONet computes it. Same network, same points;
comparable only if the losses agree to 1e-5 (relative). 1-D: N = 100 instances × M = 128
points (``--quick``: N = 20). Statistic: median process CPU time, one torch thread.

2-D: N = 50 instances × M = 1024 points (``--quick``: N = 10) with the 2-D network (CNN
branches, trunk on (x, y)); the peer takes ∂_xx u and ∂_yy u by nested autograd at every
(instance, point).

DeepXDE (the ``bench`` extra; skipped with the reason when not installed): its
``PDEOperatorCartesianProd`` loss, torch backend, reverse-mode autodiff, computes the PDE
residual one function at a time (``dde.grad.hessian`` of that function's outputs w.r.t.
the shared trunk points), which is how a user would build a physics-informed DeepONet
with it. Our network's (u_θ, f_θ) at the M points are its outputs, scaled per instance by
1 / (F · RMS(d_i)) so its per-function MSE of −u'' + c u − f is our residual term; the
sensor term is added by the same code as ours. Comparable only if the loss agrees to 1e-5.

Not measured here: the CuPy Taylor-mode kernel (needs a CUDA device).
"""

from __future__ import annotations

import torch

from benchmarks.harness import Report, Target
from iclr25.core.pi_dion.model import PIDION, NetConfig
from iclr25.core.pi_dion.model2d import PIDION2D, NetConfig2D

NAME = "pi-dion"
TARGETS = {
    "loss_step_speedup_vs_autograd_1d": Target(">=", 10.0, "issue 27: ≥ 10× on 2 cores, 1-D"),
    "loss_step_speedup_vs_autograd_2d": Target(">=", 10.0, "issue 27: ≥ 10× on 2 cores, 2-D"),
    "loss_step_speedup_vs_deepxde_1d": Target(">=", 10.0, "issue 27: vs DeepXDE, 1-D"),
}
F_2D = 5 * torch.pi**2 + 1.0  # train2d.f_scale_2d(C)
C = 1.0  # −u'' + u = f
W_RES = 0.1


def _fit_term(u_s, d):
    """The sensor (data-misfit) term of the training loss."""
    return ((u_s - d).pow(2) / d.pow(2).mean(1, keepdim=True)).mean()


def _terms(res, u_s, d):
    """(residual term, sensor term) of the training loss; the loss is their sum."""
    return W_RES * (res.pow(2) / d.pow(2).mean(1, keepdim=True)).mean(), _fit_term(u_s, d)


def _backward(res_term, fit_term):
    """Backpropagate the loss; return (loss, residual term) for the equality check: the
    loss alone would hide a wrong residual (at initialisation the sensor term is ≈ 1, the
    residual term orders of magnitude smaller)."""
    loss = res_term + fit_term
    loss.backward()
    return torch.stack([loss.detach(), res_term.detach()])


def _loss_figure(a, b, peer: str, same: bool) -> dict:
    return {"ours": float(a[0]), peer: float(b[0]), "residual_term_ours": float(a[1]),
            f"residual_term_{peer}": float(b[1]), "equal_1e-5": same}  # fmt: skip


def _agree(a, b, rel: float = 1e-5) -> bool:
    """Loss and residual term each equal to ``rel`` (relative)."""
    return bool(((a - b).abs() <= rel * torch.maximum(a.abs(), b.abs())).all())


def ours_step(model: PIDION, d, x, z):
    def run():
        model.zero_grad(set_to_none=True)
        res, u_s = model.residual_and_fit(d, x, z, C)
        res = res / model.config.f_scale
        return _backward(*_terms(res, u_s, d))

    return run


def peer_step(model: PIDION, d, x, z):
    """Autograd at every (instance, point): the trunk runs on N·M points."""
    n, m_col = d.shape[0], len(x)

    def run():
        model.zero_grad(set_to_none=True)
        coef_u, coef_f = model.coefficients(d)  # (N, p)
        xs = x.repeat(n).requires_grad_(True)  # (N·M,)
        tau = model.trunk(xs[:, None]).view(n, m_col, -1)  # (N, M, p)
        u = (xs * (1 - xs)).view(n, m_col) * torch.einsum("nmp,np->nm", tau, coef_u)
        (du,) = torch.autograd.grad(u.sum(), xs, create_graph=True)
        (d2u,) = torch.autograd.grad(du.sum(), xs, create_graph=True)
        f = torch.einsum("nmp,np->nm", tau, coef_f)
        res = (-d2u.view(n, m_col) + C * u - f) / model.config.f_scale
        tz = model.trunk(z[:, None])  # (m, p)
        u_s = coef_u @ ((z * (1 - z))[:, None] * tz).T
        return _backward(*_terms(res, u_s, d))

    return run


def _setup_1d(n: int, m_col: int, sensors: int):
    """The 1-D network, data, collocation and sensor points every 1-D case uses."""
    torch.manual_seed(0)
    model = PIDION(NetConfig(sensors, 64, 3, 16, (2 * torch.pi) ** 2 + C))
    d = torch.randn(n, sensors)
    x = torch.rand(m_col)
    z = torch.arange(1, sensors + 1, dtype=torch.float32) / (sensors + 1)
    return model, d, x, z


def _compare(report: Report, key: str, target: str, ours, peer, side: str, figure: str,
             size: dict) -> None:  # fmt: skip
    """Check equality (loss and residual term to 1e-5), time both sides interleaved
    (median CPU), record the figures ``<key>_ms`` / ``<key>_loss`` and the target."""
    a, b = ours(), peer()
    same = _agree(a, b)
    label = f"loss_step_{key}_N{size['N']}_M{size['M']}"
    timed = report.time(label, {"ours": ours, side: peer}, statistic="cpu_median_s")
    report.figure(f"{key}_ms", {s: timed.seconds(s) * 1e3 for s in ("ours", side)})
    report.figure(f"{key}_loss", _loss_figure(a, b, figure, same) | size)
    report.check(target, timed.ratio(side, "ours"), comparable=same)


def bench_1d(report: Report, n: int, m_col: int = 128, sensors: int = 64) -> None:
    model, d, x, z = _setup_1d(n, m_col, sensors)
    _compare(report, "1d", "loss_step_speedup_vs_autograd_1d", ours_step(model, d, x, z),
             peer_step(model, d, x, z), "peer", "autograd", {"N": n, "M": m_col})  # fmt: skip


def peer_step_2d(model: PIDION2D, d, x, z):
    """Autograd at every (instance, point) in 2-D: the trunk runs on N·M points, Δu by
    nested autograd along x and along y."""
    n, m_col = d.shape[0], len(x)

    def run():
        model.zero_grad(set_to_none=True)
        coef_u, coef_f = model.coefficients(d)  # (N, p)
        pts = x.repeat(n, 1).requires_grad_(True)  # (N·M, 2)
        tau = model.trunk(pts).view(n, m_col, -1)  # (N, M, p)
        px, py = pts[:, 0], pts[:, 1]
        b = (px * (1 - px) * py * (1 - py)).view(n, m_col)
        u = b * torch.einsum("nmp,np->nm", tau, coef_u)
        (du,) = torch.autograd.grad(u.sum(), pts, create_graph=True)  # (N·M, 2)
        (dxx,) = torch.autograd.grad(du[:, 0].sum(), pts, create_graph=True)
        (dyy,) = torch.autograd.grad(du[:, 1].sum(), pts, create_graph=True)
        lap = (dxx[:, 0] + dyy[:, 1]).view(n, m_col)
        f = torch.einsum("nmp,np->nm", tau, coef_f)
        res = (-lap + C * u - f) / F_2D
        tz = model.trunk(z)  # (m, p)
        bz = (z[:, 0] * (1 - z[:, 0]) * z[:, 1] * (1 - z[:, 1]))[:, None]
        u_s = coef_u @ (bz * tz).T
        return _backward(*_terms(res, u_s, d))

    return run


def ours_step_2d(model: PIDION2D, d, x, z):
    def run():
        model.zero_grad(set_to_none=True)
        res, u_s = model.residual_and_fit(d, x, z, C)
        return _backward(*_terms(res / F_2D, u_s, d))

    return run


def bench_2d(report: Report, n: int, m_col: int = 1024, side: int = 16) -> None:
    torch.manual_seed(0)
    model = PIDION2D(NetConfig2D(side, 16, 64, 3, 16, F_2D))
    d = torch.randn(n, side * side)
    x = torch.rand(m_col, 2)
    g = torch.arange(1, side + 1, dtype=torch.float32) / (side + 1)
    z = torch.cartesian_prod(g, g)  # row-major (x, y), as the CNN reads the grid
    _compare(report, "2d", "loss_step_speedup_vs_autograd_2d", ours_step_2d(model, d, x, z),
             peer_step_2d(model, d, x, z), "peer", "autograd", {"N": n, "M": m_col})  # fmt: skip


def deepxde_step(model: PIDION, d, x, z):
    """DeepXDE's physics-informed DeepONet loss (``PDEOperatorCartesianProd``, reverse
    mode) on our network: one autograd Hessian per function (instance)."""
    import deepxde as dde
    import numpy as np

    n, m_col = d.shape[0], len(x)

    def pde(pts, y, _aux):  # y (M, 2): u and f of one function, already scaled
        return -dde.grad.hessian(y, pts, component=0) + C * y[:, 0:1] - y[:, 1:2]

    geom = dde.geometry.Interval(0.0, 1.0)
    problem = dde.data.PDE(geom, pde, [], num_domain=m_col, num_boundary=0)
    space = dde.data.GRF(length_scale=0.2)
    data = dde.data.PDEOperatorCartesianProd(
        problem, space, z.numpy()[:, None].astype(np.float64), n
    )
    net = type("Net", (), {"auxiliary_vars": [torch.zeros(m_col)] * n})()
    holder = type("Model", (), {"net": net})()
    mse = dde.losses.get("MSE")

    def run():
        model.zero_grad(set_to_none=True)
        dde.grad.clear()
        coef_u, coef_f = model.coefficients(d)  # (N, p)
        pts = x[:, None].clone().requires_grad_(True)  # (M, 1): the trunk input
        tau = model.trunk(pts)  # (M, p)
        u = (pts * (1 - pts)).T * (coef_u @ tau.T)  # (N, M)
        f = coef_f @ tau.T
        scale = 1 / (model.config.f_scale * d.pow(2).mean(1, keepdim=True).sqrt())  # (N, 1)
        outputs = torch.stack([u * scale, f * scale], -1)  # (N, M, 2)
        (res_loss,) = data.losses_train(None, outputs, mse, (d, pts), holder)
        tz = model.trunk(z[:, None])
        u_s = coef_u @ ((z * (1 - z))[:, None] * tz).T
        return _backward(W_RES * res_loss, _fit_term(u_s, d))

    return run


def bench_deepxde_1d(report: Report, n: int, m_col: int = 128, sensors: int = 64) -> None:
    import os

    os.environ.setdefault("DDE_BACKEND", "pytorch")  # else deepxde writes ~/.deepxde/config.json
    try:
        import deepxde  # noqa: F401
    except ImportError:
        report.check("loss_step_speedup_vs_deepxde_1d", None,
                     note="deepxde is not installed: `pip install -e '.[bench]'`")  # fmt: skip
        return
    model, d, x, z = _setup_1d(n, m_col, sensors)
    _compare(report, "deepxde_1d", "loss_step_speedup_vs_deepxde_1d", ours_step(model, d, x, z),
             deepxde_step(model, d, x, z), "deepxde", "deepxde", {"N": n, "M": m_col})  # fmt: skip


def run(report: Report) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        bench_1d(report, 20 if report.quick else 100)
        bench_2d(report, 10 if report.quick else 50)
        bench_deepxde_1d(report, 20 if report.quick else 100)
    finally:
        torch.set_num_threads(before)
