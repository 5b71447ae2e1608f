"""`iclr25 style-check`: which artists have a recognisable style, and which generated
images copy it (ArtSavant: DeepMatch + TagMatch, Moayeri et al., ICLR 2025).

Thin layer: options -> config dataclass -> one function of
``iclr25.core.style_check.pipeline`` -> ``run.finish``. Heavy imports happen inside the
command bodies so that ``iclr25 --help`` stays instant.
"""

import contextlib
import csv
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from iclr25.demo import DemoStep
from iclr25.errors import EXIT_INTERRUPTED, IclrError
from iclr25.output import format_value, rows_table
from iclr25.runner import Run, command, require

NAME = "style-check"
HELP = "Which artists have a recognisable style, and which generated images copy it (ArtSavant)."
app = typer.Typer(no_args_is_help=True, help=HELP)

DbOption = Annotated[
    Path | None, typer.Option("--db", help="The embedding DB file (made by 'style-check index').")
]
SyntheticOption = Annotated[
    bool,
    typer.Option(
        "--synthetic",
        help="Build a small synthetic corpus (8 artists x 20 works) and its DB in the run "
        "directory (a temp folder without --out) and use it instead of --db.",
    ),
]
DifficultyOption = Annotated[
    str | None,
    typer.Option(
        help="With --synthetic: 'easy' (all artists distinct, the default) or 'hard' (pairs "
        "sharing palette and strokes, the first pair identical: not all are separable)."
    ),
]
MaxPixelsOption = Annotated[
    int, typer.Option(help="Skip images with more pixels (decompression-bomb guard).", min=1)
]
BatchOption = Annotated[int, typer.Option(help="Images decoded and embedded per batch.", min=1)]
DISCLAIMER_EPILOG = "A match measures visual resemblance, not legal infringement."


class IndexInterrupted(IclrError):
    """Ctrl-C during ``index``: unlike other commands, finished batches stay in the DB."""

    exit_code = EXIT_INTERRUPTED


# -- shared plumbing ----------------------------------------------------------------------
@contextlib.contextmanager
def reference_db(
    run: Run, db: Path | None, synthetic: bool, difficulty: str | None
) -> Iterator[tuple[Path, dict]]:
    """Yield (DB path, synthetic paths) from --db, or build the synthetic corpus."""
    require(db is not None or synthetic, "no reference DB given", "pass --db DB or --synthetic")
    require(not (db is not None and synthetic), "--db and --synthetic both given", "pass one")
    require(
        synthetic or difficulty is None,
        "--difficulty applies only to --synthetic",
        "drop --difficulty, or pass --synthetic instead of --db",
    )
    if db is not None:
        yield db, {}
        return
    from iclr25.core.style_check.pipeline import SyntheticSetup, build_synthetic

    check_difficulty(difficulty or "easy")

    with contextlib.ExitStack() as stack:
        if run.staging is not None:
            folder = run.staging / "synthetic"
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="style-check-")))
        setup = SyntheticSetup(seed=run.seed, difficulty=difficulty or "easy")
        with run.progress("synthetic corpus", total=None) as advance, run.timer("synthetic_s"):
            paths = build_synthetic(folder, setup, advance)
        yield paths["db"], {**paths, "folder": folder, "setup": setup}


def check_difficulty(difficulty: str) -> None:
    from iclr25.core.style_check.synthetic import DIFFICULTIES

    require(
        difficulty in DIFFICULTIES,
        f"unknown difficulty {difficulty!r}",
        f"use --difficulty {' or '.join(DIFFICULTIES)}",
    )


def relocate(obj, old: str, new: str):
    """Replace the staging-folder prefix of every path string by the final --out."""
    if isinstance(obj, str):
        return new + obj[len(old) :] if obj.startswith(old) else obj
    if isinstance(obj, list):
        return [relocate(v, old, new) for v in obj]
    if isinstance(obj, dict):
        return {k: relocate(v, old, new) for k, v in obj.items()}
    return obj


