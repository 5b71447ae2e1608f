"""End-to-end functions, one per CLI subcommand (the CLI stays thin; notebooks can call
these directly). Each returns a plain ``results`` dict, deterministic for its inputs and
seed."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from iclr25 import atomic
from iclr25.core.style_check import DISCLAIMER
from iclr25.core.style_check.check import CheckConfig, attribute, fit_attributor, summarise
from iclr25.core.style_check.corpus import WorkRef, list_generated
from iclr25.core.style_check.deepmatch import DeepMatchConfig, eligible, evaluate_uniqueness
from iclr25.core.style_check.encoders import encoder_info, load_encoder, parse_spec
from iclr25.core.style_check.imageio import DEFAULT_MAX_PIXELS
from iclr25.core.style_check.index import IndexConfig, embed_batch, index_references
from iclr25.core.style_check.store import ReferenceSet, StyleDB, check_same_encoder
from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus
from iclr25.core.style_check.tagmatch import (
    TagMatchConfig,
    cross_validate_tagmatch,
    fit_signatures,
    shared_tags,
)
from iclr25.core.style_check.tags import AttributeBinner, TagMatrix, ZeroShotTagger
from iclr25.errors import InputError, UsageError
from iclr25.threads import small_problem_threads

Progress = Callable[..., None] | None
TAG_SOURCES = ("auto", "attributes", "zero-shot", "both")


def load_references(db_path: Path) -> ReferenceSet:
    with StyleDB(db_path) as db:
        return db.load()


def run_index(
    refs: Path, db_path: Path, config: IndexConfig, device: str, on_progress: Progress = None
) -> dict:
    return index_references(refs, db_path, config, device, on_progress)


def run_unique(
    db_path: Path, config: DeepMatchConfig, seed: int, device: str, on_progress: Progress = None
) -> dict:
    ref = load_references(db_path)
    with small_problem_threads(ref.embeddings.size, threshold=4_000_000):
        results = evaluate_uniqueness(
            ref.embeddings,
            ref.artists,
            ref.encoder.feature_groups,
            config,
            seed,
            device,
            on_progress,
        )
    return {
        "encoder": ref.encoder.spec,
        "threshold": config.threshold,
        "classifier": config.classifier,
        "folds": config.folds,
        **results,
    }


# -- encoders and tags ----------------------------------------------------------------------
def reference_encoder(ref: ReferenceSet, override: str | None, device: str, batch_size: int = 32):
    """The encoder that made the DB (or ``override``, which must be the same weights)."""
    spec = override or ref.encoder.spec
    kind, path = parse_spec(spec)
    if kind == "hf" and not path.exists():
        raise InputError(
            f"the DB's encoder folder {path} does not exist",
            "pass --encoder hf:PATH with the same model at its new place",
        )
    encoder = load_encoder(spec, device, batch_size)
    check_same_encoder(ref.encoder, encoder_info(encoder), Path("the DB"))
    return encoder


def resolve_tag_source(source: str, ref: ReferenceSet) -> str:
    if source not in TAG_SOURCES:
        raise UsageError(f"unknown tag source {source!r}", f"use one of {', '.join(TAG_SOURCES)}")
    if source == "auto":
        return "both" if ref.encoder.zero_shot else "attributes"
    if source in ("zero-shot", "both") and not ref.encoder.zero_shot:
        raise UsageError(
            f"--tags {source} needs a CLIP-like encoder with a text tower, "
            f"this DB used {ref.encoder.spec}",
            "use --tags attributes, or index with --encoder hf:PATH of a CLIP/SigLIP model",
        )
    return source


@dataclass
class Tagger:
    """Tags for reference works (fitted on a subset) and for new images."""

    source: str
    zero_shot: ZeroShotTagger | None

    def tags(self, binner: AttributeBinner | None, attrs, names, embeddings) -> TagMatrix:
        parts = []
        if self.source in ("attributes", "both"):
            parts.append(binner.transform(attrs, names))
        if self.source in ("zero-shot", "both"):
            parts.append(self.zero_shot.transform(embeddings))
        matrix = parts[0]
        for part in parts[1:]:
            matrix = matrix.concat(part)
        return matrix


def build_tagger(ref: ReferenceSet, source: str, device: str, encoder=None) -> Tagger:
    source = resolve_tag_source(source, ref)
    zero_shot = None
    if source in ("zero-shot", "both"):
        zero_shot = ZeroShotTagger.build(encoder or reference_encoder(ref, None, device))
    return Tagger(source, zero_shot)


# -- explain ----------------------------------------------------------------------------
def run_explain(
    db_path: Path,
    config: TagMatchConfig,
    tag_source: str,
    seed: int,
    device: str,
    artist: str | None = None,
    on_progress: Progress = None,
) -> dict:
    ref = load_references(db_path)
    keep, excluded = eligible(ref.artists, config.folds)
    names, y = np.unique(ref.artists[keep], return_inverse=True)
    attrs, emb = ref.attributes[keep], ref.embeddings[keep]
    if artist is not None:
        require_eligible_artist(artist, ref, names, config.folds)
    tagger = build_tagger(ref, tag_source, device)

    def folds(train, test):
        binner = AttributeBinner.fit(attrs[train], ref.attribute_names)
        tm = tagger.tags(binner, attrs, ref.attribute_names, emb)
        return tm.rows(train), tm.rows(test)

    cv = cross_validate_tagmatch(folds, y, len(names), config, seed, on_progress)
    full = tagger.tags(
        AttributeBinner.fit(attrs, ref.attribute_names), attrs, ref.attribute_names, emb
    )
    sigs = fit_signatures(full.present, y, len(names), config)
    shared = shared_tags(
        full.present, y, list(map(str, names)), full.vocabulary, sigs, config.shared_min_share
    )
    rows = [
        {
            "name": str(name),
            "n_works": int((y == a).sum()),
            "signature": [full.vocabulary[t] for t in sigs[a].tags],
            "heldout_precision": float(cv["precision"][a]),
            "heldout_recall": float(cv["recall"][a]),
            "train_precision": sigs[a].precision,
            "train_recall": sigs[a].recall,
            "distinguishing": bool(sigs[a].precision >= config.target_precision),
            **shared[a],
        }
        for a, name in enumerate(names)
    ]
    distinct = len({tuple(r["signature"]) for r in rows})
    return {
        "encoder": ref.encoder.spec,
        "tag_source": tagger.source,
        "artists": [r for r in rows if artist is None or r["name"] == artist],
        "mean_heldout_precision": float(np.nanmean(cv["precision"])),
        "mean_heldout_recall": float(np.mean(cv["recall"])),
        "tag_top1_accuracy": float((cv["ranks"] < 1).mean()),
        "tag_top5_accuracy": float((cv["ranks"] < 5).mean()),
        "n_distinct_signatures": distinct,
        "n_artists": len(names),
        "excluded": excluded,
        "vocabulary_size": len(full.vocabulary),
    }


def require_eligible_artist(artist: str, ref: ReferenceSet, eligible_names, folds: int) -> None:
    """``--artist`` of ``explain``: in the DB, and with enough works for the folds."""
    require_artist(artist, ref.artist_names)
    if artist not in eligible_names:
        n = int((ref.artists == artist).sum())
        raise InputError(
            f"artist {artist!r} has {n} work{'s' if n != 1 else ''}, fewer than the "
            f"{folds} folds need",
            "lower --folds, or add works by this artist",
        )


def require_artist(artist: str, names: list[str], shown: int = 8) -> None:
    """Refuse an unknown ``--artist``, naming close matches or the valid names."""
    if artist in names:
        return
    close = difflib.get_close_matches(artist, names, n=3)
    if close:
        hint = f"did you mean {', '.join(close)}?"
    else:
        listed = ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")
        hint = f"the DB's {len(names)} artists are {listed}"
    raise InputError(f"artist {artist!r} is not in the DB", f"{hint} (names are folder names)")


# -- check ------------------------------------------------------------------------------
def embed_generated(
    encoder, works: list[WorkRef], max_pixels: int, batch_size: int, on_progress: Progress = None
):
    kept, embs, attrs, skipped = [], [], [], []
    if on_progress is not None:
        on_progress(0, of=len(works))
    for start in range(0, len(works), batch_size):
        loaded, emb, att, skips = embed_batch(
            encoder, works[start : start + batch_size], max_pixels
        )
        kept += [work for work, _ in loaded]
        embs.append(emb)
        attrs.append(att)
        skipped += skips
        if on_progress is not None:
            on_progress(len(works[start : start + batch_size]))
    if not kept:
        first = skipped[0]
        raise InputError(
            f"none of the {len(works)} generated images could be read (first: "
            f"{first['path']}: {first['reason']})",
            "check the files, or raise --max-pixels if they were refused as too large",
        )
    return (
        kept,
        np.concatenate([e for e in embs if len(e)]),
        np.concatenate([a for a in attrs if len(a)]),
        skipped,
    )


@dataclass(frozen=True)
class CheckRequest:
    generated: Path
    db: Path
    artist: str | None = None  # every image was made for this artist
    encoder: str | None = None  # override the DB's encoder location (same weights)
    tag_source: str = "auto"
    max_pixels: int = DEFAULT_MAX_PIXELS
    batch_size: int = 32


def _image_row(i: int, work: WorkRef, out: dict, names, tags: TagMatrix, sigs, ref, config):
    """One image's entry: top matches, attribution, nearest works, tag explanation."""
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


