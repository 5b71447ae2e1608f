"""``check`` end to end: embed the generated images, judge every artist's set.

Two modes, chosen by the DB:

- **classification** (two or more artists with enough works for DeepMatch's folds): per
  image the top matches, attribution, nearest works and tag explanation; per artist a
  set was made for the verdict of ``verdict.py`` — "at risk" only for a unique style
  whose set is attributed to it — under the DB's encoder, with the SSL-CNN's figures
  beside it (``by_encoder``) when the DB has that second encoder;
- **verification** (one such artist — an artist checking their own folder): "are these
  images in A's style?" against a threshold calibrated on held-out works of A and a
  background corpus of synthetic artists (``verify.py``).

Returns a plain ``results`` dict, deterministic for its inputs and seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.core.style_check import DISCLAIMER
from iclr25.core.style_check.check import CheckConfig
from iclr25.core.style_check.corpus import Listing, WorkRef, list_generated
from iclr25.core.style_check.deepmatch import DeepMatchConfig, eligible_names
from iclr25.core.style_check.imageio import DEFAULT_MAX_PIXELS
from iclr25.core.style_check.index import embed_batch
from iclr25.core.style_check.pipeline import (
    build_tagger,
    load_references,
    reference_encoder,
    require_artist,
)
from iclr25.core.style_check.store import ReferenceSet
from iclr25.core.style_check.tagmatch import TagMatchConfig, fit_signatures
from iclr25.core.style_check.tags import AttributeBinner, TagMatrix
from iclr25.core.style_check.verdict import (
    artist_row,
    assess_sets,
    encoder_view,
    fit_reference,
    summary,
    tag_overlap,
)
from iclr25.core.style_check.verify import (
    VerifyConfig,
    background_embeddings,
    calibrate,
    verify_set,
)
from iclr25.errors import InputError
from iclr25.threads import small_problem_threads

Progress = Callable[..., None] | None


@dataclass(frozen=True)
class CheckRequest:
    generated: Path
    db: Path
    artist: str | None = None  # every image was made for this artist
    encoder: str | None = None  # override the DB's encoder location (same weights)
    tag_source: str = "auto"
    max_pixels: int = DEFAULT_MAX_PIXELS
    batch_size: int = 32


@dataclass
class Generated:
    works: list[WorkRef]
    X: np.ndarray  # (n, d) the DB encoder's embeddings
    A: np.ndarray  # (n, a) style statistics (TagMatch attributes)
    X2: np.ndarray | None  # (n, d2) the second encoder's, when the DB has one
    skipped: list[dict]

    @property
    def made_for(self) -> list[str | None]:
        return [w.artist for w in self.works]


def embed_generated(encoder, second, works, max_pixels, batch_size, on_progress=None):
    """Decode and embed every generated image (both encoders); skips listed."""
    kept, embs, attrs, seconds, skipped = [], [], [], [], []
    if on_progress is not None:
        on_progress(0, of=len(works))
    for start in range(0, len(works), batch_size):
        batch = works[start : start + batch_size]
        loaded, emb, att, skips = embed_batch(encoder, batch, max_pixels)
        kept += [work for work, _ in loaded]
        if len(loaded):
            embs.append(emb)
            attrs.append(att)
            if second is not None:
                seconds.append(second.encode([item.image for _, item in loaded]))
        skipped += skips
        if on_progress is not None:
            on_progress(len(batch))
    if not kept:
        first = skipped[0]
        raise InputError(
            f"none of the {len(works)} generated images could be read (first: "
            f"{first['path']}: {first['reason']})",
            "check the files, or raise --max-pixels if they were refused as too large",
        )
    X2 = np.concatenate(seconds) if second is not None else None
    return Generated(kept, np.concatenate(embs), np.concatenate(attrs), X2, skipped)


def require_known_targets(listing: Listing, names: list[str], generated: Path) -> None:
    """A folder whose ``<name>/`` subfolders name no DB artist is refused (with hints)."""
    import difflib

    named = sorted({w.artist for w in listing.works if w.artist is not None})
    if not named or any(n in names for n in named):
        return
    close = sorted({c for n in named for c in difflib.get_close_matches(n, names, n=1)})
    hint = (
        f"close DB names: {', '.join(close)}"
        if close
        else f"the DB's artists: {', '.join(names[:8])}"
    )
    raise InputError(
        f"{generated}: none of its folders ({', '.join(named[:5])}) names an artist in the DB",
        f"name the folders after the DB's artists ({hint}), or pass --artist NAME",
    )


# -- classification mode ----------------------------------------------------------------------
def _image_row(i: int, gen: Generated, out: dict, names, tags: TagMatrix, sigs, ref, config):
    """One image's entry: top matches, attribution, nearest works, tag explanation."""
    work = gen.works[i]
    order = np.argsort(-out["proba"][i], kind="stable")[: config.top_k]
    attributed = int(out["attributed"][i])
    focus = attributed if attributed >= 0 else int(out["best"][i])
    own = set(np.flatnonzero(tags.present[i]).tolist())
    sig = sigs[focus].tags
    near = zip(out["near_sims"][i], out["near_idx"][i], strict=True)
    return {
        "path": str(work.path),
        "made_for": work.artist,
        "top_matches": [
            {"artist": names[a], "probability": float(out["proba"][i, a])} for a in order
        ],
        "attributed_to": names[attributed] if attributed >= 0 else None,
        "typicality_p": float(out["typicality"][i]),
        "nearest_works": [
            {"path": ref.paths[j], "artist": str(ref.artists[j]), "cosine": float(v)}
            for v, j in near
        ],
        "tags": tags.tags_of(i),
        "explanation": {
            "artist": names[focus],
            "signature": [tags.vocabulary[t] for t in sig],
            "matched": [tags.vocabulary[t] for t in sig if t in own],
            "missing": [tags.vocabulary[t] for t in sig if t not in own],
        },
    }


