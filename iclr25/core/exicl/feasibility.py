"""The feasibility function φ_ω(s, i) ∈ [0, 1] and the constraint losses (Eq. 11–13).

Symbols (code → paper):

- :class:`FeasibilityNet` → φ_ω(s_t^i, i): permissibility (1 = allowed) of a state at
  diffusion level i, a sigmoid MLP on Fourier features of the state and the level i/T
  (our choice; the paper does not say how i enters). ``members`` networks are evaluated
  together (K constraints). The mask of a constraint is {cells c : φ(c, 0) < 0.5}.
  With ``cells`` the logit gets a per-cell table ω_c, bilinearly interpolated between cell
  centres, added **at the clean level i = 0 only**: logit(s, i) = MLP(s, i) + 1[i = 0]·ω(s).
  Why (our diagnosis of the infeasible constraints): the smooth MLP (shortest wavelength
  ≈ 2 cells) cannot put φ < 0.5 on a one-cell wall whose neighbours on both sides are
  expert cells pushed to φ ≈ 1, so shortcuts stayed open right at the pinch point; and a
  table that also acted on noised states (even slightly noised: σ ≈ 1 cell at i = 1 of the
  20-level cosine schedule) had the noised expert states raise φ on the wall cells next to
  them. The noise-conditioned part stays the MLP; the table refines the clean level, where
  masks are read and verdicts made.
  φ depends on the state only: the exact verifier checks state constraints, and a
  state-action φ would have no mask (the action enters the cost through the states it
  visits).
- :func:`noise_robust_icl_loss` → L_NR(ω) = E_i[ −E_{τ∈D_E} mean_t log φ(s_t^i, ℓ_i)
  + E_{τ̂~p̃} mean_t log φ(ŝ_t^i, ℓ_i) ], τ^i ~ q(τ^i | τ^0), i drawn per trajectory with
  more weight on low noise (i = ⌊T u²⌋, u uniform; our choice), φ's level input
  ℓ_i = (i + 1)/T (:func:`level_of`), log φ computed as log(φ + 10⁻⁵) as in Malik et
  al.'s code. Plus the same ICL term on the clean trajectories at level 0,
  −E_{D_E} mean_t log φ(s_t, 0) + E_{τ̂} mean_t log φ(ŝ_t, 0) (ours: the level-0 mask must
  allow every expert state and forbid the generated shortcuts; it is the only term that
  reaches the cell table). Defect fixed here: the first version gave index i its level as
  i/T, so index 0 — already noised, σ ≈ 0.67 cells — counted as clean; noised expert
  states then reached the table and raised φ on the one-cell wall between expert cells
  (the "pinch" left open at the wall's top).
- :func:`sparsity_loss` → E_x[1 − φ(x, 0)] over states x drawn uniformly from the map
  (δ_s in the paper's Eq. 12; "closeness to everything allowed").
- :func:`info_nce_loss` → δ_d term of Eq. 13, in our InfoNCE form over **whole
  constraints**: −log[e^{s(φ, 1)} / (e^{s(φ, 1)} + Σ_{φ̃∈Z} e^{s(φ, φ̃)})],
  s(u, v) = −mean_x |u(x) − v(x)| / τ over states x of the relevant region; positive: the
  all-permissive constraint 1; negatives: the accepted constraints Z. It is 0 when Z is
  empty and grows as φ approaches an accepted φ̃. For masks A (accepted) and B (new) it
  is ≈ 0 once |A Δ B| exceeds |B| by a few τ·P, i.e. once B reuses less than half of A,
  and then its gradient vanishes. Why not per state (the first version): per state x the
  positive and every forbidding φ̃ both pull φ(x) towards 1, with a loss of up to 1/τ = 10
  per state that never saturates, so the second constraint came out empty ("no
  constraint"); at the constraint level the term stops pulling once the candidate differs
  enough from Z, and the ICL loss keeps it explaining the expert.
- :class:`MaskPermissibility` → φ for a given cell mask (calibration, ``verify``'s GDV):
  per-cell logits ±``sharpness``, bilinearly interpolated, level ignored.
"""

from __future__ import annotations

import math

import numpy as np

LOG_EPS = 1e-5
FOURIER = 4  # frequencies 2^0 … 2^3 (π per unit): down to ~2 cells on a 16-cell map