def finish(run: Run, results: dict, config: dict, render, synthetic: dict) -> None:
    """``run.finish``; with --synthetic, paths point into --out (or, for a deleted temp
    corpus, start with "synthetic/"), so results stay the same from run to run."""
    if synthetic:
        setup = synthetic["setup"]
        results["synthetic"] = {
            "kept": run.staging is not None,
            "artists": setup.n_artists,
            "works_per_artist": setup.per_artist,
            "generated_per_artist": setup.generated_per_artist,
            "difficulty": setup.difficulty,
        }
        folder = Path(synthetic["folder"])
        final = str(run.options.out.resolve() / "synthetic") if run.staging else "synthetic"
        for old in {str(folder), str(folder.resolve())}:
            results = relocate(results, old, final)
            config = relocate(config, old, final)
    run.finish(results, config, render)


def table(rows: list[dict], columns: list[str] | None = None, title: str | None = None):
    """``rows_table`` whose cells wrap (fold) instead of being cut with an ellipsis."""
    result = rows_table(rows, columns, title=title)
    for column in result.columns:
        column.overflow = "fold"
    return result


def write_csv(path: Path | None, rows: list[dict], columns: list[str]) -> None:
    if path is None:
        return
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(
                [
                    "; ".join(map(str, v)) if isinstance(v, list) else v
                    for v in (row.get(c) for c in columns)
                ]
            )


# -- index ----------------------------------------------------------------------------------
def _render_index(console, res) -> None:
    from iclr25.output import render_mapping

    summary = {k: v for k, v in res.items() if k not in ("skipped", "works_per_artist")}
    summary["skipped"] = len(res["skipped"])
    render_mapping(console, summary, title="style-check index")
    if res["skipped"]:
        console.print(table(res["skipped"][:20], ["path", "reason"], title="skipped files"))


@command(
    app,
    "index",
    epilog="JSON results: db, encoder, listed, embedded_new, embedded_changed, unchanged, "
    "relabelled, removed, skipped (path, reason), empty_artists, n_works, n_artists, "
    "works_per_artist.",
)
def index(
    refs: Annotated[
        Path, typer.Argument(help="Folder of <artist>/<image> files, or a CSV (path, artist).")
    ],
    db: Annotated[Path, typer.Option("--db", help="DB file to create or update.")],
    encoder: Annotated[
        str, typer.Option(help="'stats' (style statistics, no weights) or 'hf:PATH' (local model).")
    ] = "stats",
    batch_size: BatchOption = 32,
    max_pixels: MaxPixelsOption = 89_478_485,
    *,
    run: Run,
) -> None:
    """Embed a reference corpus into DB; only new or changed files are embedded."""
    from iclr25.core.style_check.index import IndexConfig
    from iclr25.core.style_check.pipeline import run_index

    config = IndexConfig(encoder=encoder, batch_size=batch_size, max_pixels=max_pixels)
    try:
        with run.progress("embedding", total=None) as advance, run.timer("index_s"):
            results = run_index(refs, db, config, run.device.kind, advance)
    except KeyboardInterrupt:
        raise IndexInterrupted(
            "interrupted", "the batches embedded so far are kept in the DB; run index again"
        ) from None
    for skip in results["skipped"][:5]:
        run.warn(f"skipped {skip['path']}: {skip['reason']}")
    if len(results["skipped"]) > 5:
        run.warn(f"{len(results['skipped'])} files skipped in all (see skipped in --json)")
    for name in results["empty_artists"]:
        run.warn(f"artist folder {name!r} has no images")
    run.finish(results, {"refs": str(refs), "db": str(db), **config.__dict__}, _render_index)


# -- unique ---------------------------------------------------------------------------------
def _render_unique(console, res) -> None:
    rows = [
        {
            "artist": r["name"],
            "works": r["n_works"],
            "accuracy": r["heldout_accuracy"],
            "95% CI": f"{r['ci_low']:.2f}-{r['ci_high']:.2f}",
            "precision": r["precision"],
            "set acc.": r["set_accuracy"],
            "unique": "yes" if r["unique"] else "no",
            "confused with": r["confused_with"] or "-",
        }
        for r in res["artists"]
    ]
    cols = None
    console.print(table(rows, cols, title=f"DeepMatch ({res['classifier']} probe), held-out"))
    console.print(
        f"mean held-out accuracy {format_value(res['mean_heldout_accuracy'])}; "
        f"{res['n_unique']} of {res['n_artists']} artists unique at threshold {res['threshold']}"
    )
    for ex in res["excluded"]:
        console.print(f"excluded {ex['name']}: {ex['n_works']} works, {ex['reason']}")


