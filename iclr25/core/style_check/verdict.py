"""Per-artist verdicts on generated sets: a style claim needs a unique style first.

ArtSavant's logic (Moayeri et al., ICLR 2025, Secs. 3 and 5): "if an artist's works can
consistently be recognised as their own, the artist has a unique style", and only then
can generated images be said to copy it. So for every artist a a generated set G_a was
made for:

1. **uniqueness** — DeepMatch's held-out accuracy acc_a on the reference corpus
   (``deepmatch.evaluate_uniqueness``); unique(a) <=> acc_a >= tau;
2. **set attribution** — DeepMatch's classification of the set, argmax_b sum_{x in G_a}
   log p(b | x), gated by typicality (``check.set_attribution``); per-image shares are
   kept as detail (``image_share``: images attributed to a with confidence;
   ``top1_share``: images whose top match is a);
3. **tag evidence** — TagMatch's signature S_a: the share of G_a matching all of S_a
   against the share of *other* artists' reference works that do (a one-sided binomial
   test; the tags corroborate when p < 0.05);
4. **verdict** — ``at risk`` only when a is unique *and* G_a is attributed to a; a
   non-unique artist gets ``no unique style`` ("no basis for a style claim") whatever
   the set, with the evidence; an artist with too few works for the folds gets
   ``not evaluated``.

``Reference`` (one per encoder) holds what the reference corpus gives once: the
uniqueness rows and the fitted attributor, so the study reuses them for every control.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.style_check.check import (
    Attributor,
    CheckConfig,
    attribute,
    fit_attributor,
    set_attribution,
    typicality_p_values,
)
from iclr25.core.style_check.deepmatch import DeepMatchConfig, evaluate_uniqueness

AT_RISK = "at risk"
NOT_RECOGNISED = "not recognised"
NO_UNIQUE_STYLE = "no unique style"
NOT_EVALUATED = "not evaluated"
VERDICTS = (AT_RISK, NOT_RECOGNISED, NO_UNIQUE_STYLE, NOT_EVALUATED)
TAG_ALPHA = 0.05  # level of the one-sided binomial test of the tag evidence


@dataclass
class Reference:
    """What one encoder's reference embeddings give: uniqueness and the attributor."""

    encoder: str
    uniqueness: dict  # evaluate_uniqueness's result
    attributor: Attributor

    @property
    def names(self) -> list[str]:
        return self.attributor.names

    def unique_row(self, name: str) -> dict | None:
        return next((r for r in self.uniqueness["artists"] if r["name"] == name), None)


def fit_reference(
    encoder: str,
    X: np.ndarray,
    artists: np.ndarray,
    groups: list[str] | None,
    check: CheckConfig,
    deepmatch: DeepMatchConfig,
    seed: int = 0,
    device: str = "cpu",
) -> Reference:
    uniqueness = evaluate_uniqueness(X, artists, groups, deepmatch, seed, device)
    attributor = fit_attributor(X, artists, groups, check, seed, device)
    return Reference(encoder, uniqueness, attributor)


def assess_sets(
    ref: Reference, X_gen: np.ndarray, made_for: list, check: CheckConfig, device: str = "cpu"
) -> dict:
    """Per-image attribution, and per target artist the set-level figures."""
    out = attribute(ref.attributor, X_gen, check, device)
    names = ref.names
    log_p = np.log(out["proba"] + 1e-12)  # (n, A)
    unit = ref.attributor.space.unit(X_gen)
    sets = {}
    for name in sorted({m for m in made_for if m in names}):
        a = names.index(name)
        rows = np.array([m == name for m in made_for], dtype=bool)
        typical = typicality_p_values(
            ref.attributor, unit[rows], np.full(rows.sum(), a), check.typicality_k, device
        )
        sets[name] = {
            "name": name,
            "n": int(rows.sum()),
            "rows": np.flatnonzero(rows),
            "set_attribution": set_attribution(
                log_p[rows], a, typical, names, check.alpha, check.set_typical_share
            ),
            "image_share": float((out["attributed"][rows] == a).mean()),
            "top1_share": float((out["best"][rows] == a).mean()),
        }
    return {"out": out, "sets": sets}