def _signatures_and_tags(ref: ReferenceSet, tagger: Tagger, A_gen, X_gen):
    """TagMatch signatures fitted on every reference work, and the generated images' tags."""
    binner = AttributeBinner.fit(ref.attributes, ref.attribute_names)
    ref_tags = tagger.tags(binner, ref.attributes, ref.attribute_names, ref.embeddings)
    y = np.searchsorted(np.array(ref.artist_names), ref.artists)  # artist index, sorted names
    sigs = fit_signatures(ref_tags.present, y, len(ref.artist_names), TagMatchConfig())
    return sigs, tagger.tags(binner, A_gen, ref.attribute_names, X_gen)


def untestable_artists(ref: ReferenceSet, alpha: float) -> list[str]:
    """Artists with fewer than 1/alpha works: their typicality p-value is never < alpha."""
    if alpha <= 0:
        return []
    min_works = math.floor(1 / alpha + 1e-9)
    return [n for n in ref.artist_names if int((ref.artists == n).sum()) < min_works]


def run_check(
    request: CheckRequest, config: CheckConfig, seed: int, device: str, on_progress: Progress = None
) -> dict:
    ref = load_references(request.db)
    if request.artist is not None:
        require_artist(request.artist, ref.artist_names)
    listing = list_generated(request.generated, request.artist)
    encoder = reference_encoder(ref, request.encoder, device, request.batch_size)
    works, X_gen, A_gen, skipped = embed_generated(
        encoder, listing.works, request.max_pixels, request.batch_size, on_progress
    )
    with small_problem_threads(ref.embeddings.size, threshold=4_000_000):
        groups = ref.encoder.feature_groups
        att = fit_attributor(ref.embeddings, ref.artists, groups, config, seed, device)
        out = attribute(att, X_gen, config, device)
    tagger = build_tagger(ref, request.tag_source, device, encoder)
    sigs, gen_tags = _signatures_and_tags(ref, tagger, A_gen, X_gen)
    images = [
        _image_row(i, work, out, att.names, gen_tags, sigs, ref, config)
        for i, work in enumerate(works)
    ]
    return {
        "disclaimer": DISCLAIMER,
        "encoder": ref.encoder.spec,
        "n_images": len(works),
        **summarise(att.names, [w.artist for w in works], out, config),
        "images": images,
        "skipped": listing.skipped + skipped,
        "tag_source": tagger.source,
        "typicality_untestable": untestable_artists(ref, config.alpha),
        "risk_threshold": config.risk_threshold,
    }