@command(
    app,
    "unique",
    epilog="JSON results: artists (name, n_works, heldout_accuracy, ci_low, ci_high, "
    "precision, other_classifier_accuracy, set_accuracy, unique, confused_with, "
    "confused_share), mean_heldout_accuracy, overall_accuracy, top5_accuracy, "
    "linear_accuracy, knn_accuracy, mean_set_accuracy, n_artists, n_unique, unique_share, "
    "excluded, n_works, encoder, threshold, classifier, folds.",
)
def unique(
    db: DbOption = None,
    synthetic: SyntheticOption = False,
    difficulty: DifficultyOption = None,
    folds: Annotated[int, typer.Option(help="Cross-validation folds.", min=2)] = 5,
    threshold: Annotated[
        float, typer.Option(help="Unique when held-out accuracy >= this.", min=0.0, max=1.0)
    ] = 0.8,
    classifier: Annotated[str, typer.Option(help="Deciding classifier: linear or knn.")] = "linear",
    knn_k: Annotated[int, typer.Option(help="Neighbours of the k-NN classifier.", min=1)] = 10,
    set_size: Annotated[int, typer.Option(help="Works per set for set accuracy.", min=1)] = 5,
    *,
    run: Run,
) -> None:
    """DeepMatch: per-artist held-out recognition accuracy; unique style above a threshold."""
    from iclr25.core.style_check.deepmatch import DeepMatchConfig
    from iclr25.core.style_check.pipeline import run_unique

    require(
        classifier in ("linear", "knn"), f"unknown classifier {classifier!r}", "use linear or knn"
    )
    config = DeepMatchConfig(
        folds=folds, threshold=threshold, classifier=classifier, knn_k=knn_k, set_size=set_size
    )
    with reference_db(run, db, synthetic, difficulty) as (db_path, syn):
        with run.progress("cross-validation", total=folds) as advance, run.timer("unique_s"):
            results = run_unique(db_path, config, run.seed, run.device.kind, advance)
        for ex in results["excluded"]:
            run.warn(f"excluded artist {ex['name']} ({ex['n_works']} works): {ex['reason']}")
        if run.wants_artifacts:
            from iclr25.core.style_check.report import plot_uniqueness

            run.save_plot(plot_uniqueness(results["artists"], threshold), "heldout_accuracy.png")
            write_csv(
                run.artifact_path("artists.csv"), results["artists"], list(results["artists"][0])
            )
        finish(run, results, {"db": str(db_path), **config.__dict__}, _render_unique, syn)


# -- explain --------------------------------------------------------------------------------
def _render_explain(console, res) -> None:
    rows = [
        {
            "artist": r["name"],
            "signature": "\n".join(r["signature"]) or "-",
            "precision": r["heldout_precision"],
            "recall": r["heldout_recall"],
            "closest artist": r["closest_artist"],
            "tags shared with it": "\n".join(r["shared_with_closest"][:4]) or "-",
        }
        for r in res["artists"]
    ]
    cols = None
    console.print(table(rows, cols, title=f"TagMatch signatures ({res['tag_source']} tags)"))
    console.print(
        f"tag top-1 accuracy {format_value(res['tag_top1_accuracy'])}, top-5 "
        f"{format_value(res['tag_top5_accuracy'])}; {res['n_distinct_signatures']} distinct "
        f"signatures for {res['n_artists']} artists"
    )