def features(x, level: float):
    """(…, 2) unit coordinates and a level in [0, 1] (a float, or a tensor (…, 1)) →
    features (…, 2 + 4·FOURIER + 1)."""
    import torch

    parts = [x]
    for k in range(FOURIER):
        parts += [torch.sin((2.0**k) * math.pi * x), torch.cos((2.0**k) * math.pi * x)]
    lv = torch.full_like(x[..., :1], 0.0) + level
    return torch.cat(parts + [lv], dim=-1)


N_FEATURES = 2 + 4 * FOURIER + 1


def make_feasibility_net(members: int, hidden: int, seed: int, init_bias: float = 3.0,
                         cells: tuple[int, int] | None = None):  # fmt: skip
    import torch
    from torch import nn

    class FeasibilityNet(nn.Module):
        """``members`` independent MLPs: logits (K, P) of points (K, P, 2) at a level."""

        def __init__(self) -> None:
            super().__init__()
            g = torch.Generator().manual_seed(int(seed) % 2**63)

            def init(*shape, fan_in):
                return nn.Parameter(torch.randn(*shape, generator=g) / math.sqrt(fan_in))

            k = members
            self.w1 = init(k, N_FEATURES, hidden, fan_in=N_FEATURES)
            self.b1 = nn.Parameter(torch.zeros(k, 1, hidden))
            self.w2 = init(k, hidden, hidden, fan_in=hidden)
            self.b2 = nn.Parameter(torch.zeros(k, 1, hidden))
            self.w3 = init(k, hidden, 1, fan_in=hidden)
            self.b3 = nn.Parameter(torch.full((k, 1, 1), float(init_bias)))
            w, h = cells if cells is not None else (0, 0)
            self.table = nn.Parameter(torch.zeros(k, h, w)) if cells is not None else None

        def forward(self, x, level):
            f = features(x, level)  # (K, P, F)
            h = torch.nn.functional.silu(torch.baddbmm(self.b1, f, self.w1))
            h = torch.nn.functional.silu(torch.baddbmm(self.b2, h, self.w2))
            logits = torch.baddbmm(self.b3, h, self.w3).squeeze(-1)  # (K, P)
            if self.table is None:
                return logits
            clean = (f[..., -1] <= 0.0).to(logits.dtype)  # (K, P): the table acts at level 0
            return logits + clean * bilinear(self.table, x)

        @property
        def k(self) -> int:
            return self.w1.shape[0]

    return FeasibilityNet()


def bilinear(table, x):
    """Values of per-cell tables (K, H, W) at unit-coordinate points (K, P, 2), bilinearly
    interpolated between cell centres (clamped at the border) → (K, P)."""
    import torch

    k, height, width = table.shape
    gx = ((x[..., 0] + 1.0) * (width - 1) / 2.0).clamp(0, width - 1)
    gy = ((x[..., 1] + 1.0) * (height - 1) / 2.0).clamp(0, height - 1)
    x0 = gx.detach().floor().clamp(max=width - 2).long()
    y0 = gy.detach().floor().clamp(max=height - 2).long()
    fx, fy = gx - x0, gy - y0
    flat = table.reshape(k, -1)
    kk = torch.arange(k)[:, None].expand_as(x0)

    def at(yy, xx):
        return flat[kk, yy * width + xx]

    top = at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx
    bottom = at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx
    return top * (1 - fy) + bottom * fy


class MaskPermissibility:
    """φ of given cell masks (K, H, W), True = infeasible: bilinear ±sharpness logits."""

    def __init__(self, masks: np.ndarray, sharpness: float = 6.0) -> None:
        import torch

        m = np.asarray(masks, dtype=bool)
        self.k, self.height, self.width = m.shape
        self.logits = torch.as_tensor(np.where(m, -sharpness, sharpness), dtype=torch.float32)

    def __call__(self, x, level=0.0):
        """Logits (K, P) of unit-coordinate points (K, P, 2); the level is ignored."""
        return bilinear(self.logits, x)


def log_phi(logits):
    import torch

    return torch.log(torch.sigmoid(logits) + LOG_EPS)


def cell_centres_unit(width: int, height: int):
    """(H·W, 2) unit coordinates of every cell centre, row-major [y, x]."""
    import torch

    ys, xs = np.mgrid[0:height, 0:width]
    xy = np.stack([xs.ravel() / ((width - 1) / 2.0) - 1, ys.ravel() / ((height - 1) / 2.0) - 1], 1)
    return torch.as_tensor(xy, dtype=torch.float32)