def tag_overlap(
    gen_present: np.ndarray, ref_present: np.ndarray, ref_y: np.ndarray, a: int, sig, vocab
) -> dict | None:
    """TagMatch evidence for the set: its images carrying a's whole signature, against
    a's own works and the other artists' works (None when a has no signature)."""
    from scipy.stats import binom

    if not sig.tags:
        return None
    match_gen = gen_present[:, sig.tags].all(axis=1)
    match_ref = ref_present[:, sig.tags].all(axis=1)
    others = ref_y != a
    base = float(match_ref[others].mean()) if others.any() else 0.0
    k, n = int(match_gen.sum()), len(match_gen)
    p = float(binom.sf(k - 1, n, base)) if k > 0 else 1.0
    return {
        "signature": [vocab[t] for t in sig.tags],
        "set_match_share": k / n,
        "mean_tags_matched": float(gen_present[:, sig.tags].mean()),
        "own_works_share": float(match_ref[~others].mean()),
        "other_works_share": base,
        "binomial_p": p,
        "corroborates": bool(p < TAG_ALPHA),
    }


def verdict(unique_row: dict | None, found: dict, tags: dict | None, threshold: float) -> tuple:
    """(code, sentence with the evidence) for one artist's generated set."""
    s = found["set_attribution"]
    detail = (
        f"the set of {found['n']} is classified as {s['artist']} (log-margin "
        f"{s['log_margin']:+.1f}, {s['typical_share']:.0%} typical), "
        f"{found['image_share']:.0%} of its images attributed to this artist one by one"
    )
    if tags is not None:
        detail += (
            f"; signature {' + '.join(tags['signature'])} on {tags['set_match_share']:.0%} "
            f"of the set vs {tags['other_works_share']:.0%} of other artists' works"
        )
    if unique_row is None:
        return NOT_EVALUATED, (
            "not evaluated: too few reference works to test uniqueness (see excluded); " + detail
        )
    acc = unique_row["heldout_accuracy"]
    if not unique_row["unique"]:
        confused = unique_row.get("confused_with") or "-"
        return NO_UNIQUE_STYLE, (
            f"no unique style: no basis for a style claim (held-out accuracy {acc:.2f} < "
            f"{threshold:.2f}, confused with {confused}); " + detail
        )
    if s["attributed"]:
        return AT_RISK, f"at risk: recognised as this artist's style (acc {acc:.2f}); " + detail
    return NOT_RECOGNISED, f"not recognised as this artist's style (acc {acc:.2f}); " + detail


def encoder_view(ref: Reference, found: dict) -> dict:
    """One encoder's figures for one artist (the ``by_encoder`` entries)."""
    row = ref.unique_row(found["name"])
    s = found["set_attribution"]
    return {
        "unique": None if row is None else row["unique"],
        "heldout_accuracy": None if row is None else row["heldout_accuracy"],
        "set_attributed": s["attributed"],
        "set_classified_as": s["artist"],
        "image_share": found["image_share"],
        "at_risk": bool(row is not None and row["unique"] and s["attributed"]),
    }


def artist_row(name: str, ref: Reference, found: dict, tags: dict | None, threshold: float):
    row = ref.unique_row(name)
    code, text = verdict(row, found, tags, threshold)
    return {
        "name": name,
        "n_generated_for": found["n"],
        "unique": None if row is None else row["unique"],
        "heldout_accuracy": None if row is None else row["heldout_accuracy"],
        "set_attribution": found["set_attribution"],
        "image_share": found["image_share"],
        "top1_share": found["top1_share"],
        "n_attributed": int(round(found["image_share"] * found["n"])),
        "tag_signature_overlap": tags,
        "verdict": code,
        "verdict_text": text,
        "at_risk": code == AT_RISK,
    }


def summary(rows: list[dict]) -> dict:
    """Counts over the artists with a generated set."""
    targeted = len(rows)
    n_risk = sum(r["at_risk"] for r in rows)
    attributed = sum(r["set_attribution"]["attributed"] for r in rows)
    return {
        "n_targeted_artists": targeted,
        "n_at_risk": n_risk,
        "style_at_risk_share": n_risk / targeted if targeted else None,
        "n_sets_attributed": attributed,
        "n_unique_targeted": sum(bool(r["unique"]) for r in rows),
        "n_attributed_not_unique": sum(
            r["set_attribution"]["attributed"] and r["unique"] is False for r in rows
        ),
        "verdicts": {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS},
    }