@command(
    app,
    "explain",
    epilog="JSON results: artists (name, n_works, signature, heldout_precision, "
    "heldout_recall, train_precision, train_recall, distinguishing, closest_artist, "
    "shared_with_closest, signature_tags_also_common_for), mean_heldout_precision, "
    "mean_heldout_recall, tag_top1_accuracy, tag_top5_accuracy, n_distinct_signatures, "
    "n_artists, excluded, vocabulary_size, encoder, tag_source.",
)
def explain(
    db: DbOption = None,
    synthetic: SyntheticOption = False,
    difficulty: DifficultyOption = None,
    artist: Annotated[str | None, typer.Option(help="Show only this artist.")] = None,
    tags: Annotated[
        str, typer.Option(help="Tag source: auto, attributes, zero-shot, both.")
    ] = "auto",
    max_tags: Annotated[int, typer.Option(help="Longest signature.", min=1)] = 4,
    target_precision: Annotated[
        float, typer.Option(help="Stop growing a signature at this precision.", min=0.0, max=1.0)
    ] = 0.9,
    min_recall: Annotated[
        float,
        typer.Option(help="Share of the artist's works a signature must cover.", min=0.0, max=1.0),
    ] = 0.5,
    folds: Annotated[int, typer.Option(help="Cross-validation folds.", min=2)] = 5,
    *,
    run: Run,
) -> None:
    """TagMatch: the smallest tag combination that singles each artist out, held-out."""
    from iclr25.core.style_check.pipeline import run_explain
    from iclr25.core.style_check.tagmatch import TagMatchConfig

    config = TagMatchConfig(
        max_tags=max_tags, target_precision=target_precision, min_recall=min_recall, folds=folds
    )
    with reference_db(run, db, synthetic, difficulty) as (db_path, syn):
        with run.progress("TagMatch folds", total=folds) as advance, run.timer("explain_s"):
            results = run_explain(db_path, config, tags, run.seed, run.device.kind, artist, advance)
        for ex in results["excluded"]:
            run.warn(f"excluded artist {ex['name']} ({ex['n_works']} works): {ex['reason']}")
        write_csv(
            run.artifact_path("signatures.csv"),
            results["artists"],
            ["name", "signature", "heldout_precision", "heldout_recall", "closest_artist"],
        )
        finish(
            run,
            results,
            {"db": str(db_path), "tags": tags, **config.__dict__},
            _render_explain,
            syn,
        )


# -- check ----------------------------------------------------------------------------------
def _share(value) -> str:
    return "-" if value is None else f"{value:.0%}"


def _artist_rows(res) -> tuple[list[dict], list[str]]:
    """The per-artist table: by target set when images name their artist, else by share."""
    rows = [
        {
            "artist": a["name"],
            "images for": a["n_generated_for"],
            "attributed": a["n_attributed"],
            "share of all": _share(a["share_of_all"]),
            "set attributed": _share(a["attributed_share"]),
            "set top-1": _share(a["top1_share"]),
            "set vote": a["set_vote"] or "-",
            "at risk": "yes" if a["at_risk"] else "no",
        }
        for a in res["artists"]
    ]
    if res["n_targeted_artists"]:
        return rows, [c for c in rows[0] if c != "share of all"] if rows else []
    return rows, ["artist", "attributed", "share of all", "at risk"]


def _image_rows(res) -> list[dict]:
    """Per image: path below the common folder, top match, attribution, shared tags."""
    paths = [r["path"] for r in res["images"]]
    base = os.path.commonpath(paths) if len(paths) > 1 else str(Path(paths[0]).parent)
    return [
        {
            "image": os.path.relpath(r["path"], base),
            "top match": r["top_matches"][0]["artist"],
            "p": f"{r['top_matches'][0]['probability']:.2f}",
            "attr.": "yes" if r["attributed_to"] else "no",
            "typ. p": f"{r['typicality_p']:.3f}",
            "signature tags shared": "\n".join(r["explanation"]["matched"][:3]) or "-",
        }
        for r in res["images"]
    ]


def _render_check(console, res) -> None:
    console.print(res["disclaimer"], style="bold")
    rows, cols = _artist_rows(res)
    console.print(table(rows, cols, title="artists"))
    images = _image_rows(res)[:30]
    console.print(table(images, title=f"images (first {len(images)} of {res['n_images']})"))
    line = f"{_share(res['attributed_share'])} of the images attributed with confidence"
    if res["attribution_accuracy"] is not None:
        line += (
            f"; attribution accuracy {_share(res['attribution_accuracy'])} (top match = the "
            f"artist an image was made for); {res['n_at_risk']} of "
            f"{res['n_targeted_artists']} targeted styles at risk (>= "
            f"{res['risk_threshold']:.0%} of their set attributed to them)"
        )
    console.print(line)


