"""Per-block probe: where does a masked-image model keep its best off-the-shelf features?

The paper's motivation (Sec. 2, per-block k-NN figure): with a light decoder the last
encoder blocks do part of the reconstruction, so k-NN accuracy peaks at an intermediate
block. Here, for one model and data set:

1. every block's CLS (or mean patch) token in one pass (:func:`encoder.extract_blocks`);
2. ``peak_block`` = arg-max k-NN accuracy on a stratified 20 % validation split of train
   (bank = the other 80 %), so the test set does not pick the block;
3. test k-NN accuracy per block with the whole train split as bank;
4. ``peak_minus_last``: paired bootstrap (1000 resamples of the test set) of
   acc(peak) − acc(last);
5. verdict: ``vacuous`` if the best test block is < chance + 0.1; ``holds`` if peak ≠ last
   and ci_low > 0; ``fails`` if peak = last or ci_high < 0; else ``inconclusive``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.mim_refine.data import stratified_split
from iclr25.core.mim_refine.knn import KnnConfig, knn_predict

BOOTSTRAP = 1000
VACUOUS_MARGIN = 0.1  # best block must beat chance by this much for a meaningful verdict


@dataclass(frozen=True)
class ProfileConfig:
    pooling: str = "cls"
    k: int = 10
    tau: float = 0.07
    probe: bool = False
    seed: int = 0
    device: str = "cpu"  # k-NN search: "cuda" uses the CuPy topk_cosine kernel


def logistic_probe(train_x, train_y, test_x, test_y, seed: int = 0) -> float:
    """Accuracy of a multinomial logistic regression on standardised features."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train_x)
    clf = LogisticRegression(max_iter=500, C=1.0, random_state=seed)
    clf.fit(scaler.transform(train_x), train_y)
    return float(clf.score(scaler.transform(test_x), test_y))


def bootstrap_diff(correct_a, correct_b, seed: int) -> dict:
    """Mean and 95 % percentile interval of mean(a − b) over test resamples."""
    diff = correct_a.astype(np.float64) - correct_b.astype(np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(diff), size=(BOOTSTRAP, len(diff)))
    means = diff[draws].mean(1)
    low, high = np.percentile(means, [2.5, 97.5])
    return {"mean": float(diff.mean()), "ci_low": float(low), "ci_high": float(high)}


def verdict(peak: int, last: int, best_acc: float, chance: float, diff: dict) -> str:
    if best_acc < chance + VACUOUS_MARGIN:
        return "vacuous"
    if peak != last and diff["ci_low"] > 0:
        return "holds"
    if peak == last or diff["ci_high"] < 0:
        return "fails"
    return "inconclusive"


def profile_features(train_f, train_y, test_f, test_y, cfg: ProfileConfig) -> dict:
    """Steps 2–5 on precomputed features (L, N, D); blocks are reported 1-based."""
    depth = len(train_f)
    knn = KnnConfig(cfg.k, cfg.tau, device=cfg.device)
    fit_idx, val_idx = stratified_split(train_y, 0.2, cfg.seed)
    val_acc = [
        float(
            np.mean(knn_predict(f[fit_idx], train_y[fit_idx], f[val_idx], knn) == train_y[val_idx])
        )
        for f in train_f
    ]
    correct = [
        knn_predict(f, train_y, g, knn) == test_y for f, g in zip(train_f, test_f, strict=True)
    ]
    test_acc = [float(c.mean()) for c in correct]
    peak = int(np.argmax(val_acc))  # first maximum: the earliest block among ties
    last = depth - 1
    chance = float(np.bincount(test_y).max() / len(test_y))  # majority-class rate
    diff = bootstrap_diff(correct[peak], correct[last], cfg.seed)
    probe = None
    if cfg.probe:
        probe = [
            logistic_probe(f, train_y, g, test_y, cfg.seed)
            for f, g in zip(train_f, test_f, strict=True)
        ]
    return {
        "blocks": list(range(1, depth + 1)),
        "knn_accuracy": test_acc,
        "knn_val_accuracy": val_acc,
        "probe_accuracy": probe,
        "chance": chance,
        "peak_block": peak + 1,
        "last_block": depth,
        "peak_minus_last": diff,
        "verdict": verdict(peak, last, max(test_acc), chance, diff),
    }
