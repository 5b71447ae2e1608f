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

import numpy as np

NAME = "style-stats"
VERSION = "1"
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
        image = image.resize(size, Image.Resampling.LANCZOS)
    return np.asarray(image, dtype=np.float64) / 255.0


def srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """(H, W, 3) sRGB in [0, 1] -> (H, W, 3) CIELAB (D65)."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
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
    pos = (angles % period) / period * bins - 0.5  # bin-centre coordinates
    lo = np.floor(pos).astype(np.int64)
    frac = pos - lo
    hist = np.bincount(lo % bins, weights * (1 - frac), minlength=bins)
    hist += np.bincount((lo + 1) % bins, weights * frac, minlength=bins)
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
def contrast_features(lab: np.ndarray) -> dict[str, float]:
    from scipy.ndimage import gaussian_filter

    L = lab[..., 0] / 100
    q05, q95 = np.percentile(L, (5, 95))
    local_mean = gaussian_filter(L, 2.0, mode="reflect")
    local_var = gaussian_filter(L * L, 2.0, mode="reflect") - local_mean**2
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    saturation = chroma / np.sqrt(chroma**2 + lab[..., 0] ** 2 + EPS)  # CIE saturation
    return {
        "L_range": q95 - q05,
        "local_contrast": float(np.sqrt(np.maximum(local_var, 0)).mean()),
        "saturation_mean": saturation.mean(),
        "saturation_std": saturation.std(),
    }


# -- 3. edges and orientation ------------------------------------------------------------
def gradients(L: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Scale-normalised Gaussian derivatives (gx, gy) of L."""
    from scipy.ndimage import gaussian_filter

    gx = sigma * gaussian_filter(L, sigma, order=(0, 1), mode="reflect")
    gy = sigma * gaussian_filter(L, sigma, order=(1, 0), mode="reflect")
    return gx, gy


def edge_features(L: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {}
    for sigma in SCALES_PX:
        gx, gy = gradients(L, sigma)
        mag = np.hypot(gx, gy)
        theta = np.arctan2(gy, gx)  # gradient direction, across the edge
        s = f"s{int(sigma)}"
        out[f"grad_log_mean_{s}"] = math.log(mag.mean() + 1e-4)
        out[f"edge_density_{s}"] = float((mag > EDGE_THRESHOLD).mean())
        hist = soft_histogram(theta.ravel(), mag.ravel(), ORIENTATION_BINS, math.pi)
        out |= {f"orient_{s}_{i}": math.sqrt(v) for i, v in enumerate(hist)}
        resultant = (mag * np.exp(2j * theta)).sum() / max(mag.sum(), EPS)
        out[f"coherence_{s}"] = abs(resultant)
        out[f"orient_cos2_{s}"] = resultant.real
        out[f"orient_sin2_{s}"] = resultant.imag
    return out


# -- 4. Gram statistics of a steerable filter bank --------------------------------------
def filter_bank_responses(L: np.ndarray) -> np.ndarray:
    """(F, H, W) second-derivative-of-Gaussian responses, F = 3 scales x 4 orientations."""
    from scipy.ndimage import gaussian_filter

    responses = []
    for sigma in SCALES_PX:
        gxx = sigma**2 * gaussian_filter(L, sigma, order=(0, 2), mode="reflect")
        gyy = sigma**2 * gaussian_filter(L, sigma, order=(2, 0), mode="reflect")
        gxy = sigma**2 * gaussian_filter(L, sigma, order=(1, 1), mode="reflect")
        for deg in ORIENTATIONS_DEG:
            c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
            responses.append(c * c * gxx + 2 * c * s * gxy + s * s * gyy)
    return np.stack(responses)


def gram_features(L: np.ndarray) -> dict[str, float]:
    n_filters = len(SCALES_PX) * len(ORIENTATIONS_DEG)
    rect = np.abs(filter_bank_responses(L)).reshape(n_filters, -1)  # (F, P) over P pixels
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
def composition_features(L: np.ndarray) -> dict[str, float]:
    gx, gy = gradients(L, 2.0)
    energy = gx**2 + gy**2
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
    groups = {
        "colour": colour_features(rgb, lab),
        "contrast": contrast_features(lab),
        "edges": edge_features(L),
        "gram": gram_features(L),
        "composition": composition_features(L),
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
