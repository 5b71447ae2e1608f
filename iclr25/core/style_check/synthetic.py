"""Procedural synthetic "artists": distinct, reproducible styles to test and demo with.

An artist is a :class:`ArtistStyle` — palette (base hue, hue spread, saturation,
brightness, background), stroke shape, stroke direction and its spread, stroke size and
count, opacity, background grain and composition (where strokes gather). ``--seed``
fixes the artists: artist ``i`` of seed ``s`` is drawn from ``SeedSequence([s, i])``,
with base hues spread by the golden angle and shapes cycled so that the artists of one
seed differ. A work is drawn from ``SeedSequence([s, works_seed, i, j])``: a new
``works_seed`` gives new works by the same artists — the stand-in for images "generated
in the style of" them — and another ``seed`` gives unseen artists.

Difficulty. ``easy`` artists all differ in palette and stroke shape: every method
separates them, which tests the machinery but not the judgement. ``hard`` artists come
in pairs (0, 1), (2, 3), ...: the second of a pair (the *follower*) takes the first's
palette (base hue, hue spread, saturation, brightness, background) and stroke shape,
and the rest of its style (stroke direction and spread, length, width, count, opacity,
grain) is pulled toward the first's by a *closeness* c: value = c * leader + (1 - c) *
own (directions along the shorter arc); the composition is the leader's when c >= 0.5.
Pair k has c = ``CLOSENESS_CYCLE[k mod 4]`` = 1.0 (the same generator under two names —
no method can tell them apart, both must come out *not unique*), 0.9, 0.8, 0.6, then
again. c depends on the pair only, so ``--first-artist`` and ``--works-seed`` draw the
same artists whatever the number of artists.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

SHAPES = ("lines", "ellipses", "rectangles", "dots", "arcs", "triangles")
COMPOSITIONS = ("all-over", "centred", "top", "bottom", "left", "right", "diagonal")
HUE_NAMES = (
    (15, "red"),
    (45, "orange"),
    (70, "yellow"),
    (150, "green"),
    (195, "teal"),
    (250, "blue"),
    (290, "violet"),
    (335, "magenta"),
    (360, "red"),
)
GOLDEN_ANGLE_DEG = 137.50776
DIFFICULTIES = ("easy", "hard")
CLOSENESS_CYCLE = (1.0, 0.9, 0.8, 0.6)  # closeness of the follower of pair k (k mod 4)


@dataclass(frozen=True)
class ArtistStyle:
    name: str
    base_hue_deg: float
    hue_spread_deg: float
    saturation: float  # HSV saturation of stroke colours, 0..1
    brightness: float  # HSV value of stroke colours, 0..1
    background: tuple[int, int, int]
    shape: str
    angle_deg: float  # mean stroke direction, 0 = horizontal
    angle_spread_deg: float
    stroke_length: float  # fraction of the canvas side
    stroke_width: float  # fraction of the canvas side
    n_strokes: int
    opacity: float  # 0..1
    grain: float  # background noise amplitude, 0..255 scale
    composition: str
    follows: str | None = None  # hard difficulty: the leader this artist imitates
    closeness: float | None = None  # ... and how closely (1 = the same generator)


def hue_name(hue_deg: float) -> str:
    return next(name for limit, name in HUE_NAMES if hue_deg % 360 < limit)


def make_artist(seed: int, index: int) -> ArtistStyle:
    """Artist ``index`` of the set fixed by ``seed``."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    offset = float(np.random.default_rng(np.random.SeedSequence([seed])).uniform(0, 360))
    hue = (offset + index * GOLDEN_ANGLE_DEG) % 360
    shape_order = np.random.default_rng(np.random.SeedSequence([seed, 10**6])).permutation(6)
    shape = SHAPES[int(shape_order[index % len(SHAPES)])]
    dark_background = bool(rng.random() < 0.4)
    bg_hue = (hue + rng.uniform(120, 240)) % 360 / 360
    bg_value = rng.uniform(0.08, 0.3) if dark_background else rng.uniform(0.75, 0.97)
    bg = colorsys.hsv_to_rgb(bg_hue, rng.uniform(0.05, 0.35), bg_value)
    return ArtistStyle(
        name=f"{index:02d}-{hue_name(hue)}-{shape}",
        base_hue_deg=round(hue, 3),
        hue_spread_deg=float(rng.uniform(5, 40)),
        saturation=float(rng.uniform(0.35, 1.0)),
        brightness=float(rng.uniform(0.45, 1.0)),
        background=tuple(int(round(255 * c)) for c in bg),
        shape=shape,
        angle_deg=float(rng.uniform(0, 180)),
        angle_spread_deg=float(rng.choice([8.0, 20.0, 90.0])),
        stroke_length=float(rng.uniform(0.06, 0.35)),
        stroke_width=float(rng.uniform(0.008, 0.05)),
        n_strokes=int(rng.integers(40, 260)),
        opacity=float(rng.uniform(0.45, 1.0)),
        grain=float(rng.choice([0.0, 6.0, 18.0])),
        composition=str(rng.choice(COMPOSITIONS)),
    )


