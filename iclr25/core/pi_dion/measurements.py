"""A user's measurements of u: CSV or NPZ files, checked before anything runs.

Formats (1-D; a 2-D file must carry ``y``):
- CSV with a header: ``x[,y],u`` and an optional ``instance`` column, one row per
  (instance, sensor). Without ``instance`` the file is one instance.
- NPZ: ``x`` (m, d) or (m,) sensor positions and ``u`` (N, m) or (m,) values; a labelled
  NPZ (e.g. `generate`'s test.npz) also carries ``grid`` and ``f``, read only by
  :func:`read_labels` (supervised training), never by :func:`read`.

Both formats give the same :class:`Measurements` (sensors sorted by position), so CSV and
NPZ agree exactly. Every problem is one line: NaN/inf (count and rows), duplicate or
out-of-domain sensors, fewer than :data:`problem.MIN_SENSORS` sensors, instances with
different sensor sets, a 2-D file without ``y``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.core.pi_dion.problem import SENSOR_CHOICES, check_sensors
from iclr25.errors import InputError

__all__ = ["Measurements", "check_sensors", "hull", "identifiable_fraction", "read",
           "read_labels", "read_sensors"]  # fmt: skip


@dataclass(frozen=True)
class Measurements:
    x: np.ndarray  # (m,) sensor positions, increasing
    u: np.ndarray  # (N, m) measured values, columns in the order of x
    source: str


def _rows(bad: np.ndarray, offset: int = 0, limit: int = 5) -> str:
    rows = [str(int(r) + offset) for r in np.flatnonzero(bad)[:limit]]
    more = int(bad.sum()) - len(rows)
    return ", ".join(rows) + (f" and {more} more" if more > 0 else "")


def _read_csv(path: Path, dim: int) -> tuple[np.ndarray, np.ndarray]:
    with path.open(newline="") as handle:
        reader = csv.reader(handle)
        header = [h.strip().lower() for h in next(reader, [])]
        body = [row for row in reader if any(cell.strip() for cell in row)]
    if "x" not in header or "u" not in header:
        raise InputError(f"{path}: the CSV header {header} lacks x or u", "write a header x,u")
    if dim == 2 and "y" not in header:
        raise InputError(f"{path}: a 2-D file without a y column", "add y (or use --dim 1)")
    try:
        table = np.array([[float(c) for c in row] for row in body], np.float64).reshape(
            len(body), len(header)
        )
    except ValueError:
        raise InputError(f"{path}: a cell is not a number", "use plain decimal numbers") from None
    bad = ~np.isfinite(table).all(1)
    if bad.any():
        raise InputError(
            f"{path}: {int(bad.sum())} row(s) hold NaN or inf (lines {_rows(bad, offset=2)})",
            "remove or repair those rows",
        )
    inst = table[:, header.index("instance")] if "instance" in header else np.zeros(len(table))
    cols = ["x"] if dim == 1 else ["x", "y"]
    pos = table[:, [header.index(c) for c in cols]]  # (rows, d)
    u = table[:, header.index("u")]
    ids = np.unique(inst)
    xs = [_sorted(pos[inst == i])[0] for i in ids]
    if any(v.shape != xs[0].shape or not np.array_equal(v, xs[0]) for v in xs):
        raise InputError(f"{path}: instances have different sensor positions",
                         "give every instance the same sensors")  # fmt: skip
    values = np.stack([u[inst == i][_sorted(pos[inst == i])[1]] for i in ids])
    return (xs[0][:, 0] if dim == 1 else xs[0]), values  # (m,) or (m, 2); (N, m)


def _sorted(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (m, d) in lexicographic order (x, then y) and that order."""
    order = np.lexsort(pos.T[::-1])
    return pos[order], order


def _read_npz(path: Path, dim: int) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path) as npz:
        if "x" not in npz or "u" not in npz:
            raise InputError(f"{path}: the NPZ lacks x or u", "save x (m×d) and u (N×m)")
        x, u = np.asarray(npz["x"], np.float64), np.atleast_2d(np.asarray(npz["u"], np.float64))
    x = x[:, None] if x.ndim == 1 else x
    if dim == 2 and x.shape[1] < 2:
        raise InputError(f"{path}: a 2-D file without y (x is {x.shape})", "save x as m×2")
    if x.shape[1] != dim:
        raise InputError(f"{path}: x is {x.shape}, a {dim}-D problem needs m×{dim}",
                         f"use --dim {x.shape[1]} or m×{dim} sensor positions")  # fmt: skip
    if u.shape[1] != len(x):
        raise InputError(f"{path}: u is {u.shape} but x has {len(x)} sensors", "save u as N×m")
    for name, arr, axis in (("x", x, 1), ("u", u, 1)):
        bad = ~np.isfinite(arr).all(axis)
        if bad.any():
            raise InputError(
                f"{path}: {int(bad.sum())} row(s) of {name} hold NaN or inf (rows {_rows(bad)})",
                "remove or repair those rows",
            )
    x, order = _sorted(x)
    return (x[:, 0] if dim == 1 else x), u[:, order]


