"""The inverse problems: PDE menu, sensors, noise and the data generator (1-D).

Mapping to the paper (Cho & Son 2025, notation partly ours): 𝓛u = −u'' + c u with
c = k (reaction–diffusion) or c = −κ² (Helmholtz) on Ω = (0,1), u = 0 on ∂Ω; the unknown
is the source f; the data are u at the sensor set Ω_m plus noise.

Choices (ours, the paper's settings could not be read):
- f is drawn on the full fine grid (4·128 + 1 points) from a Matérn GRF (ν = 2.5,
  ℓ = 0.2, σ = 1); u is the second-order FD solution on that fine grid; methods work on
  the 129-point grid (h = 1/128) or at arbitrary points, so nothing shares the
  generator's discretisation (no inverse crime).
- Sensors read u by linear interpolation of the fine solution.
- Noise: i.i.d. Gaussian with one standard deviation σ_noise = noise × RMS(u at the
  sensors) under the prior (computed exactly from the covariance), so the data model is
  linear–Gaussian and the Bayes posterior mean in :mod:`.bayes` is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iclr25.core.pi_dion import fd, grf
from iclr25.errors import InputError, UsageError

PDES = ("reaction-diffusion", "helmholtz")
GRID_CELLS = 128  # the methods' grid: 129 points on [0, 1]
FINE_FACTOR = 4  # the generator's grid is this much finer
MIN_SENSORS = 8
SENSOR_CHOICES = "use full, subdomain:A,B or a CSV file of sensor positions (header x)"
DUPLICATE_TOL = 1e-12  # sensors closer than this are the same point


@dataclass(frozen=True)
class Problem:
    pde: str = "reaction-diffusion"
    k: float = 1.0  # reaction coefficient (reaction-diffusion), k ≥ 0
    kappa: float = 6.0  # wavenumber (helmholtz), κ² kept 2% away from every (nπ)²
    nu: float = 2.5  # Matérn smoothness of the prior of f
    ell: float = 0.2  # Matérn length scale
    noise: float = 0.01  # σ_noise / RMS(u at the sensors)
    # "full" (64 uniform interior points), "subdomain:A,B", or "file:NAME" with the
    # positions in ``points`` (read by measurements.read_sensors; kept here, not the path,
    # so a cached task can never outlive an edited file)
    sensors: str = "full"
    n_sensors: int = 64
    points: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        validate(self)

    @property
    def c(self) -> float:
        """The zeroth-order coefficient of 𝓛 = −d²/dx² + c."""
        return self.k if self.pde == "reaction-diffusion" else -(self.kappa**2)


def validate(p: Problem) -> None:
    if p.pde not in PDES:
        raise UsageError(f"unknown PDE {p.pde!r}", f"use one of: {', '.join(PDES)}")
    if p.pde == "reaction-diffusion" and p.k < 0:
        raise UsageError(f"k = {p.k} is negative", "use k ≥ 0 (or --pde helmholtz)")
    if p.pde == "helmholtz":
        n = max(1, round(p.kappa / np.pi))
        for m in (n - 1, n, n + 1):
            eig = (m * np.pi) ** 2
            if m > 0 and abs(p.kappa**2 - eig) <= 0.02 * eig:
                raise UsageError(
                    f"κ² = {p.kappa**2:.4g} is within 2% of the Dirichlet eigenvalue "
                    f"({m}π)² = {eig:.4g}: the forward problem is (nearly) singular",
                    "choose κ away from multiples of π, e.g. 6",
                )
    if p.noise < 0:
        raise UsageError(f"noise {p.noise} is negative", "use --noise ≥ 0, e.g. 0.01")
    if p.nu <= 0 or p.ell <= 0:
        raise UsageError(f"ν = {p.nu}, ℓ = {p.ell} must be positive", "e.g. --nu 2.5 --ell 0.2")
    if p.points is None and p.n_sensors < MIN_SENSORS:
        raise UsageError(f"{p.n_sensors} sensors", f"use at least {MIN_SENSORS}")
    if p.points is not None:
        check_sensors(np.asarray(p.points, np.float64), p.sensors)
    sensor_points(p)


def check_sensors(x: np.ndarray, where: str) -> None:
    """Out-of-domain, duplicate or too few sensors → one InputError."""
    out = (x < 0) | (x > 1)
    if out.any():
        raise InputError(f"{where}: {int(out.sum())} sensor(s) outside Ω = [0, 1] "
                         f"(e.g. x = {x[out][0]:.4g})", "keep sensors in [0, 1]")  # fmt: skip
    dup = np.diff(np.sort(x)) <= DUPLICATE_TOL
    if dup.any():
        raise InputError(f"{where}: {int(dup.sum())} duplicate sensor position(s) "
                         f"(e.g. x = {np.sort(x)[1:][dup][0]:.4g})",
                         "give each sensor once (average repeated readings)")  # fmt: skip
    if len(x) < MIN_SENSORS:
        raise InputError(f"{where}: {len(x)} sensors", f"use at least {MIN_SENSORS}")


def sensor_points(p: Problem) -> np.ndarray:
    """(m,) sensor positions: uniform interior points of (0,1) or of (A,B), or the
    positions of a sensor file."""
    if p.points is not None:
        return np.sort(np.asarray(p.points, np.float64))
    if p.sensors == "full":
        a, b = 0.0, 1.0
    elif p.sensors.startswith("subdomain:"):
        try:
            a, b = (float(v) for v in p.sensors.split(":", 1)[1].split(","))
        except ValueError:
            raise UsageError(
                f"--sensors {p.sensors!r} is malformed", "write subdomain:A,B"
            ) from None
        if not 0 <= a < b <= 1:
            raise UsageError(f"subdomain ({a}, {b}) is not inside (0, 1)", "use 0 ≤ A < B ≤ 1")
    else:
        raise UsageError(f"--sensors {p.sensors!r} is unknown", SENSOR_CHOICES)
    return a + (b - a) * np.arange(1, p.n_sensors + 1) / (p.n_sensors + 1)


def grid() -> np.ndarray:
    """The 129 evaluation points on [0, 1] (the methods' grid)."""
    return np.linspace(0.0, 1.0, GRID_CELLS + 1)


def fine_cells() -> int:
    return GRID_CELLS * FINE_FACTOR


@dataclass(frozen=True)
class Operators:
    """Everything linear about the generator, on the fine grid (513 points, 511 interior)."""

    prior_cov: np.ndarray  # (513, 513) covariance of f on the full fine grid
    forward: np.ndarray  # (m, 513) f ↦ clean data d (FD solve, then interpolation)
    noise_std: float  # σ_noise
    to_grid: np.ndarray = field(repr=False)  # indices of the 129-point grid in the fine grid


def operators(p: Problem, sensors: np.ndarray | None = None) -> Operators:
    """The generator's linear maps for the problem's sensors (or the positions given)."""
    sensors = sensor_points(p) if sensors is None else np.asarray(sensors, np.float64)
    n_fine = fine_cells() - 1
    x_full = np.linspace(0.0, 1.0, fine_cells() + 1)
    cov = grf.covariance(x_full, p.nu, p.ell)
    solve_mat = np.linalg.inv(fd.operator(n_fine, p.c).toarray())  # (511, 511)
    interp = fd.interpolation(n_fine, sensors)  # (m, 511)
    forward = np.zeros((len(interp), n_fine + 2))
    forward[:, 1:-1] = interp @ solve_mat  # f at the two boundary nodes does not enter
    rms_u = float(np.sqrt(np.mean(np.einsum("ij,jk,ik->i", forward, cov, forward))))
    to_grid = np.arange(0, fine_cells() + 1, FINE_FACTOR)
    return Operators(cov, forward, p.noise * rms_u, to_grid)


@dataclass
class Dataset:
    x: np.ndarray  # (m,) sensor positions
    d: np.ndarray  # (N, m) noisy sensor data
    grid: np.ndarray  # (129,)
    f: np.ndarray  # (N, 129) the true source on the grid
    u: np.ndarray  # (N, 129) the true state on the grid
    noise_std: float


def generate(p: Problem, n: int, rng: np.random.Generator, ops: Operators | None = None) -> Dataset:
    """``n`` instances: f from the prior, u by the fine FD solve, noisy sensor data."""
    ops = ops or operators(p)
    x_full = np.linspace(0.0, 1.0, fine_cells() + 1)
    f_full = grf.sample(x_full, n, p.nu, p.ell, rng)  # (N, 513)
    u_full = np.zeros_like(f_full)
    u_full[:, 1:-1] = fd.solve(f_full[:, 1:-1], p.c)
    clean = f_full @ ops.forward.T  # (N, m)
    d = clean + ops.noise_std * rng.standard_normal(clean.shape)
    idx = ops.to_grid
    return Dataset(sensor_points(p), d, grid(), f_full[:, idx], u_full[:, idx], ops.noise_std)


def rel_l2(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per-instance relative L² error on the grid (trapezoid weights) → (N,)."""
    w = np.ones(truth.shape[-1])
    w[[0, -1]] = 0.5
    num = np.sqrt(((estimate - truth) ** 2 * w).sum(-1))
    return num / np.maximum(np.sqrt((truth**2 * w).sum(-1)), 1e-300)
