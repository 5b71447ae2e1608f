"""Environment specs (``--env spec.json``): ``grid2d`` and ``point2d``.

``grid2d``::

    {"type": "grid2d", "width": 16, "height": 16,
     "walls": [[x, y], ...], "rects": [[x0, y0, x1, y1], ...],   # known walls (inclusive)
     "moves": 8, "step_cost": "euclidean"}                        # or 4; or "unit"

States are cell coordinates (x, y), 0 ≤ x < width, 0 ≤ y < height (y = 0 at the bottom);
arrays over cells are indexed ``[y, x]``. Moves: the 4 orthogonal steps, plus with
``moves: 8`` the diagonals, which cost √2 (``step_cost: euclidean``) or 1 (``unit``) and
never cut a corner: a diagonal needs both orthogonal neighbours free. Reward = −path length.

``point2d``::

    {"type": "point2d", "width": 16, "height": 16,
     "polygons": [[[x, y], [x, y], [x, y], ...], ...],  # known walls, closed polygons
     "max_step": 1.5, "lattice": 4}

Continuous states in [0, width−1] × [0, height−1]; constraints are still cell masks (the
cell of a point is its rounded coordinates); exact checks run on a 16-connected lattice of
spacing 1/lattice (:mod:`.point2d`).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iclr25.errors import InputError

ENV_TYPES = ("grid2d", "point2d")
MAX_CELLS = 8192  # 90×90: the GPU kernel keeps a grid in shared memory


@dataclass(frozen=True)
class GridSpec:
    width: int
    height: int
    walls: np.ndarray = field(repr=False, compare=False)  # (height, width) bool, True = wall
    moves: int = 8  # 4 or 8
    step_cost: str = "euclidean"  # "euclidean": diagonals cost √2; "unit": 1
    kind: str = "grid2d"

    @property
    def diagonal_cost(self) -> float:
        return math.sqrt(2.0) if self.step_cost == "euclidean" else 1.0

    @property
    def cells(self) -> int:
        return self.width * self.height

    def as_dict(self) -> dict:
        ys, xs = np.nonzero(self.walls)
        return {
            "type": self.kind,
            "width": self.width,
            "height": self.height,
            "walls": [[int(x), int(y)] for x, y in zip(xs, ys, strict=True)],
            "moves": self.moves,
            "step_cost": self.step_cost,
        }

    def digest(self) -> str:
        """A hash of what a prior depends on (size, walls, moves, costs)."""
        text = json.dumps(self.as_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class PointSpec:
    width: int
    height: int
    polygons: tuple[tuple[tuple[float, float], ...], ...]
    max_step: float = 1.5  # the longest move a demonstration may make
    lattice: int = 4  # lattice points per unit length for the exact check
    kind: str = "point2d"

    @property
    def walls(self) -> np.ndarray:
        """Cells whose centre lies inside a polygon (for plots and the prior's decoding)."""
        from iclr25.core.exicl.geometry import inside_any

        ys, xs = np.mgrid[0 : self.height, 0 : self.width]
        pts = np.stack([xs.ravel(), ys.ravel()], axis=1).astype(float)
        return inside_any(pts, self.polygons).reshape(self.height, self.width)

    @property
    def cells(self) -> int:
        return self.width * self.height

    def as_dict(self) -> dict:
        return {
            "type": self.kind,
            "width": self.width,
            "height": self.height,
            "polygons": [[list(p) for p in poly] for poly in self.polygons],
            "max_step": self.max_step,
            "lattice": self.lattice,
        }

    def digest(self) -> str:
        text = json.dumps(self.as_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


Spec = GridSpec | PointSpec


def _int(raw: dict, key: str, where: str, low: int, high: int, default=None) -> int:
    value = raw.get(key, default)
    if value is None:
        raise InputError(f"{where}: missing {key!r}", f'add "{key}": an integer')
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise InputError(f"{where}: {key} = {value!r} is not an integer", f"give an integer {key}")
    if not low <= value <= high:
        raise InputError(f"{where}: {key} = {value} is out of range", f"use {low} ≤ {key} ≤ {high}")
    return int(value)


def _grid_walls(raw: dict, width: int, height: int, where: str) -> np.ndarray:
    walls = np.zeros((height, width), dtype=bool)
    for cell in raw.get("walls", []) or []:
        if not (isinstance(cell, list | tuple) and len(cell) == 2):
            raise InputError(f"{where}: wall {cell!r} is not [x, y]", "list walls as [x, y] pairs")
        x, y = cell
        if not (float(x).is_integer() and float(y).is_integer()):
            raise InputError(f"{where}: wall {cell!r} is not on the grid", "use integer cells")
        if not (0 <= x < width and 0 <= y < height):
            raise InputError(
                f"{where}: wall {cell!r} is off the grid", f"0 ≤ x < {width}, 0 ≤ y < {height}"
            )
        walls[int(y), int(x)] = True
    for rect in raw.get("rects", []) or []:
        if not (isinstance(rect, list | tuple) and len(rect) == 4):
            raise InputError(f"{where}: rect {rect!r} is not [x0, y0, x1, y1]", "fix the rect")
        x0, y0, x1, y1 = (int(v) for v in rect)
        if not (0 <= x0 <= x1 < width and 0 <= y0 <= y1 < height):
            raise InputError(f"{where}: rect {rect!r} is off the grid", "fix the rect")
        walls[y0 : y1 + 1, x0 : x1 + 1] = True
    return walls


def grid_spec_from_dict(raw: dict, where: str = "spec") -> GridSpec:
    width = _int(raw, "width", where, 2, 1024)
    height = _int(raw, "height", where, 2, 1024)
    if width * height > MAX_CELLS:
        raise InputError(
            f"{where}: {width}×{height} = {width * height} cells is too large",
            f"use at most {MAX_CELLS} cells",
        )
    moves = _int(raw, "moves", where, 4, 8, default=8)
    if moves not in (4, 8):
        raise InputError(f"{where}: moves = {moves}", "use 4 or 8")
    step_cost = raw.get("step_cost", "euclidean")
    if step_cost not in ("euclidean", "unit"):
        raise InputError(f"{where}: step_cost = {step_cost!r}", 'use "euclidean" or "unit"')
    walls = _grid_walls(raw, width, height, where)
    if walls.all():
        raise InputError(f"{where}: every cell is a wall", "leave some cells free")
    return GridSpec(width, height, walls, moves, step_cost)


def point_spec_from_dict(raw: dict, where: str = "spec") -> PointSpec:
    width = _int(raw, "width", where, 2, 1024)
    height = _int(raw, "height", where, 2, 1024)
    if width * height > MAX_CELLS:
        raise InputError(f"{where}: {width}×{height} cells is too large", f"use ≤ {MAX_CELLS}")
    polygons = []
    for poly in raw.get("polygons", []) or []:
        try:
            pts = tuple((float(x), float(y)) for x, y in poly)
        except (TypeError, ValueError):
            raise InputError(
                f"{where}: polygon {poly!r} is not a list of [x, y]", "fix it"
            ) from None
        if len(pts) < 3 or not all(math.isfinite(v) for p in pts for v in p):
            raise InputError(f"{where}: a polygon needs ≥ 3 finite vertices", "fix it")
        polygons.append(pts)
    max_step = float(raw.get("max_step", 1.5))
    if not (0 < max_step <= 4):
        raise InputError(f"{where}: max_step = {max_step}", "use 0 < max_step ≤ 4")
    lattice = _int(raw, "lattice", where, 1, 8, default=4)
    return PointSpec(width, height, tuple(polygons), max_step, lattice)


def spec_from_dict(raw: dict, where: str = "spec") -> Spec:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: not a JSON object", 'write {"type": "grid2d", ...}')
    kind = raw.get("type")
    if kind == "grid2d":
        return grid_spec_from_dict(raw, where)
    if kind == "point2d":
        return point_spec_from_dict(raw, where)
    raise InputError(
        f"{where}: unknown env type {kind!r}", f'use "type": one of {", ".join(ENV_TYPES)}'
    )


def load_spec(path: Path) -> Spec:
    """Read and validate ``--env spec.json``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--env {path}: no such file", "give the path of a spec .json")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"--env {path}: not valid JSON ({exc})", "fix the file") from None
    return spec_from_dict(raw, f"--env {path}")


def open_grid(width: int = 16, height: int = 16, moves: int = 8) -> GridSpec:
    """A grid without known walls (the built-in layouts)."""
    return GridSpec(width, height, np.zeros((height, width), dtype=bool), moves)
