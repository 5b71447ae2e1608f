"""Plane geometry of point2d specs: points inside polygons, segments crossing their edges.

Imports nothing from the rest of :mod:`iclr25.core.exicl`, so the spec, demonstration and
sampling modules can use it without an import cycle.
"""

from __future__ import annotations

import numpy as np


def inside_any(points: np.ndarray, polygons) -> np.ndarray:
    """(P,) bool: which points lie strictly inside some polygon (even-odd ray casting)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    out = np.zeros(len(pts), dtype=bool)
    x, y = pts[:, 0], pts[:, 1]
    for poly in polygons:
        v = np.asarray(poly, dtype=np.float64)
        inside = np.zeros(len(pts), dtype=bool)
        for (x1, y1), (x2, y2) in zip(v, np.roll(v, -1, axis=0), strict=True):
            crosses = (y1 > y) != (y2 > y)
            with np.errstate(divide="ignore", invalid="ignore"):
                xc = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            inside ^= crosses & (x < xc)
        out |= inside
    return out


def _segments_cross(a, b, c, d) -> np.ndarray:
    """(P,) bool: segment a[p]b[p] properly intersects segment cd (c, d fixed points)."""

    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (
            r[..., 0] - p[..., 0]
        )

    o1, o2 = orient(a, b, c), orient(a, b, d)
    o3, o4 = orient(c, d, a), orient(c, d, b)
    return (o1 * o2 < 0) & (o3 * o4 < 0)


def illegal_segments(a: np.ndarray, b: np.ndarray, polygons) -> np.ndarray:
    """(P,) bool: segments a[p]→b[p] that cross a polygon edge or pass through a polygon."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 2)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 2)
    bad = inside_any((a + b) / 2.0, polygons)
    for poly in polygons:
        v = np.asarray(poly, dtype=np.float64)
        for c, d in zip(v, np.roll(v, -1, axis=0), strict=True):
            bad |= _segments_cross(a, b, c, d)
    return bad