def masks_of(phi_fn, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(masks (K, H, W) bool: φ(c, 0) < 0.5, φ values (K, H, W)) of every member."""
    import torch

    pts = cell_centres_unit(width, height)
    with torch.no_grad():
        logits = phi_fn(pts[None].expand(_members(phi_fn), -1, -1), 0.0)
    phi = torch.sigmoid(logits).reshape(-1, height, width).numpy().astype(np.float64)
    return phi < 0.5, phi


def _members(phi_fn) -> int:
    return phi_fn.k


def trajectory_cost(phi_fn, x, level: float, members: int):
    """c_φ(τ, i) = −Σ_t log φ over states and move midpoints; x (K·b, H, 2) → (K·b,)."""
    import torch

    mids = 0.5 * (x[:, 1:] + x[:, :-1])
    pts = torch.cat([x, mids], dim=1)  # (K·b, 2H−1, 2)
    b = pts.shape[0] // members
    logits = phi_fn(pts.reshape(members, b * pts.shape[1], 2), level)
    return -log_phi(logits).reshape(members * b, -1).sum(-1)


def level_of(i: int, steps: int) -> float:
    """φ's level input for τ^i, the DDPM sample at index i (``q_sample(τ^0, i)``): (i + 1)/T.

    Index i = 0 is already noised (σ ≈ 0.67 cells on the 16-cell maps, cosine schedule of
    20 levels), so 0.0 is kept for the clean τ^0 alone — the level where the per-cell table
    acts and masks are read."""
    return (int(i) + 1) / float(steps)


def draw_levels(n: int, steps: int, generator):
    """(n,) DDPM indices i ∈ {0 … T−1}, more weight on low noise (i = ⌊T u²⌋)."""
    import torch

    u = torch.rand(n, generator=generator)
    return (steps * u * u).long().clamp(max=steps - 1)


def noise_robust_icl_loss(phi_fn, expert_u, generated_u, ddpm, generator, extra_expert=None):
    """L_NR for one member: expert (Ne, H, 2), generated (Ng, H, 2) unit trajectories;
    ``extra_expert`` (P, 2): further points the expert needs allowed (level 0).

    Two parts (module docstring): the noised ICL term, each trajectory at its own DDPM
    index i with φ's level (i + 1)/T, and the clean ICL term at level 0 (experts up,
    generated down), the only one that reaches the per-cell table."""
    import torch

    def mean_log_phi(traj):
        i = draw_levels(len(traj), ddpm.steps, generator)
        noisy = ddpm.q_sample(traj, i, torch.randn(traj.shape, generator=generator))
        level = ((i.float() + 1.0) / ddpm.steps)[:, None].expand(-1, traj.shape[1])  # (N, H)
        logits = phi_fn(noisy.reshape(1, -1, 2), level.reshape(1, -1, 1))  # (1, N·H)
        return log_phi(logits).mean()

    def clean_log_phi(traj):
        return log_phi(phi_fn(traj.reshape(1, -1, 2), 0.0)).mean()

    loss = -mean_log_phi(expert_u) + mean_log_phi(generated_u)
    loss = loss - clean_log_phi(expert_u) + clean_log_phi(generated_u)
    if extra_expert is not None and len(extra_expert):
        loss = loss - log_phi(phi_fn(extra_expert[None], 0.0)).mean()
    return loss


def sparsity_loss(phi_values):
    return (1.0 - phi_values).mean()


def info_nce_loss(phi_values, accepted_values, temperature: float):
    """φ (P,) of the candidate, φ̃ (A, P) of the accepted constraints at the same P states
    → the constraint-level InfoNCE (module docstring): one similarity per constraint,
    s(u, v) = −mean_x |u(x) − v(x)| / τ, positive the all-permissive constraint 1."""
    import torch

    if accepted_values is None or len(accepted_values) == 0:
        return phi_values.sum() * 0.0
    pos = -(1.0 - phi_values).abs().mean() / temperature  # ()
    neg = -(accepted_values - phi_values[None]).abs().mean(dim=1) / temperature  # (A,)
    logits = torch.cat([pos[None], neg])  # (1 + A,)
    return torch.logsumexp(logits, dim=0) - pos