def _tags(ref: ReferenceSet, tagger, gen: Generated):
    """TagMatch signatures on every reference work; reference and generated tags."""
    binner = AttributeBinner.fit(ref.attributes, ref.attribute_names)
    ref_tags = tagger.tags(binner, ref.attributes, ref.attribute_names, ref.embeddings)
    y = np.searchsorted(np.array(ref.artist_names), ref.artists)  # artist index, sorted names
    sigs = fit_signatures(ref_tags.present, y, len(ref.artist_names), TagMatchConfig())
    gen_tags = tagger.tags(binner, gen.A, ref.attribute_names, gen.X)
    return sigs, ref_tags, y, gen_tags


def untestable_artists(ref: ReferenceSet, alpha: float) -> list[str]:
    """Artists with fewer than 1/alpha works: their typicality p-value is never < alpha."""
    if alpha <= 0:
        return []
    min_works = math.floor(1 / alpha + 1e-9)
    return [n for n in ref.artist_names if int((ref.artists == n).sum()) < min_works]


def _encoders(ref: ReferenceSet, gen: Generated, config, deepmatch, seed, device):
    """[(name, Reference, assessed sets)] for the DB's encoder and the second one."""
    groups = ref.encoder.feature_groups
    views = [(ref.encoder.name, ref.embeddings, groups, gen.X)]
    if ref.second_embeddings is not None and gen.X2 is not None:
        views.append((ref.second_encoder.name, ref.second_embeddings, None, gen.X2))
    out = []
    for name, X_ref, grp, X_gen in views:
        with small_problem_threads(X_ref.size, threshold=4_000_000):
            fitted = fit_reference(name, X_ref, ref.artists, grp, config, deepmatch, seed, device)
            out.append((name, fitted, assess_sets(fitted, X_gen, gen.made_for, config, device)))
    return out


def _artist_rows(views, sigs, ref_tags, y, gen_tags, names, threshold) -> list[dict]:
    name0, primary, found0 = views[0]
    rows = []
    for name, found in found0["sets"].items():
        a = names.index(name)
        tags = tag_overlap(
            gen_tags.present[found["rows"]], ref_tags.present, y, a, sigs[a], ref_tags.vocabulary
        )
        row = artist_row(name, primary, found, tags, threshold)
        row["by_encoder"] = {enc: encoder_view(fit, f["sets"][name]) for enc, fit, f in views}
        row["encoders_agree"] = len({v["at_risk"] for v in row["by_encoder"].values()}) == 1
        rows.append(row)
    return rows


