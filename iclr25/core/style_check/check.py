"""Checking generated images: which artist's style does each one resemble?

Paper (Moayeri et al., ICLR 2025, Sec. 5): images a text-to-image model made for an
artist's name are classified against the reference corpus; when they are recognised as
that artist, the artist's style is *at risk* of copying (about 20% of 372 artists under
simple prompting). Here, for each generated image x:

    p(a | x)     linear probe fitted on all reference works (``deepmatch``)
    top-k        the k artists of highest p(a | x)
    typicality   a split-conformal p-value that x looks like a work of its top artist a*:
                 s(x) = 1 - mean cosine of x to its m nearest works of a*, compared with
                 the same score of each work of a* against the other works of a*
                 (leave-one-out): p = (1 + #{s_j >= s(x)}) / (n_a* + 1)
    attributed   to a* when p(a* | x) >= ``min_probability`` and typicality >= ``alpha``

The typicality test is what keeps images of unseen styles from being attributed with
high confidence: a softmax always names *some* artist. (With fewer than 1/alpha works,
an artist's p-value cannot fall below alpha: the test then never rejects; ``pipeline``
lists such artists.)
Per artist a generated set G_a was made for (``<artist>/`` subfolders or ``--artist``),
the set is classified as DeepMatch classifies sets: argmax_b sum_{x in G_a} log p(b | x)
(``set_attribution``), gated by typicality — at least ``set_typical_share`` of the
images must be typical of a's works (a set of an unseen style is classified as *some*
artist, but is atypical of it). Whether that makes a's style "at risk" also needs a to
be unique (``verdict.py``). ``attribution_accuracy`` is the share of images whose top
match is the artist they were made for. A match measures visual resemblance, not legal
infringement.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.style_check.deepmatch import fit_linear_probe
from iclr25.core.style_check.space import EmbeddingSpace
from iclr25.gpu.kernels.topk_cosine import topk_cosine


@dataclass(frozen=True)
class CheckConfig:
    top_k: int = 3  # artists listed per image
    min_probability: float = 0.5  # p(a* | x) needed to attribute
    alpha: float = 0.05  # typicality p-value needed to attribute (0 disables the test)
    typicality_k: int = 5  # m, nearest works of a* in the typicality score
    set_typical_share: float = 0.5  # share of a set typical of a needed to attribute it to a
    nearest_works: int = 4  # nearest reference works listed (and shown) per image
    C: float = 1.0  # linear probe regularisation, as in DeepMatch


@dataclass
class Attributor:
    names: list[str]
    space: EmbeddingSpace
    probe: object
    ref_unit: np.ndarray  # (n, d) unit vectors of the reference works
    ref_y: np.ndarray  # (n,) artist index
    calibration: list[np.ndarray]  # per artist: sorted leave-one-out scores s_j


def _typicality_scores(
    queries: np.ndarray, works: np.ndarray, k: int, device: str, leave_one_out: bool = False
) -> np.ndarray:
    """s = 1 - mean cosine to the k nearest works (skipping the work itself if LOO)."""
    k_eff = min(k + int(leave_one_out), len(works))
    sims, _ = topk_cosine(queries, works, k_eff, device=device)  # (q, k_eff)
    if leave_one_out:
        sims = sims[:, 1:]
    if sims.shape[1] == 0:
        return np.ones(len(queries))
    return 1.0 - sims.mean(axis=1).astype(np.float64)


def fit_attributor(X, artists, groups, config: CheckConfig, seed: int = 0, device: str = "cpu"):
    names, y = np.unique(np.asarray(artists), return_inverse=True)
    space = EmbeddingSpace.fit(X, groups)
    probe = fit_linear_probe(space.transform(X), y, config.C, seed)
    unit = space.unit(X)
    calibration = []
    for a in range(len(names)):
        works = unit[y == a]
        scores = _typicality_scores(works, works, config.typicality_k, device, leave_one_out=True)
        calibration.append(np.sort(scores))
    return Attributor([str(n) for n in names], space, probe, unit, y, calibration)


def conformal_p_values(calibration_sorted: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """p = (1 + #{s_j >= s}) / (n + 1) for each score s (calibration sorted ascending)."""
    cal = np.asarray(calibration_sorted, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    at_least = len(cal) - np.searchsorted(cal, scores - 1e-12, side="left")  # #{s_j >= s}
    return (1.0 + at_least) / (len(cal) + 1.0)


def typicality_p_values(
    att: Attributor, unit: np.ndarray, artist: np.ndarray, k: int, device: str
) -> np.ndarray:
    """Conformal p-value of each query against the works of its artist."""
    p = np.empty(len(unit))
    for a in np.unique(artist):
        rows = np.flatnonzero(artist == a)
        s = _typicality_scores(unit[rows], att.ref_unit[att.ref_y == a], k, device)
        p[rows] = conformal_p_values(att.calibration[a], s)
    return p


def attribute(att: Attributor, X_gen: np.ndarray, config: CheckConfig, device: str = "cpu") -> dict:
    """Per-image probabilities, typicality, attribution and nearest reference works."""
    proba = np.zeros((len(X_gen), len(att.names)))
    proba[:, att.probe.classes_] = att.probe.predict_proba(att.space.transform(X_gen))
    unit = att.space.unit(X_gen)
    best = proba.argmax(axis=1)
    p_typ = typicality_p_values(att, unit, best, config.typicality_k, device)
    confident = (proba[np.arange(len(best)), best] >= config.min_probability) & (
        p_typ >= config.alpha
    )
    near_sims, near_idx = topk_cosine(unit, att.ref_unit, config.nearest_works, device=device)
    return {
        "proba": proba,
        "best": best,
        "typicality": p_typ,
        "attributed": np.where(confident, best, -1),
        "near_sims": near_sims,
        "near_idx": near_idx,
    }


def set_attribution(
    log_proba: np.ndarray,
    target: int,
    typical_p: np.ndarray,
    names: list[str],
    alpha: float,
    min_typical_share: float = 0.5,
) -> dict:
    """DeepMatch's classification of one generated set made for artist ``target``.

    ``log_proba`` (n, A): log p(. | x) of the set's images; the set is classified as
    argmax_b sum_i log p(b | x_i) (the images' evidence combined as independent, uniform
    prior), ``log_margin`` = sum_i log p(target | x_i) - max_{b != target} sum_i log p(b |
    x_i). ``typical_share``: share of the images whose typicality p-value against the
    target's works is >= alpha (a set of an unseen style is classified as *some* artist,
    but its images are atypical of that artist's works). Attributed: the set is
    classified as the target and at least ``min_typical_share`` of it is typical."""
    totals = log_proba.sum(axis=0)  # (A,)
    best = int(np.argmax(totals))
    others = np.delete(totals, target)
    margin = float(totals[target] - others.max()) if len(others) else float("inf")
    typical = float((typical_p >= alpha).mean()) if alpha > 0 else 1.0
    return {
        "artist": names[best],
        "matches_target": best == target,
        "log_margin": margin,
        "typical_share": typical,
        "attributed": bool(best == target and typical >= min_typical_share),
    }