def _blend(own: float, leader: float, closeness: float) -> float:
    return closeness * leader + (1 - closeness) * own


def follower(own: ArtistStyle, leader: ArtistStyle, closeness: float) -> ArtistStyle:
    """``own`` pulled toward ``leader``: same palette and shape, the rest blended."""
    turn = (leader.angle_deg - own.angle_deg + 90.0) % 180.0 - 90.0  # shorter arc, degrees
    return replace(
        own,
        name=f"{own.name.split('-')[0]}-{hue_name(leader.base_hue_deg)}-{leader.shape}",
        **{f: getattr(leader, f) for f in ("base_hue_deg", "hue_spread_deg", "saturation")},
        **{f: getattr(leader, f) for f in ("brightness", "background", "shape")},
        angle_deg=(own.angle_deg + closeness * turn) % 180.0,
        angle_spread_deg=_blend(own.angle_spread_deg, leader.angle_spread_deg, closeness),
        stroke_length=_blend(own.stroke_length, leader.stroke_length, closeness),
        stroke_width=_blend(own.stroke_width, leader.stroke_width, closeness),
        n_strokes=int(round(_blend(own.n_strokes, leader.n_strokes, closeness))),
        opacity=_blend(own.opacity, leader.opacity, closeness),
        grain=_blend(own.grain, leader.grain, closeness),
        composition=leader.composition if closeness >= 0.5 else own.composition,
        follows=leader.name,
        closeness=closeness,
    )


def make_styled_artist(seed: int, index: int, difficulty: str = "easy") -> ArtistStyle:
    """Artist ``index`` of ``seed`` at ``difficulty`` (see the module docstring)."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; use one of {DIFFICULTIES}")
    own = make_artist(seed, index)
    if difficulty == "easy" or index % 2 == 0:
        return own
    closeness = CLOSENESS_CYCLE[(index // 2) % len(CLOSENESS_CYCLE)]
    return follower(own, make_artist(seed, index - 1), closeness)


def _positions(style: ArtistStyle, rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 2) stroke centres in [0, 1]^2, gathered according to the composition."""
    u = rng.random((n, 2))  # (n, 2) as (x, y)
    comp = style.composition
    if comp == "centred":
        u = 0.5 + rng.normal(0, 0.15, (n, 2))
    elif comp in ("top", "bottom"):
        u[:, 1] = rng.beta(1.3, 4.0, n) if comp == "top" else 1 - rng.beta(1.3, 4.0, n)
    elif comp in ("left", "right"):
        u[:, 0] = rng.beta(1.3, 4.0, n) if comp == "left" else 1 - rng.beta(1.3, 4.0, n)
    elif comp == "diagonal":
        t = rng.random(n)
        u = np.stack([t, t], axis=1) + rng.normal(0, 0.1, (n, 2))
    return np.clip(u, 0.0, 1.0)


def _colours(style: ArtistStyle, rng: np.random.Generator, n: int) -> list[tuple]:
    hues = (style.base_hue_deg + rng.normal(0, style.hue_spread_deg, n)) % 360 / 360
    sats = np.clip(style.saturation + rng.normal(0, 0.08, n), 0, 1)
    vals = np.clip(style.brightness + rng.normal(0, 0.1, n), 0, 1)
    alpha = int(round(255 * style.opacity))
    return [
        (*(int(round(255 * c)) for c in colorsys.hsv_to_rgb(h, s, v)), alpha)
        for h, s, v in zip(hues, sats, vals, strict=True)
    ]


def _background(style: ArtistStyle, rng: np.random.Generator, size: int) -> np.ndarray:
    """(size, size, 3) uint8 background: artist colour, a soft gradient, grain."""
    base = np.asarray(style.background, dtype=np.float64) + rng.normal(0, 6, 3)
    ramp = np.linspace(-1, 1, size)
    angle = rng.uniform(0, 2 * math.pi)
    gradient = np.cos(angle) * ramp[None, :] + np.sin(angle) * ramp[:, None]  # (H, W)
    img = base[None, None, :] + 12.0 * gradient[:, :, None]
    if style.grain > 0:
        img = img + rng.normal(0, style.grain, (size, size, 1))
    return np.clip(img, 0, 255).astype(np.uint8)