def _classify(ref, gen, request, config, deepmatch, seed, device, encoder) -> dict:
    views = _encoders(ref, gen, config, deepmatch, seed, device)
    name0, primary, found0 = views[0]
    tagger = build_tagger(ref, request.tag_source, device, encoder)
    sigs, ref_tags, y, gen_tags = _tags(ref, tagger, gen)
    names = primary.names
    rows = _artist_rows(views, sigs, ref_tags, y, gen_tags, names, deepmatch.threshold)
    out = found0["out"]
    known = np.array([m in names for m in gen.made_for], dtype=bool)
    truth = np.array(
        [names.index(m) if k else -1 for m, k in zip(gen.made_for, known, strict=True)]
    )
    return {
        "mode": "classification",
        "artists": rows,
        **summary(rows),
        "attribution_accuracy": float((out["best"][known] == truth[known]).mean())
        if known.any()
        else None,
        "attributed_share": float((out["attributed"] >= 0).mean()),
        "share_of_all": _share_of_all(out, names),
        "encoders": [v[0] for v in views],
        "uniqueness": {
            v[0]: {
                "mean_heldout_accuracy": v[1].uniqueness["mean_heldout_accuracy"],
                "n_unique": v[1].uniqueness["n_unique"],
                "n_artists": v[1].uniqueness["n_artists"],
                "excluded": v[1].uniqueness["excluded"],
            }
            for v in views
        },
        "images": [
            _image_row(i, gen, out, names, gen_tags, sigs, ref, config)
            for i in range(len(gen.works))
        ],
        "tag_source": tagger.source,
        "typicality_untestable": untestable_artists(ref, config.alpha),
    }


def _share_of_all(out: dict, names: list[str]) -> dict[str, float]:
    """Share of all images attributed to each artist (detail for unnamed folders)."""
    attributed = out["attributed"]
    return {
        names[a]: float((attributed == a).mean()) for a in sorted(set(attributed[attributed >= 0]))
    }


# -- verification mode -------------------------------------------------------------------------
def _verify(ref, gen, verify_cfg: VerifyConfig, seed, encoder, artist: str) -> dict:
    """One artist against the background corpus, under each encoder of the DB."""
    mine = ref.artists == artist
    views = [(ref.encoder.name, ref.embeddings, ref.encoder.feature_groups, gen.X, encoder)]
    if ref.second_embeddings is not None and gen.X2 is not None:
        from iclr25.core.style_check.encoders.cnn import SSLCNNEncoder

        second = SSLCNNEncoder(ref.second_weights)
        views.append((ref.second_encoder.name, ref.second_embeddings, None, gen.X2, second))
    targeted = np.array([m in (artist, None) for m in gen.made_for], dtype=bool)
    results = {}
    for name, X_ref, groups, X_gen, enc in views:
        X_bg = np.concatenate([background_embeddings(enc, enc.identity), X_ref[~mine]])
        verifier = calibrate(X_ref[mine], X_bg, groups, verify_cfg, seed)
        results[name] = (verifier, verify_set(verifier, X_gen[targeted], verify_cfg))
    return _verification_row(artist, results, verify_cfg, int(targeted.sum()), views[0][0])


