"""The default encoder: hand-designed style statistics, no weights, deterministic.

Every image is first brought to a canonical working size — resized (Lanczos, aspect
kept) to about ``work_side``^2 pixels — so that the same picture at another size or in
another file format gives nearly the same embedding; every statistic below is an average
over pixels, so the few pixels of rounding do not matter. (A copy smaller than the
working size carries less detail: it is upsampled, and its finest-scale statistics
shift.) Then, on the working image:

1. colour in CIELAB (sRGB D65 -> linear -> XYZ -> L*a*b*, L in [0, 100]):
   means and standard deviations of L, a, b; quantiles of L; chroma C = sqrt(a^2 + b^2)
   mean and spread; the Hasler-Suesstrunk colourfulness; a 12-bin hue histogram weighted
   by chroma (soft-binned, Hellinger/sqrt-transformed); hue entropy; the share of
   near-neutral pixels (C < 8); warmth (chroma-weighted cos(h - 50 deg)).
2. contrast and saturation: L range (q95 - q5); mean local contrast (std of L in a
   Gaussian window, sigma = 2 px); saturation C / sqrt(C^2 + L^2), mean and std (stable
   near black, unlike HSV saturation, so JPEG noise in shadows does not move it).
3. edges and orientation at scales sigma in {1, 2, 4} px (scale-normalised Gaussian
   derivatives of L/100): log mean gradient magnitude, edge density (share of pixels with
   magnitude > 0.04), an 8-bin magnitude-weighted orientation histogram (sqrt), the
   orientation coherence |sum m e^{2i theta}| / sum m, and the dominant doubled angle
   (coherence * cos 2theta, coherence * sin 2theta).
4. Gram statistics of a fixed filter bank: steerable second-derivative-of-Gaussian
   filters at sigma in {1, 2, 4} px and 4 orientations (12 filters, "bar" detectors for
   strokes). Per filter the log mean energy; between filters the correlation of the
   rectified responses |R_f| (the normalised Gram matrix, 66 entries), as in Gatys et
   al.'s texture statistics but with fixed instead of learned filters.
5. composition: on a 3 x 3 grid, the mean lightness per cell minus the global mean, and
   the sqrt share of gradient energy (sigma = 2) per cell.

Scalings (log, sqrt, /100) put the features on comparable ranges; the embedding space
(``space.py``) standardises them against the reference corpus and weighs the five groups
equally. Feature names are stored in the DB and feed the TagMatch attributes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

NAME = "style-stats"
VERSION = "2"  # 2: large images box-reduced before Lanczos, large JPEGs DCT-scaled
SCALES_PX = (1.0, 2.0, 4.0)
ORIENTATIONS_DEG = (0.0, 45.0, 90.0, 135.0)
HUE_BINS = 12
ORIENTATION_BINS = 8
EDGE_THRESHOLD = 0.04  # scale-normalised gradient magnitude of L/100 counted as an edge
NEUTRAL_CHROMA = 8.0  # Lab chroma below which a pixel counts as neutral (grey)
EPS = 1e-8


# -- 0. canonical working image ------------------------------------------------------
def working_rgb(image, work_side: int) -> np.ndarray:
    """(H, W, 3) float64 sRGB in [0, 1], H * W ~ work_side^2, aspect kept."""
    from PIL import Image

    w, h = image.size
    scale = work_side / math.sqrt(w * h)
    size = (max(8, int(round(w * scale))), max(8, int(round(h * scale))))
    if size != (w, h):
        # a large image is first box-reduced by an integer factor, leaving >= 3x for Lanczos
        # (Pillow: "indistinguishable" from plain Lanczos, and far cheaper for photos)
        image = image.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    return np.asarray(image, dtype=np.float64) / 255.0


def srgb_to_linear(rgb: np.ndarray) -> np.ndarray:
    """The sRGB transfer function inverted (IEC 61966-2-1), elementwise."""
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


#: srgb_to_linear of the 256 values k / 255 an 8-bit image holds (the working image's)
LINEAR_LUT = srgb_to_linear(np.arange(256) / 255.0)


def srgb_to_lab(rgb: np.ndarray, table: bool = True) -> np.ndarray:
    """(H, W, 3) sRGB in [0, 1] -> (H, W, 3) CIELAB (D65)."""
    codes = np.rint(rgb * 255.0)
    if table and np.array_equal(codes, rgb * 255.0):  # 8-bit values: same numbers, cheaper
        linear = LINEAR_LUT[codes.astype(np.intp)]
    else:
        linear = srgb_to_linear(rgb)
    m = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ]
    )
    xyz = linear @ m.T / np.array([0.95047, 1.0, 1.08883])  # (H, W, 3), white-normalised
    delta = 6 / 29
    f = np.where(xyz > delta**3, np.cbrt(xyz), xyz / (3 * delta**2) + 4 / 29)
    L = 116 * f[..., 1] - 16
    a = 500 * (f[..., 0] - f[..., 1])
    b = 200 * (f[..., 1] - f[..., 2])
    return np.stack([L, a, b], axis=-1)


def soft_histogram(angles: np.ndarray, weights: np.ndarray, bins: int, period: float):
    """Circular histogram with linear interpolation between bin centres, sums to 1."""
    pos = angles * (bins / period) - 0.5  # bin-centre coordinates (any number of periods)
    lo = np.floor(pos)
    upper = weights * (pos - lo)  # the share of each weight going to the next bin up
    lo = lo.astype(np.intp) % bins
    hist = np.bincount(lo, weights - upper, minlength=bins)
    hist += np.bincount((lo + 1) % bins, upper, minlength=bins)
    total = hist.sum()
    return hist / total if total > EPS else np.full(bins, 1.0 / bins)


# -- 1. colour -----------------------------------------------------------------------
def colour_features(rgb: np.ndarray, lab: np.ndarray) -> dict[str, float]:
    L, a, b = lab[..., 0], lab[..., 1], lab[..., 2]
    chroma = np.hypot(a, b)
    hue = np.arctan2(b, a)  # radians
    out = {"L_mean": L.mean() / 100, "L_std": L.std() / 100}
    out |= {"a_mean": a.mean() / 100, "a_std": a.std() / 100}
    out |= {"b_mean": b.mean() / 100, "b_std": b.std() / 100}
    for q, v in zip((5, 25, 50, 75, 95), np.percentile(L, (5, 25, 50, 75, 95)), strict=True):
        out[f"L_q{q:02d}"] = v / 100
    out |= {"chroma_mean": chroma.mean() / 100, "chroma_std": chroma.std() / 100}
    rg = rgb[..., 0] - rgb[..., 1]
    yb = 0.5 * (rgb[..., 0] + rgb[..., 1]) - rgb[..., 2]
    out["colourfulness"] = math.hypot(rg.std(), yb.std()) + 0.3 * math.hypot(rg.mean(), yb.mean())
    hist = soft_histogram(hue.ravel(), chroma.ravel(), HUE_BINS, 2 * math.pi)
    out |= {f"hue_{i:02d}": math.sqrt(v) for i, v in enumerate(hist)}
    nonzero = hist[hist > 0]
    out["hue_entropy"] = float(-(nonzero * np.log(nonzero)).sum() / math.log(HUE_BINS))
    out["neutral_share"] = float((chroma < NEUTRAL_CHROMA).mean())
    weights = chroma.sum()
    warm = (chroma * np.cos(hue - math.radians(50))).sum() / weights if weights > EPS else 0.0
    out["warmth"] = float(warm)
    return out


# -- 2. contrast and saturation --------------------------------------------------------
def contrast_features(lab: np.ndarray, smooth_s2: np.ndarray) -> dict[str, float]:
    """``smooth_s2``: L/100 smoothed with the sigma = 2 Gaussian (see ``derivatives``)."""
    from scipy.ndimage import gaussian_filter

    L = lab[..., 0] / 100
    q05, q95 = np.percentile(L, (5, 95))
    local_var = gaussian_filter(L * L, 2.0, mode="reflect") - smooth_s2**2
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    saturation = chroma / np.sqrt(chroma**2 + lab[..., 0] ** 2 + EPS)  # CIE saturation
    return {
        "L_range": q95 - q05,
        "local_contrast": float(np.sqrt(np.maximum(local_var, 0)).mean()),
        "saturation_mean": saturation.mean(),
        "saturation_std": saturation.std(),
    }


# -- 3. edges and orientation ------------------------------------------------------------
@dataclass(frozen=True)
class Derivatives:
    """Scale-normalised Gaussian derivatives of L at one sigma, (H, W) each: sigma^n times
    the n-th derivative; x along columns (axis 1), y along rows (axis 0)."""

    smooth: np.ndarray
    gx: np.ndarray
    gy: np.ndarray
    gxx: np.ndarray
    gyy: np.ndarray
    gxy: np.ndarray


def derivatives(L: np.ndarray, sigma: float) -> Derivatives:
    """All derivatives up to order 2 from 3 + 6 separable passes instead of 2 per output.

    ``gaussian_filter(L, sigma, order=(oy, ox))`` filters axis 0 with order oy, then
    axis 1 with order ox; the axis-0 passes are shared here, so every output is the
    same array that call gives (tested)."""
    from scipy.ndimage import gaussian_filter1d

    def along_x(rows: np.ndarray, order: int) -> np.ndarray:
        return gaussian_filter1d(rows, sigma, axis=1, order=order, mode="reflect")

    rows = [gaussian_filter1d(L, sigma, axis=0, order=o, mode="reflect") for o in (0, 1, 2)]
    return Derivatives(
        smooth=along_x(rows[0], 0),
        gx=sigma * along_x(rows[0], 1),
        gy=sigma * along_x(rows[1], 0),
        gxx=sigma**2 * along_x(rows[0], 2),
        gyy=sigma**2 * along_x(rows[2], 0),
        gxy=sigma**2 * along_x(rows[1], 1),
    )


def edge_features(scales: dict[float, Derivatives]) -> dict[str, float]:
    out: dict[str, float] = {}
    for sigma, d in scales.items():
        gx, gy = d.gx, d.gy
        mag = np.sqrt(gx * gx + gy * gy)
        theta = np.arctan2(gy, gx)  # gradient direction, across the edge
        s = f"s{int(sigma)}"
        out[f"grad_log_mean_{s}"] = math.log(mag.mean() + 1e-4)
        out[f"edge_density_{s}"] = float((mag > EDGE_THRESHOLD).mean())
        hist = soft_histogram(theta.ravel(), mag.ravel(), ORIENTATION_BINS, math.pi)
        out |= {f"orient_{s}_{i}": math.sqrt(v) for i, v in enumerate(hist)}
        # sum m e^{2i theta} without complex exponentials: m cos 2theta = (gx^2 - gy^2) / m,
        # m sin 2theta = 2 gx gy / m (0 where m = 0)
        inv = np.divide(1.0, mag, out=np.zeros_like(mag), where=mag > 0)
        total = max(float(mag.sum()), EPS)
        cos2 = float(((gx * gx - gy * gy) * inv).sum()) / total
        sin2 = float((2.0 * gx * gy * inv).sum()) / total
        out[f"coherence_{s}"] = math.hypot(cos2, sin2)
        out[f"orient_cos2_{s}"] = cos2
        out[f"orient_sin2_{s}"] = sin2
    return out


# -- 4. Gram statistics of a steerable filter bank --------------------------------------
def filter_bank_responses(scales: dict[float, Derivatives]) -> np.ndarray:
    """(F, H, W) second-derivative-of-Gaussian responses, F = 3 scales x 4 orientations."""
    responses = []
    for d in scales.values():
        for deg in ORIENTATIONS_DEG:
            c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
            responses.append(c * c * d.gxx + 2 * c * s * d.gxy + s * s * d.gyy)
    return np.stack(responses)


def gram_features(scales: dict[float, Derivatives]) -> dict[str, float]:
    n_filters = len(scales) * len(ORIENTATIONS_DEG)
    rect = np.abs(filter_bank_responses(scales)).reshape(n_filters, -1)  # (F, P) over P pixels
    energy = (rect**2).mean(axis=1)  # (F,)
    out = {f"energy_{f:02d}": math.log(e + 1e-8) for f, e in enumerate(energy)}
    centred = rect - rect.mean(axis=1, keepdims=True)
    gram = centred @ centred.T / rect.shape[1]  # (F, F)
    std = np.sqrt(np.maximum(np.diag(gram), EPS))
    corr = gram / np.outer(std, std)
    rows, cols = np.triu_indices(len(energy), k=1)
    out |= {f"gram_{r:02d}_{c:02d}": corr[r, c] for r, c in zip(rows, cols, strict=True)}
    return out


# -- 5. composition ----------------------------------------------------------------------
def composition_features(L: np.ndarray, d: Derivatives) -> dict[str, float]:
    """``d``: the sigma = 2 derivatives."""
    energy = d.gx**2 + d.gy**2
    h, w = L.shape
    rows = np.array_split(np.arange(h), 3)
    cols = np.array_split(np.arange(w), 3)
    total = max(energy.sum(), EPS)
    out = {}
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            cell = np.ix_(r, c)
            out[f"cell_L_{i}{j}"] = L[cell].mean() - L.mean()
            out[f"cell_edge_{i}{j}"] = math.sqrt(energy[cell].sum() / total)
    return out


def style_statistics(image, work_side: int = 160) -> tuple[list[str], list[str], np.ndarray]:
    """(feature names, group of each feature, values float64) for one RGB PIL image."""
    rgb = working_rgb(image, work_side)
    lab = srgb_to_lab(rgb)
    L = lab[..., 0] / 100
    scales = {sigma: derivatives(L, sigma) for sigma in SCALES_PX}  # shared by 2-5
    groups = {
        "colour": colour_features(rgb, lab),
        "contrast": contrast_features(lab, scales[2.0].smooth),
        "edges": edge_features(scales),
        "gram": gram_features(scales),
        "composition": composition_features(L, scales[2.0]),
    }
    names, group_of, values = [], [], []
    for group, feats in groups.items():
        for name, value in feats.items():
            names.append(name)
            group_of.append(group)
            values.append(float(value))
    return names, group_of, np.asarray(values, dtype=np.float64)


class StyleStatsEncoder:
    """``encode(images) -> (n, d) float32``; ``info`` describes it for the DB."""

    spec = "stats"

    def __init__(self, work_side: int = 160) -> None:
        from PIL import Image

        self.work_side = int(work_side)
        names, groups, _ = style_statistics(Image.new("RGB", (16, 16)), self.work_side)
        self.feature_names = names
        self.feature_groups = groups
        self.name = NAME
        self.version = VERSION
        self.identity = f"{NAME}/v{VERSION}/side={self.work_side}"
        self.dim = len(names)
        self.zero_shot = False

    def encode(self, images: list) -> np.ndarray:
        out = np.empty((len(images), self.dim), dtype=np.float32)  # (n, d)
        for i, image in enumerate(images):
            out[i] = style_statistics(image, self.work_side)[2]
        return out
