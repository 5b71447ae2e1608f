"""DeepMatch: is an artist's style unique? Held-out recognition of their works.

Paper (Moayeri et al., ICLR 2025, Sec. 3): "if an artist's works can consistently be
recognised as their own, the artist has a unique style". DeepMatch is a classifier over
image embeddings trained on a reference corpus of artists A; an artist a in A is
recognised when held-out works of a are classified as a. Symbols:

    x_i -> ``X[i]`` (embedding of work i),  a(i) -> ``y[i]`` (its artist)
    f   -> the linear probe (multinomial logistic regression) or the cosine k-NN
    acc_a = |{i : a(i) = a, f(x_i) = a}| / |{i : a(i) = a}|, measured out of fold
    unique(a) <=> acc_a >= tau  (``threshold``)

Choices where the paper is silent: stratified k-fold cross-validation (every work is
held out exactly once; the embedding space is fitted on the training folds only);
a linear probe on standardised features (C = 1) decides by default, the similarity-
weighted cosine k-NN (k = 10) is reported beside it; Wilson score intervals for acc_a;
tau = 0.8. Artists with fewer works than folds are excluded and listed. The paper frames
attribution as classification over *sets* of images: ``set_accuracy`` is the share of
random sets of ``set_size`` held-out works of a whose summed log-probabilities pick a.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.style_check.space import EmbeddingSpace
from iclr25.errors import InputError


@dataclass(frozen=True)
class DeepMatchConfig:
    folds: int = 5
    threshold: float = 0.8  # tau: unique when held-out accuracy >= tau
    classifier: str = "linear"  # which classifier decides `unique`: "linear" or "knn"
    knn_k: int = 10  # neighbours of the cosine k-NN
    C: float = 1.0  # inverse L2 strength of the linear probe (features are standardised)
    set_size: int = 5  # works per set for set-level accuracy
    n_sets: int = 200  # random sets per artist
    confidence: float = 0.95  # level of the Wilson intervals


def eligible_names(artists: np.ndarray, folds: int) -> list[str]:
    """The artists with at least ``folds`` works, sorted."""
    counts = Counter(np.asarray(artists).tolist())
    return sorted(a for a, n in counts.items() if n >= folds)


def eligible(artists: np.ndarray, folds: int) -> tuple[np.ndarray, list[dict]]:
    """Mask of works whose artist has at least ``folds`` works; the excluded artists."""
    counts = Counter(artists.tolist())
    excluded = [
        {"name": a, "n_works": n, "reason": f"fewer works than the {folds} folds need"}
        for a, n in sorted(counts.items())
        if n < folds
    ]
    keep = np.array([counts[a] >= folds for a in artists.tolist()], dtype=bool)
    if len(set(artists[keep].tolist())) < 2:
        raise InputError(
            f"fewer than 2 artists have at least {folds} works (DeepMatch tells artists apart)",
            "add works or artists, or lower --folds (each artist needs one work per fold); "
            "for one artist, 'check' answers as a verification against a background corpus",
        )
    return keep, excluded


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (NaN for n = 0)."""
    from scipy.stats import norm

    if n == 0:
        return float("nan"), float("nan")
    z = float(norm.ppf(0.5 + confidence / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return float(low), float(high)


def fit_linear_probe(Z: np.ndarray, y: np.ndarray, C: float, seed: int):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=C, max_iter=5000, random_state=seed).fit(Z, y)


def knn_proba(
    train_unit: np.ndarray,
    train_y: np.ndarray,
    test_unit: np.ndarray,
    n_classes: int,
    k: int,
    device: str = "cpu",
) -> np.ndarray:
    """(n_test, n_classes) similarity-weighted vote shares of the k nearest works."""
    from iclr25.gpu.kernels.topk_cosine import topk_cosine

    sims, idx = topk_cosine(test_unit, train_unit, k, device=device)  # (t, k) each
    weights = np.maximum(sims, 0.0) + 1e-6
    votes = np.zeros((len(test_unit), n_classes))
    np.add.at(
        votes,
        (np.repeat(np.arange(len(test_unit)), idx.shape[1]), train_y[idx].ravel()),
        weights.ravel(),
    )
    return votes / votes.sum(axis=1, keepdims=True)


def cross_validate(
    X: np.ndarray,
    y: np.ndarray,
    groups: list[str] | None,
    config: DeepMatchConfig,
    seed: int,
    device: str = "cpu",
    on_progress: Callable | None = None,
) -> dict:
    """Out-of-fold class probabilities of both classifiers; ``y`` are class indices."""
    from sklearn.model_selection import StratifiedKFold

    n_classes = int(y.max()) + 1
    linear = np.zeros((len(y), n_classes))
    knn = np.zeros((len(y), n_classes))
    splitter = StratifiedKFold(n_splits=config.folds, shuffle=True, random_state=seed)
    for train, test in splitter.split(X, y):
        space = EmbeddingSpace.fit(X[train], groups)
        probe = fit_linear_probe(space.transform(X[train]), y[train], config.C, seed)
        linear[np.ix_(test, probe.classes_)] = probe.predict_proba(space.transform(X[test]))
        knn[test] = knn_proba(
            space.unit(X[train]), y[train], space.unit(X[test]), n_classes, config.knn_k, device
        )
        if on_progress is not None:
            on_progress(1)
    return {"linear": linear, "knn": knn}


def set_accuracy(log_proba: np.ndarray, label: int, set_size: int, n_sets: int, rng) -> float:
    """Share of random ``set_size``-subsets whose summed log-probabilities pick ``label``."""
    n = len(log_proba)
    size = min(set_size, n)
    hits = 0
    for _ in range(n_sets):
        rows = rng.choice(n, size=size, replace=False)
        hits += int(np.argmax(log_proba[rows].sum(axis=0)) == label)
    return hits / n_sets


def _artist_row(name, a, y, pred, proba, other, names, config, rng) -> dict:
    mine = y == a
    n = int(mine.sum())
    correct = int((pred[mine] == a).sum())
    low, high = wilson_interval(correct, n, config.confidence)
    claimed = int((pred == a).sum())
    wrong = Counter(pred[mine][pred[mine] != a].tolist()).most_common(1)
    acc = correct / n
    return {
        "name": name,
        "n_works": n,
        "heldout_accuracy": acc,
        "ci_low": low,
        "ci_high": high,
        "precision": correct / claimed if claimed else float("nan"),
        "other_classifier_accuracy": float((other[mine] == a).mean()),
        "set_accuracy": set_accuracy(
            np.log(proba[mine] + 1e-12), a, config.set_size, config.n_sets, rng
        ),
        "unique": bool(acc >= config.threshold),
        "confused_with": names[wrong[0][0]] if wrong else None,
        "confused_share": wrong[0][1] / n if wrong else 0.0,
    }


def evaluate_uniqueness(
    X: np.ndarray,
    artists: np.ndarray,
    groups: list[str] | None,
    config: DeepMatchConfig,
    seed: int = 0,
    device: str = "cpu",
    on_progress: Callable | None = None,
) -> dict:
    """Per-artist held-out accuracy with intervals, and the corpus summary."""
    if config.classifier not in ("linear", "knn"):
        raise InputError(f"unknown classifier {config.classifier!r}", "use linear or knn")
    keep, excluded = eligible(np.asarray(artists), config.folds)
    names, y = np.unique(np.asarray(artists)[keep], return_inverse=True)
    probas = cross_validate(X[keep], y, groups, config, seed, device, on_progress)
    deciding = probas[config.classifier]
    other = probas["knn" if config.classifier == "linear" else "linear"]
    pred, other_pred = deciding.argmax(axis=1), other.argmax(axis=1)
    rng = np.random.default_rng(seed)
    rows = [
        _artist_row(str(name), a, y, pred, deciding, other_pred, names, config, rng)
        for a, name in enumerate(names)
    ]
    top5 = np.argsort(-deciding, axis=1)[:, :5]
    return {
        "artists": rows,
        "mean_heldout_accuracy": float(np.mean([r["heldout_accuracy"] for r in rows])),
        "overall_accuracy": float((pred == y).mean()),
        "top5_accuracy": float((top5 == y[:, None]).any(axis=1).mean()),
        "linear_accuracy": float((probas["linear"].argmax(1) == y).mean()),
        "knn_accuracy": float((probas["knn"].argmax(1) == y).mean()),
        "mean_set_accuracy": float(np.mean([r["set_accuracy"] for r in rows])),
        "n_artists": len(rows),
        "n_unique": int(sum(r["unique"] for r in rows)),
        "unique_share": float(np.mean([r["unique"] for r in rows])),
        "excluded": excluded,
        "n_works": int(keep.sum()),
    }