def _verification_row(artist, results, cfg: VerifyConfig, n, primary: str) -> dict:
    by = {}
    for name, (v, s) in results.items():
        unique = v.heldout_accept >= cfg.threshold
        by[name] = {
            "unique": bool(unique),
            "heldout_accuracy": v.heldout_accept,
            "ci_low": v.ci[0],
            "ci_high": v.ci[1],
            "background_accept": v.background_accept,
            "threshold_score": v.tau,
            "accepted_share": s["accepted_share"],
            "binomial_p": s["binomial_p"],
            "in_style": s["in_style"],
            "at_risk": bool(unique and s["in_style"]),
        }
    p = by[primary]
    detail = (
        f"{p['accepted_share']:.0%} of the {n} images accepted as {artist}'s at a threshold "
        f"that accepts {p['background_accept']:.0%} of held-out background works "
        f"(binomial p {p['binomial_p']:.2g})"
    )
    if not p["unique"]:
        code = "no unique style"
        text = (
            f"no unique style relative to the background: no basis for a style claim (held-out "
            f"acceptance {p['heldout_accuracy']:.2f} < {cfg.threshold:.2f}); " + detail
        )
    elif p["in_style"]:
        code, text = "at risk", f"at risk: the set is accepted as {artist}'s style; " + detail
    else:
        code, text = "not recognised", f"not recognised as {artist}'s style; " + detail
    return {
        "name": artist,
        "n_generated_for": n,
        "unique": p["unique"],
        "heldout_accuracy": p["heldout_accuracy"],
        "set_attribution": {
            "accepted_share": p["accepted_share"],
            "attributed": p["in_style"],
            "binomial_p": p["binomial_p"],
        },
        "image_share": p["accepted_share"],
        "tag_signature_overlap": None,  # TagMatch needs artists to tell apart
        "verdict": code,
        "verdict_text": text,
        "at_risk": code == "at risk",
        "by_encoder": by,
        "encoders_agree": len({v["at_risk"] for v in by.values()}) == 1,
    }


def verification(ref, gen, listing, verify_cfg, seed, encoder, artist) -> dict:
    row = _verify(ref, gen, verify_cfg, seed, encoder, artist)
    return {
        "mode": "verification",
        "artists": [row],
        **summary([row]),
        "background": {
            "kind": "synthetic artists shipped with iclr25 (verify.BACKGROUND_*)",
            "n_works": _background_size(),
            "db_works_of_other_artists": int((ref.artists != artist).sum()),
        },
        "encoders": list(row["by_encoder"]),
        "images": [{"path": str(w.path), "made_for": w.artist} for w in gen.works],
    }


def _background_size() -> int:
    from iclr25.core.style_check.verify import BACKGROUND_ARTISTS, BACKGROUND_WORKS

    return BACKGROUND_ARTISTS * BACKGROUND_WORKS


def _one_artist(ref: ReferenceSet, folds: int) -> str:
    """The one artist with enough works for verification (or a clear refusal)."""
    eligible = eligible_names(ref.artists, folds)
    if not eligible:
        counts = {n: int((ref.artists == n).sum()) for n in ref.artist_names}
        listed = ", ".join(f"{n} ({c})" for n, c in sorted(counts.items())[:5])
        raise InputError(
            f"no artist in the DB has the {folds} works a check needs (works: {listed})",
            f"add works so that an artist has at least {folds}, or lower --folds",
        )
    return eligible[0]


# -- entry point -------------------------------------------------------------------------------
def run_check(
    request: CheckRequest,
    config: CheckConfig,
    deepmatch: DeepMatchConfig,
    seed: int,
    device: str,
    on_progress: Progress = None,
    verify_cfg: VerifyConfig | None = None,
) -> dict:
    ref = load_references(request.db)
    if request.artist is not None:
        require_artist(request.artist, ref.artist_names)
    listing = list_generated(request.generated, request.artist)
    require_known_targets(listing, ref.artist_names, request.generated)
    encoder = reference_encoder(ref, request.encoder, device, request.batch_size)
    second = None
    if ref.second_weights is not None:
        from iclr25.core.style_check.encoders.cnn import SSLCNNEncoder

        second = SSLCNNEncoder(ref.second_weights)
    gen = embed_generated(
        encoder, second, listing.works, request.max_pixels, request.batch_size, on_progress
    )
    if len(eligible_names(ref.artists, deepmatch.folds)) < 2:
        artist = _one_artist(ref, deepmatch.folds)
        cfg = verify_cfg or VerifyConfig(folds=deepmatch.folds, threshold=deepmatch.threshold)
        body = verification(ref, gen, listing, cfg, seed, encoder, artist)
    else:
        body = _classify(ref, gen, request, config, deepmatch, seed, device, encoder)
    known = set(ref.artist_names)
    return {
        "disclaimer": DISCLAIMER,
        "encoder": ref.encoder.spec,
        "n_images": len(gen.works),
        **body,
        "unknown_made_for": sorted({m for m in gen.made_for if m is not None and m not in known}),
        "skipped": listing.skipped + gen.skipped,
    }