# -- synthetic corpora ----------------------------------------------------------------------
def make_synthetic(folder: Path, config: SyntheticConfig, on_progress: Progress = None) -> dict:
    """Write a synthetic corpus into ``folder`` (new or empty), atomically."""
    with atomic.staged_dir(Path(folder), overwrite=False) as staging:
        artists = write_corpus(staging, config, on_progress)
    works_seed = config.seed if config.works_seed is None else config.works_seed
    return {
        "folder": str(folder),
        "n_artists": len(artists),
        "per_artist": config.per_artist,
        "seed": config.seed,
        "works_seed": works_seed,
        "size": config.size,
        "difficulty": config.difficulty,
        "artists": artists,
    }


@dataclass(frozen=True)
class SyntheticSetup:
    n_artists: int = 8
    per_artist: int = 20  # >= 1/alpha works, so the typicality test can reject
    generated_per_artist: int = 6
    size: int = 96
    seed: int = 0
    difficulty: str = "easy"  # "hard": pairs of artists sharing palette and stroke shape


def build_synthetic(folder: Path, setup: SyntheticSetup, on_progress: Progress = None) -> dict:
    """References, a DB, and "generated" works (new works seed) of the same artists."""
    refs, generated, db = folder / "refs", folder / "generated", folder / "index.sqlite"
    base = SyntheticConfig(
        n_artists=setup.n_artists,
        per_artist=setup.per_artist,
        seed=setup.seed,
        size=setup.size,
        difficulty=setup.difficulty,
    )
    write_corpus(refs, base, on_progress)
    gen = replace(base, per_artist=setup.generated_per_artist, works_seed=setup.seed + 1)
    write_corpus(generated, gen, on_progress)
    index_references(refs, db, IndexConfig(), "cpu", on_progress)
    return {"refs": refs, "generated": generated, "db": db}