def _check_artifacts(run: Run, results: dict, sheet_rows: int) -> None:
    if not run.wants_artifacts:
        return
    from iclr25 import atomic
    from iclr25.core.style_check.report import contact_sheet, html_report

    with run.timer("report_s"):
        contact_sheet(results["images"], sheet_rows).save(run.artifact_path("contact_sheet.png"))
        atomic.write_text(run.artifact_path("report.html"), html_report(results))
    rows = [
        {
            "path": r["path"],
            "made_for": r["made_for"],
            "top_match": r["top_matches"][0]["artist"],
            "probability": r["top_matches"][0]["probability"],
            "attributed_to": r["attributed_to"],
            "typicality_p": r["typicality_p"],
        }
        for r in results["images"]
    ]
    write_csv(run.artifact_path("attributions.csv"), rows, list(rows[0]))


@command(
    app,
    "check",
    epilog="JSON results: disclaimer, encoder, n_images, artists (name, n_generated_for, "
    "n_attributed, share_of_all, top1_share, attributed_share, set_vote, at_risk), "
    "attribution_accuracy, attributed_share, n_at_risk, style_at_risk_share, "
    "n_targeted_artists, unknown_made_for, images (path, made_for, top_matches, "
    "attributed_to, typicality_p, nearest_works, tags, explanation), skipped, tag_source, "
    "typicality_untestable. " + DISCLAIMER_EPILOG,
)
def check(
    generated: Annotated[
        Path | None,
        typer.Argument(help="Folder of generated images; <artist>/ subfolders name the target."),
    ] = None,
    db: DbOption = None,
    synthetic: SyntheticOption = False,
    difficulty: DifficultyOption = None,
    artist: Annotated[
        str | None, typer.Option(help="Every image was made for this artist.")
    ] = None,
    top_k: Annotated[int, typer.Option(help="Artists listed per image.", min=1)] = 3,
    min_probability: Annotated[
        float, typer.Option(help="Probability needed to attribute.", min=0.0, max=1.0)
    ] = 0.5,
    alpha: Annotated[
        float,
        typer.Option(help="Typicality p-value needed to attribute (0: off).", min=0.0, max=1.0),
    ] = 0.05,
    risk_threshold: Annotated[
        float, typer.Option(help="Attributed share that puts a style at risk.", min=0.0, max=1.0)
    ] = 0.5,
    nearest: Annotated[int, typer.Option(help="Nearest reference works per image.", min=1)] = 4,
    encoder: Annotated[
        str | None, typer.Option(help="hf:PATH when the DB's model folder moved (same weights).")
    ] = None,
    tags: Annotated[
        str, typer.Option(help="Tag source: auto, attributes, zero-shot, both.")
    ] = "auto",
    sheet_rows: Annotated[int, typer.Option(help="Rows of the PNG contact sheet.", min=1)] = 24,
    batch_size: BatchOption = 32,
    max_pixels: MaxPixelsOption = 89_478_485,
    *,
    run: Run,
) -> None:
    """Attribute generated images to reference artists; flag styles at risk."""
    from iclr25.core.style_check.check import CheckConfig
    from iclr25.core.style_check.pipeline import CheckRequest, run_check

    require(
        generated is not None or synthetic,
        "no GENERATED folder given",
        "pass the folder of generated images (or --synthetic)",
    )
    config = CheckConfig(
        top_k=top_k,
        min_probability=min_probability,
        alpha=alpha,
        risk_threshold=risk_threshold,
        nearest_works=nearest,
    )
    with reference_db(run, db, synthetic, difficulty) as (db_path, syn):
        folder = generated if generated is not None else syn["generated"]
        request = CheckRequest(folder, db_path, artist, encoder, tags, max_pixels, batch_size)
        with (
            run.progress("embedding generated images", total=None) as advance,
            run.timer("check_s"),
        ):
            results = run_check(request, config, run.seed, run.device.kind, advance)
        for name in results["unknown_made_for"]:
            run.warn(f"images were made for {name!r}, which is not in the DB")
        if not any(image["made_for"] for image in results["images"]):
            run.warn(
                "no image names the artist it was made for (no GENERATED/<artist>/ folders, "
                "no --artist): attribution accuracy and per-artist risk need that"
            )
        for skip in results["skipped"][:5]:
            run.warn(f"skipped {skip['path']}: {skip['reason']}")
        if results["typicality_untestable"] and alpha > 0:
            run.warn(
                f"{len(results['typicality_untestable'])} artist(s) have fewer than "
                f"{int(1 / alpha + 1e-9)} works: the typicality test (--alpha {alpha}) "
                "cannot reject for them (see typicality_untestable)"
            )
        _check_artifacts(run, results, sheet_rows)
        cfg = {
            "generated": str(folder),
            "db": str(db_path),
            "artist": artist,
            "tags": tags,
            **config.__dict__,
        }
        finish(run, results, cfg, _render_check, syn)


