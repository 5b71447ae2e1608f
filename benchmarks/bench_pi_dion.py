"""pi-dion: one physics-loss step (loss + gradient), factorised Taylor mode against autograd.

Ours: the training loss of :func:`iclr25.core.pi_dion.train.train_pi_dion` — τ, τ', τ''
by forward Taylor propagation through the trunk once for the M collocation points (plus
the m sensors), then one GEMM per term (𝓛u_θ = Σ_k b^R_k 𝓛φ_k). Peer: the same loss by
plain torch autograd through the network at all N·M points (u_θ evaluated per instance
and point, u'' by two nested ``torch.autograd.grad`` calls with ``create_graph``), which
is how a PINN-style physics-informed DeepONet computes it. Same network, same points;
comparable only if the losses agree to 1e-5 (relative). 1-D: N = 100 instances × M = 128
points (``--quick``: N = 20). Statistic: median process CPU time, one torch thread.

Not measured here: the 2-D size (N = 50 × M = 1024; 2-D is not built), DeepXDE's
``PDEOperatorCartesianProd`` loss (deepxde is not installed in this environment), and the
CuPy Taylor-mode kernel (not built; needs a CUDA device).
"""

from __future__ import annotations

import torch

from benchmarks.harness import Report, Target
from iclr25.core.pi_dion.model import PIDION, NetConfig

NAME = "pi-dion"
TARGETS = {
    "loss_step_speedup_vs_autograd_1d": Target(">=", 10.0, "issue 27: ≥ 10× on 2 cores, 1-D"),
    "loss_step_speedup_vs_autograd_2d": Target(">=", 10.0, "issue 27: ≥ 10× on 2 cores, 2-D"),
    "loss_step_speedup_vs_deepxde_1d": Target(">=", 10.0, "issue 27: vs DeepXDE, 1-D"),
}
C = 1.0  # −u'' + u = f
W_RES = 0.1


def _loss(res, u_s, d):
    s2 = d.pow(2).mean(1, keepdim=True)
    return W_RES * (res.pow(2) / s2).mean() + ((u_s - d).pow(2) / s2).mean()


def ours_step(model: PIDION, d, x, z):
    def run():
        model.zero_grad(set_to_none=True)
        res, u_s = model.residual_and_fit(d, x, z, C)
        res = res / model.config.f_scale
        loss = _loss(res, u_s, d)
        loss.backward()
        return loss.detach()

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
        loss = _loss(res, u_s, d)
        loss.backward()
        return loss.detach()

    return run


def bench_1d(report: Report, n: int, m_col: int = 128, sensors: int = 64) -> None:
    torch.manual_seed(0)
    model = PIDION(NetConfig(sensors, 64, 3, 16, (2 * torch.pi) ** 2 + C))
    d = torch.randn(n, sensors)
    x = torch.rand(m_col)
    z = torch.arange(1, sensors + 1, dtype=torch.float32) / (sensors + 1)
    ours, peer = ours_step(model, d, x, z), peer_step(model, d, x, z)
    a, b = float(ours()), float(peer())
    same = abs(a - b) <= 1e-5 * max(abs(a), abs(b))
    timed = report.time(f"loss_step_1d_N{n}_M{m_col}", {"ours": ours, "peer": peer},
                        statistic="cpu_median_s")  # fmt: skip
    report.figure("1d_ms", {s: timed.seconds(s) * 1e3 for s in ("ours", "peer")})
    report.figure("1d_loss", {"ours": a, "autograd": b, "equal_1e-5": same, "N": n, "M": m_col})
    report.check("loss_step_speedup_vs_autograd_1d", timed.ratio("peer", "ours"), comparable=same)


def run(report: Report) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        bench_1d(report, 20 if report.quick else 100)
    finally:
        torch.set_num_threads(before)
    report.check("loss_step_speedup_vs_autograd_2d", None, note="2-D is not built yet")
    report.check("loss_step_speedup_vs_deepxde_1d", None,
                 note="deepxde is not installed in the shared environment")  # fmt: skip
