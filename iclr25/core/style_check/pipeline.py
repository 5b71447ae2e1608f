"""End-to-end functions, one per CLI subcommand (the CLI stays thin; notebooks can call
these directly). Each returns a plain ``results`` dict, deterministic for its inputs and
seed."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from iclr25 import atomic
from iclr25.core.style_check.deepmatch import DeepMatchConfig, eligible, evaluate_uniqueness
from iclr25.core.style_check.encoders import encoder_info, load_encoder, parse_spec
from iclr25.core.style_check.index import IndexConfig, index_references
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
    refs: Path,
    db_path: Path,
    config: IndexConfig,
    device: str,
    on_progress: Progress = None,
    execution=None,
) -> dict:
    return index_references(refs, db_path, config, device, on_progress, execution)


def encoder_views(ref: ReferenceSet) -> list[tuple[str, np.ndarray, list[str] | None]]:
    """(name, embeddings, feature groups) of the DB's encoder, then the second one's."""
    views = [(ref.encoder.name, ref.embeddings, ref.encoder.feature_groups)]
    if ref.second_embeddings is not None:
        views.append((ref.second_encoder.name, ref.second_embeddings, None))
    return views


def run_unique(
    db_path: Path, config: DeepMatchConfig, seed: int, device: str, on_progress: Progress = None
) -> dict:
    """DeepMatch under the DB's encoder (which decides) and the second encoder beside it."""
    ref = load_references(db_path)
    by_encoder = {}
    for name, X, groups in encoder_views(ref):
        with small_problem_threads(X.size, threshold=4_000_000):
            by_encoder[name] = evaluate_uniqueness(
                X, ref.artists, groups, config, seed, device, on_progress
            )
    results = next(iter(by_encoder.values()))
    for row in results["artists"]:
        row["by_encoder"] = {
            name: {
                "heldout_accuracy": r["heldout_accuracy"],
                "unique": r["unique"],
            }
            for name, res in by_encoder.items()
            for r in res["artists"]
            if r["name"] == row["name"]
        }
        row["encoders_agree"] = len({v["unique"] for v in row["by_encoder"].values()}) == 1
    return {
        "encoder": ref.encoder.spec,
        "threshold": config.threshold,
        "classifier": config.classifier,
        "folds": config.folds,
        **results,
        "by_encoder": {
            name: {k: res[k] for k in ("mean_heldout_accuracy", "n_unique", "unique_share")}
            for name, res in by_encoder.items()
        },
        "n_encoders_agree": sum(r["encoders_agree"] for r in results["artists"]),
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