def read_sensors(path: Path, dim: int = 1) -> np.ndarray:
    """Sensor positions (m,) from a CSV with a header ``x`` (``x,y`` in 2-D), one row per
    sensor, checked like measurements (NaN/inf, out of domain, duplicates, too few)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--sensors {path}: no such file", SENSOR_CHOICES)
    if path.suffix.lower() != ".csv":
        raise InputError(
            f"--sensors {path}: not a .csv file", "write the positions as CSV, header x"
        )
    with path.open(newline="") as handle:
        reader = csv.reader(handle)
        header = [h.strip().lower() for h in next(reader, [])]
        body = [row for row in reader if any(cell.strip() for cell in row)]
    if "x" not in header:
        raise InputError(f"{path}: the CSV header {header} lacks x", "write a header line x")
    if dim == 2 and "y" not in header:
        raise InputError(f"{path}: a 2-D sensor file without a y column", "add y (or use --dim 1)")
    col = header.index("x")
    try:
        x = np.array([float(row[col]) for row in body], np.float64)
    except (ValueError, IndexError):
        raise InputError(
            f"{path}: a row has no number in column x", "use plain decimal numbers"
        ) from None
    bad = ~np.isfinite(x)
    if bad.any():
        raise InputError(
            f"{path}: {int(bad.sum())} row(s) hold NaN or inf (lines {_rows(bad, offset=2)})",
            "remove or repair those rows",
        )
    check_sensors(x, str(path))
    return np.sort(x)


def read(path: Path, dim: int = 1) -> Measurements:
    """Sensor positions and values only (never f) from a CSV or NPZ file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path} does not exist", "give a CSV (x,u[,instance]) or NPZ (x, u)")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".npz"):
        raise InputError(f"{path}: unknown format {suffix!r}", "use .csv or .npz")
    x, u = (_read_csv if suffix == ".csv" else _read_npz)(path, dim)
    check_sensors(x, str(path))  # (m,) or (m, 2)
    return Measurements(np.ascontiguousarray(x), np.ascontiguousarray(u), str(path))


def read_labels(path: Path, n: int, key: str = "f") -> tuple[np.ndarray, np.ndarray]:
    """(grid (g,), labels (n, g)) of the first ``n`` instances of a labelled NPZ: ``key`` is
    ``f`` for the linear PDEs, ``g`` (the log-coefficient) for darcy."""
    path = Path(path)
    fix = f"give an NPZ with grid and {key} (e.g. generate's test.npz)"
    if path.suffix.lower() != ".npz":
        raise InputError(f"{path}: supervised training needs {key} labels", fix)
    with np.load(path) as npz:
        if key not in npz or "grid" not in npz:
            raise InputError(f"{path}: no {key} labels (keys {sorted(npz.files)})", fix)
        grid, f = np.asarray(npz["grid"], np.float64), np.asarray(npz[key], np.float64)
    if n > len(f):
        raise InputError(f"--labels {n} but {path} holds {len(f)} labelled instances",
                         f"use --labels ≤ {len(f)}")  # fmt: skip
    return grid, f[:n]


def hull(x: np.ndarray) -> tuple[float, float]:
    """The part (low, high) of Ω = (0,1) the sensors determine: their hull, reaching a
    boundary point when that point is no farther from the nearest sensor than the largest
    sensor gap (u = 0 there is known, so the boundary acts as a sensor)."""
    x = np.sort(x)
    gap = float(np.diff(x).max()) if len(x) > 1 else 0.0
    low = 0.0 if x[0] <= gap + 1e-12 else float(x[0])
    high = 1.0 if 1 - x[-1] <= gap + 1e-12 else float(x[-1])
    return low, high


def sensor_misfit(u: np.ndarray, grid: np.ndarray, data: Measurements) -> np.ndarray:
    """‖u(sensors) − d‖ / ‖d‖ per instance for fields ``u`` (N, G) on a 1-D ``grid``."""
    u_at = np.stack([np.interp(data.x, grid, row) for row in u])  # (N, m)
    misfit = np.linalg.norm(u_at - data.u, axis=1)
    return misfit / np.maximum(np.linalg.norm(data.u, axis=1), 1e-300)


def identifiable_fraction(x: np.ndarray) -> float:
    """Share of Ω inside the sensors' :func:`hull`; in 2-D (x (m, 2)) the product of the
    1-D shares of the distinct x and y coordinates (a bounding-box approximation)."""
    if np.ndim(x) == 2:
        return float(np.prod([identifiable_fraction(np.unique(x[:, k])) for k in range(2)]))
    low, high = hull(x)
    return high - low