# -- make-synthetic -------------------------------------------------------------------------
def _render_synthetic(console, res) -> None:
    cols = ["name", "shape", "base_hue_deg", "angle_deg", "composition", "n_strokes"]
    console.print(table(res["artists"], cols, title=f"synthetic artists in {res['folder']}"))


@command(
    app,
    "make-synthetic",
    epilog="JSON results: folder, n_artists, per_artist, seed, works_seed, size, artists "
    "(the parameters of each artist). --seed fixes the artists; --works-seed draws new works "
    "by the same artists.",
)
def make_synthetic_cmd(
    folder: Annotated[
        Path, typer.Argument(help="New or empty folder to write <artist>/work-NNN files to.")
    ],
    artists: Annotated[int, typer.Option(help="Number of artists.", min=1, max=1000)] = 20,
    per_artist: Annotated[int, typer.Option(help="Works per artist.", min=1, max=10000)] = 30,
    works_seed: Annotated[
        int | None, typer.Option(help="Seed of the works (default: --seed); same artists.")
    ] = None,
    size: Annotated[int, typer.Option(help="Image side in pixels.", min=16, max=2048)] = 128,
    image_format: Annotated[str, typer.Option("--format", help="png, jpg or webp.")] = "png",
    first_artist: Annotated[int, typer.Option(help="Index of the first artist.", min=0)] = 0,
    difficulty: Annotated[
        str,
        typer.Option(
            help="'easy': all artists distinct; 'hard': pairs sharing palette and stroke shape, "
            "pulled together by closeness 1.0 (identical), 0.9, 0.8, 0.6, then again."
        ),
    ] = "easy",
    *,
    run: Run,
) -> None:
    """Write a procedural corpus of synthetic artists (for tests and demos)."""
    from iclr25.core.style_check.pipeline import make_synthetic
    from iclr25.core.style_check.synthetic import SyntheticConfig

    require(
        image_format in ("png", "jpg", "jpeg", "webp"),
        f"unknown format {image_format!r}",
        "use --format png, jpg or webp",
    )
    check_difficulty(difficulty)
    config = SyntheticConfig(
        n_artists=artists,
        per_artist=per_artist,
        seed=run.seed,
        works_seed=works_seed,
        size=size,
        image_format=image_format,
        first_artist=first_artist,
        difficulty=difficulty,
    )
    with run.progress("rendering", total=artists * per_artist) as advance, run.timer("render_s"):
        results = make_synthetic(folder, config, advance)
    run.finish(results, config.__dict__, _render_synthetic)


DEMO = (
    DemoStep(
        "style-check unique",
        ("style-check", "unique", "--synthetic"),
        lambda doc: (
            f"held-out accuracy {doc['results']['mean_heldout_accuracy']:.1%} on "
            f"{doc['results']['n_artists']} synthetic artists, {doc['results']['n_unique']} unique"
        ),
    ),
    DemoStep(
        "style-check check",
        ("style-check", "check", "--synthetic"),
        lambda doc: (
            f"attribution accuracy {doc['results']['attribution_accuracy']:.0%}, "
            f"{doc['results']['n_at_risk']}/{doc['results']['n_targeted_artists']} styles at risk"
        ),
    ),
)