def _draw_stroke(draw, shape: str, cx, cy, length, width, angle_rad, colour) -> None:
    dx, dy = 0.5 * length * math.cos(angle_rad), -0.5 * length * math.sin(angle_rad)
    w = max(1, int(round(width)))
    if shape == "lines":
        draw.line([(cx - dx, cy - dy), (cx + dx, cy + dy)], fill=colour, width=w)
    elif shape == "dots":
        r = max(1.0, 0.6 * width)
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=colour)
    elif shape == "arcs":
        r = 0.5 * length
        start = math.degrees(-angle_rad)
        draw.arc([cx - r, cy - r, cx + r, cy + r], start, start + 120, fill=colour, width=w)
    else:  # filled polygons oriented along the stroke direction
        nx, ny = -dy * width / max(length, 1e-6) * 2, dx * width / max(length, 1e-6) * 2
        if shape == "triangles":
            points = [
                (cx - dx - nx, cy - dy - ny),
                (cx - dx + nx, cy - dy + ny),
                (cx + dx, cy + dy),
            ]
            draw.polygon(points, fill=colour)
        elif shape == "rectangles":
            points = [
                (cx - dx - nx, cy - dy - ny),
                (cx - dx + nx, cy - dy + ny),
                (cx + dx + nx, cy + dy + ny),
                (cx + dx - nx, cy + dy - ny),
            ]
            draw.polygon(points, fill=colour)
        else:  # ellipses: axis-aligned bounding box stretched along the direction
            rx = max(1.0, abs(dx) + width)
            ry = max(1.0, abs(dy) + width)
            draw.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], fill=colour)


def render_work(style: ArtistStyle, rng: np.random.Generator, size: int = 128):
    """One work by ``style`` as an RGB ``PIL.Image`` of ``size`` x ``size`` pixels."""
    from PIL import Image, ImageDraw

    image = Image.fromarray(_background(style, rng, size), "RGB")
    draw = ImageDraw.Draw(image, "RGBA")
    n = max(5, int(round(style.n_strokes * rng.uniform(0.8, 1.2))))
    centres = _positions(style, rng, n) * (size - 1)  # (n, 2) pixels
    spread = math.radians(style.angle_spread_deg)
    angles = math.radians(style.angle_deg) + rng.normal(0, spread, n)
    lengths = size * style.stroke_length * rng.lognormal(0, 0.25, n)
    widths = size * style.stroke_width * rng.lognormal(0, 0.2, n)
    for (cx, cy), angle, length, width, colour in zip(
        centres, angles, lengths, widths, _colours(style, rng, n), strict=True
    ):
        _draw_stroke(draw, style.shape, cx, cy, length, width, angle, colour)
    return image


def work_rng(seed: int, works_seed: int, artist_index: int, work_index: int):
    return np.random.default_rng(
        np.random.SeedSequence([seed, works_seed, artist_index, work_index])
    )


@dataclass(frozen=True)
class SyntheticConfig:
    n_artists: int = 20
    per_artist: int = 30
    seed: int = 0  # fixes the artists
    works_seed: int | None = None  # None: the same as seed
    size: int = 128  # pixels per side
    image_format: str = "png"  # png, jpg or webp
    first_artist: int = 0  # index of the first artist (to draw artists a..b of a seed)
    difficulty: str = "easy"  # "easy": all distinct; "hard": pairs sharing palette and shape


def write_corpus(folder: Path, config: SyntheticConfig, on_progress=None) -> list[dict]:
    """Write ``folder/<artist>/work-NNN.<ext>``; return the artists' parameters."""
    works_seed = config.seed if config.works_seed is None else config.works_seed
    ext = {"png": "png", "jpg": "jpg", "jpeg": "jpg", "webp": "webp"}[config.image_format]
    artists = []
    for i in range(config.first_artist, config.first_artist + config.n_artists):
        style = make_styled_artist(config.seed, i, config.difficulty)
        artist_dir = Path(folder) / style.name
        artist_dir.mkdir(parents=True, exist_ok=True)
        for j in range(config.per_artist):
            image = render_work(style, work_rng(config.seed, works_seed, i, j), config.size)
            options = {"quality": 95} if ext in ("jpg", "webp") else {}
            image.save(artist_dir / f"work-{j:03d}.{ext}", **options)
            if on_progress is not None:
                on_progress(1)
        artists.append(asdict(style))
    return artists
