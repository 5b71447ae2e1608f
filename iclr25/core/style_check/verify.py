"""Verification for a one-artist DB: "are these images in artist A's style?"

With one artist there is nothing to classify against, so DeepMatch's question becomes a
verification: can A's works be told from other artists' works, and are the generated
images accepted as A's? The other artists are a *background corpus*: synthetic artists
drawn by code shipped with the toolkit (``BACKGROUND``: 16 artists x 8 works, fixed seed;
rendered and embedded once per encoder and cached), plus any works in the DB by artists
with too few works to be evaluated themselves.

1. score: a linear probe (logistic regression, C = 1) of A against the background on
   the standardised embeddings (``space.py``), s(x) = its decision value;
2. calibration: out-of-fold scores (stratified k-fold) of A's works and of the
   background works; the threshold tau accepts at most ``false_accept`` of the held-out
   background works (tau = the (floor(f * n_bg) + 1)-th largest background score,
   accept when s > tau);
3. uniqueness relative to the background: the held-out acceptance of A's works at tau
   (with a Wilson interval) must reach the uniqueness threshold (0.8, as DeepMatch's);
4. the generated set: k of its n images accepted (the probe refitted on every work); the
   set is in A's style when k / n >= ``set_share``; the one-sided binomial p-value of k
   under the measured background acceptance rate is reported beside it.

A synthetic background is easy to tell from most real corpora, so "unique relative to
the background" is weak evidence on its own; the verdict says which background it used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.style_check.deepmatch import fit_linear_probe, wilson_interval
from iclr25.core.style_check.space import EmbeddingSpace

BACKGROUND_ARTISTS, BACKGROUND_WORKS, BACKGROUND_SEED = 16, 8, 20250424
BACKGROUND_VERSION = "1"


@dataclass(frozen=True)
class VerifyConfig:
    folds: int = 5
    false_accept: float = 0.05  # share of held-out background works tau may accept
    threshold: float = 0.8  # held-out acceptance of A's works that makes A distinguishable
    set_share: float = 0.5  # share of a set accepted that puts it in A's style
    C: float = 1.0


@dataclass
class Verifier:
    space: EmbeddingSpace
    probe: object
    tau: float
    heldout_accept: float  # A's works accepted out of fold
    ci: tuple[float, float]
    background_accept: float  # background works accepted out of fold
    n_works: int
    n_background: int


def _scores(space: EmbeddingSpace, probe, X: np.ndarray) -> np.ndarray:
    return probe.decision_function(space.transform(X)).astype(np.float64)


def out_of_fold_scores(X, y, groups, config: VerifyConfig, seed: int) -> np.ndarray:
    from sklearn.model_selection import StratifiedKFold

    scores = np.zeros(len(y))
    splitter = StratifiedKFold(n_splits=config.folds, shuffle=True, random_state=seed)
    for train, test in splitter.split(X, y):
        space = EmbeddingSpace.fit(X[train], groups)
        probe = fit_linear_probe(space.transform(X[train]), y[train], config.C, seed)
        scores[test] = _scores(space, probe, X[test])
    return scores


def calibrate(
    X_a: np.ndarray, X_bg: np.ndarray, groups, config: VerifyConfig, seed: int = 0
) -> Verifier:
    """Threshold and held-out acceptance for artist A (works X_a) against X_bg."""
    X = np.concatenate([X_a, X_bg])  # (n_a + n_bg, d)
    y = np.r_[np.ones(len(X_a), int), np.zeros(len(X_bg), int)]
    scores = out_of_fold_scores(X, y, groups, config, seed)
    bg = np.sort(scores[y == 0])[::-1]  # descending
    k = int(np.floor(config.false_accept * len(bg)))  # background works tau may accept
    tau = float(bg[min(k, len(bg) - 1)])
    accepted = int((scores[y == 1] > tau).sum())
    space = EmbeddingSpace.fit(X, groups)
    probe = fit_linear_probe(space.transform(X), y, config.C, seed)
    return Verifier(
        space=space,
        probe=probe,
        tau=tau,
        heldout_accept=accepted / len(X_a),
        ci=wilson_interval(accepted, len(X_a)),
        background_accept=float((bg > tau).mean()),
        n_works=len(X_a),
        n_background=len(X_bg),
    )


def verify_set(verifier: Verifier, X_gen: np.ndarray, config: VerifyConfig) -> dict:
    """Scores of the generated images, how many are accepted, and the set's answer."""
    from scipy.stats import binom

    scores = _scores(verifier.space, verifier.probe, X_gen)
    accepted = scores > verifier.tau
    k, n = int(accepted.sum()), len(scores)
    rate = max(verifier.background_accept, 1.0 / (verifier.n_background + 1))
    return {
        "scores": scores,
        "accepted": accepted,
        "accepted_share": k / n,
        "binomial_p": float(binom.sf(k - 1, n, rate)) if k else 1.0,
        "in_style": bool(k / n >= config.set_share),
    }


def background_config():
    """The shipped background corpus (synthetic artists of a fixed seed)."""
    from iclr25.core.style_check.synthetic import SyntheticConfig

    return SyntheticConfig(
        n_artists=BACKGROUND_ARTISTS, per_artist=BACKGROUND_WORKS, seed=BACKGROUND_SEED, size=128
    )


def render_background() -> list:
    """The background works as RGB PIL images (artists of ``BACKGROUND_SEED``)."""
    from iclr25.core.style_check.synthetic import make_styled_artist, render_work, work_rng

    cfg = background_config()
    images = []
    for i in range(cfg.n_artists):
        style = make_styled_artist(cfg.seed, i)
        images += [
            render_work(style, work_rng(cfg.seed, cfg.seed, i, j), cfg.size)
            for j in range(cfg.per_artist)
        ]
    return images


def background_embeddings(encoder, identity: str) -> np.ndarray:
    """(n_bg, d) embeddings of the background under ``encoder``, cached per identity."""
    import hashlib

    from iclr25 import atomic
    from iclr25.paths import cache_dir

    key = hashlib.sha256(f"{identity}|{BACKGROUND_VERSION}".encode()).hexdigest()[:24]
    path = cache_dir("style-check", "background") / f"{key}.npy"
    if path.exists():
        try:
            return np.load(path)
        except (OSError, ValueError):
            pass  # a damaged cache file is recomputed
    emb = np.asarray(encoder.encode(render_background()), dtype=np.float32)
    import io

    buffer = io.BytesIO()
    np.save(buffer, emb)
    atomic.write_bytes(path, buffer.getvalue())
    return emb
