"""`iclr25 style-check`: which artists have a recognisable style, and which generated
images copy it (ArtSavant: DeepMatch + TagMatch, Moayeri et al., ICLR 2025).

Thin layer: options -> config dataclass -> one function of
``iclr25.core.style_check.pipeline`` -> ``run.finish``. Heavy imports happen inside the
command bodies so that ``iclr25 --help`` stays instant.
"""

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands import style_check_study as study_cmd
from iclr25.commands import style_check_views as views
from iclr25.demo import DemoStep
from iclr25.errors import EXIT_INTERRUPTED, IclrError
from iclr25.parallel_options import SchedulerOpt, WorkersOpt, execution
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
TagsOption = Annotated[
    str,
    typer.Option(
        help="Tag source: auto (zero-shot too with a CLIP-like DB), attributes, zero-shot, both."
    ),
]
FoldsOption = Annotated[
    int,
    typer.Option(help="Stratified cross-validation folds (artists need this many works).", min=2),
]
BatchOption = Annotated[
    int, typer.Option(help="Images decoded and embedded per batch.", min=1, max=4096)
]
ThresholdOption = Annotated[
    float, typer.Option(help="Unique when held-out accuracy >= this.", min=0.0, max=1.0)
]
DISCLAIMER_EPILOG = "A match measures visual resemblance, not legal infringement."
SYNTHETIC_EPILOG = (
    " With --synthetic also synthetic (kept, artists, works_per_artist, generated_per_artist, "
    "difficulty)."
)


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


def warn_one_encoder(run: Run, by_encoder: dict) -> None:
    if len(by_encoder) < 2:
        run.warn(
            "this DB has no second encoder (made with --no-ssl or an older iclr25): results "
            "under the DB's encoder only; index into a new --db to add the SSL-CNN"
        )


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


def warn_skipped(run: Run, skipped: list[dict], shown: int = 5) -> None:
    for skip in skipped[:shown]:
        run.warn(f"skipped {skip['path']}: {skip['reason']}")
    if len(skipped) > shown:
        run.warn(f"{len(skipped)} files skipped in all (see skipped in --json)")


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


# -- index ----------------------------------------------------------------------------------
@command(
    app,
    "index",
    epilog="JSON results: db, encoder, second_encoder, listed, embedded_new, embedded_changed, "
    "unchanged, relabelled, removed, skipped (path, reason), empty_artists, n_works, "
    "n_artists, works_per_artist. Exit 2 when no image could be read (the skips are listed).",
)
def index(
    refs: Annotated[
        Path, typer.Argument(help="Folder of <artist>/<image> files, or a CSV (path, artist).")
    ],
    db: Annotated[Path, typer.Option("--db", help="DB file to create or update.")],
    encoder: Annotated[
        str, typer.Option(help="'stats' (style statistics, no weights) or 'hf:PATH' (local model).")
    ] = "stats",
    ssl: Annotated[
        bool | None,
        typer.Option(
            "--ssl/--no-ssl",
            help="Also train the small self-supervised CNN on this corpus and store its "
            "embeddings (default: yes for a new DB; an existing DB keeps what it has).",
        ),
    ] = None,
    batch_size: BatchOption = 32,
    max_pixels: MaxPixelsOption = 89_478_485,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    *,
    run: Run,
) -> None:
    """Embed a reference corpus into DB; only new or changed files are embedded."""
    from iclr25.core.style_check.index import IndexConfig
    from iclr25.core.style_check.pipeline import run_index

    config = IndexConfig(
        encoder=encoder, batch_size=batch_size, max_pixels=max_pixels, ssl=ssl, ssl_seed=run.seed
    )
    exe = execution(workers, scheduler, no_cache=True)  # the DB is the resume store
    try:
        with run.progress("embedding", total=None) as advance, run.timer("index_s"):
            results = run_index(refs, db, config, run.device.kind, advance, exe)
    except KeyboardInterrupt:
        raise IndexInterrupted(
            "interrupted", "the batches embedded so far are kept in the DB; run index again"
        ) from None
    run.environment_extra["execution"] = {"backend": exe.backend}
    warn_skipped(run, results["skipped"])
    for name in results["empty_artists"]:
        run.warn(f"artist folder {name!r} has no images")
    warn_few_works(run, results["works_per_artist"])
    cfg = {"refs": str(refs), "db": str(db), **config.__dict__, "workers": workers}
    run.finish(results, cfg, views.render_index)


def warn_few_works(run: Run, works_per_artist: dict[str, int], folds: int = 5) -> None:
    """Artists below the default folds: unique and check will leave them out."""
    few = {name: n for name, n in works_per_artist.items() if n < folds}
    for name, n in list(few.items())[:5]:
        run.warn(
            f"artist {name!r} has {n} work{'s' if n != 1 else ''}, fewer than the {folds} "
            "that unique and check need (--folds): add works or it is left out"
        )
    if len(few) > 5:
        run.warn(f"{len(few)} artists have fewer than {folds} works")


# -- unique ---------------------------------------------------------------------------------
@command(
    app,
    "unique",
    epilog="JSON results: artists (name, n_works, heldout_accuracy, ci_low, ci_high, "
    "precision, other_classifier_accuracy, set_accuracy, unique, confused_with, "
    "confused_share, by_encoder, encoders_agree), mean_heldout_accuracy, overall_accuracy, "
    "top5_accuracy, linear_accuracy, knn_accuracy, mean_set_accuracy, n_artists, n_unique, "
    "unique_share, excluded, n_works, encoder, threshold, classifier, folds, by_encoder, "
    "n_encoders_agree." + SYNTHETIC_EPILOG,
)
def unique(
    db: DbOption = None,
    synthetic: SyntheticOption = False,
    difficulty: DifficultyOption = None,
    folds: FoldsOption = 5,
    threshold: ThresholdOption = 0.8,
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
        with run.progress("cross-validation", total=None) as advance, run.timer("unique_s"):
            results = run_unique(db_path, config, run.seed, run.device.kind, advance)
        warn_one_encoder(run, results["by_encoder"])
        for ex in results["excluded"]:
            run.warn(f"excluded artist {ex['name']} ({ex['n_works']} works): {ex['reason']}")
        if run.wants_artifacts:
            from iclr25.core.style_check.report import plot_uniqueness

            run.save_plot(plot_uniqueness(results["artists"], threshold), "heldout_accuracy.png")
            views.write_csv(
                run.artifact_path("artists.csv"), results["artists"], list(results["artists"][0])
            )
        finish(run, results, {"db": str(db_path), **config.__dict__}, views.render_unique, syn)


# -- explain --------------------------------------------------------------------------------
@command(
    app,
    "explain",
    epilog="JSON results: artists (name, n_works, signature, heldout_precision, "
    "heldout_recall, train_precision, train_recall, distinguishing, closest_artist, "
    "shared_with_closest, signature_tags_also_common_for), mean_heldout_precision, "
    "mean_heldout_recall, tag_top1_accuracy, tag_top5_accuracy, n_distinct_signatures, "
    "n_artists, excluded, vocabulary_size, encoder, tag_source." + SYNTHETIC_EPILOG,
)
def explain(
    db: DbOption = None,
    synthetic: SyntheticOption = False,
    difficulty: DifficultyOption = None,
    artist: Annotated[str | None, typer.Option(help="Show only this artist.")] = None,
    tags: TagsOption = "auto",
    max_tags: Annotated[int, typer.Option(help="Longest signature.", min=1)] = 4,
    target_precision: Annotated[
        float, typer.Option(help="Stop growing a signature at this precision.", min=0.0, max=1.0)
    ] = 0.9,
    min_recall: Annotated[
        float,
        typer.Option(help="Share of the artist's works a signature must cover.", min=0.0, max=1.0),
    ] = 0.5,
    folds: FoldsOption = 5,
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
        views.write_csv(
            run.artifact_path("signatures.csv"),
            results["artists"],
            ["name", "signature", "heldout_precision", "heldout_recall", "closest_artist"],
        )
        finish(
            run,
            results,
            {"db": str(db_path), "tags": tags, **config.__dict__},
            views.render_explain,
            syn,
        )


# -- check ----------------------------------------------------------------------------------
def _warn_check(run: Run, results: dict, alpha: float) -> None:
    for name in results["unknown_made_for"]:
        run.warn(f"images were made for {name!r}, which is not in the DB (they are ignored)")
    if results["mode"] == "verification":
        row = results["artists"][0]
        run.warn(
            f"the DB has one artist with enough works ({row['name']}): answered as a "
            "verification against a background corpus of synthetic artists"
        )
    elif not results["artists"]:
        run.warn(
            "no image names the artist it was made for (no GENERATED/<artist>/ folders, "
            "no --artist): set attribution, per-artist verdicts and attribution accuracy "
            "need that"
        )
    warn_skipped(run, results["skipped"])
    excluded = next(iter(results.get("uniqueness", {}).values()), {}).get("excluded", [])
    for ex in excluded:
        run.warn(
            f"artist {ex['name']} ({ex['n_works']} works): {ex['reason']}; its verdict is "
            "'not evaluated'"
        )
    if results.get("typicality_untestable") and alpha > 0:
        run.warn(
            f"{len(results['typicality_untestable'])} artist(s) have fewer than "
            f"{int(1 / alpha + 1e-9)} works: the typicality test (--alpha {alpha}) "
            "cannot reject for them (see typicality_untestable)"
        )
    for row in results["artists"]:
        if row["verdict"] == "no unique style" and row["set_attribution"]["attributed"]:
            run.warn(
                f"{row['name']}: the set is attributed to this artist, but the style is not "
                "unique in the references — no basis for a style claim (see verdict_text)"
            )
    if len(results.get("encoders", [])) < 2:
        warn_one_encoder(run, {"": None})


def _check_artifacts(run: Run, results: dict, sheet_rows: int) -> None:
    if not run.wants_artifacts or results["mode"] != "classification":
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
    views.write_csv(run.artifact_path("attributions.csv"), rows, list(rows[0]))


@command(
    app,
    "check",
    epilog="JSON results: disclaimer, encoder, mode (classification, or verification for a "
    "one-artist DB), n_images, artists (name, n_generated_for, unique, heldout_accuracy, "
    "set_attribution, image_share, top1_share, n_attributed, tag_signature_overlap, verdict "
    "(at risk | not recognised | no unique style | not evaluated), verdict_text, at_risk, "
    "by_encoder, encoders_agree), n_targeted_artists, n_at_risk, style_at_risk_share, "
    "n_sets_attributed, n_unique_targeted, n_attributed_not_unique, verdicts, "
    "attribution_accuracy, attributed_share, share_of_all, encoders, uniqueness, images "
    "(path, made_for, top_matches, attributed_to, typicality_p, nearest_works, tags, "
    "explanation), tag_source, typicality_untestable, unknown_made_for, skipped."
    + SYNTHETIC_EPILOG
    + " "
    + DISCLAIMER_EPILOG,
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
    folds: FoldsOption = 5,
    threshold: ThresholdOption = 0.8,
    nearest: Annotated[int, typer.Option(help="Nearest reference works per image.", min=1)] = 4,
    encoder: Annotated[
        str | None, typer.Option(help="hf:PATH when the DB's model folder moved (same weights).")
    ] = None,
    tags: TagsOption = "auto",
    sheet_rows: Annotated[int, typer.Option(help="Rows of the PNG contact sheet.", min=1)] = 24,
    batch_size: BatchOption = 32,
    max_pixels: MaxPixelsOption = 89_478_485,
    *,
    run: Run,
) -> None:
    """Judge generated sets: at risk only for a unique style whose set is attributed to it."""
    from iclr25.core.style_check.check import CheckConfig
    from iclr25.core.style_check.checking import CheckRequest, run_check
    from iclr25.core.style_check.deepmatch import DeepMatchConfig

    require(
        generated is not None or synthetic,
        "no GENERATED folder given",
        "pass the folder of generated images (or --synthetic)",
    )
    config = CheckConfig(
        top_k=top_k, min_probability=min_probability, alpha=alpha, nearest_works=nearest
    )
    deepmatch = DeepMatchConfig(folds=folds, threshold=threshold)
    with reference_db(run, db, synthetic, difficulty) as (db_path, syn):
        folder = generated if generated is not None else syn["generated"]
        request = CheckRequest(folder, db_path, artist, encoder, tags, max_pixels, batch_size)
        with (
            run.progress("embedding generated images", total=None) as advance,
            run.timer("check_s"),
        ):
            results = run_check(request, config, deepmatch, run.seed, run.device.kind, advance)
        _warn_check(run, results, alpha)
        _check_artifacts(run, results, sheet_rows)
        cfg = {
            "generated": str(folder),
            "db": str(db_path),
            "artist": artist,
            "tags": tags,
            **config.__dict__,
            **{f"deepmatch_{k}": v for k, v in deepmatch.__dict__.items()},
        }
        finish(run, results, cfg, views.render_check, syn)


command(
    app,
    "study",
    epilog="JSON results: hypothesis, pass_conditions, chance, conditions (heldout, "
    "other_artists, conditional, unconditional -> encoder -> set_attribution_rate, "
    "set_classified_rate, image_top1, image_attributed, each mean/low/high/n over seeds), "
    "uniqueness, n_unique, at_risk_not_unique, attributed_not_unique, verdicts (checks, "
    "difference_vs_unconditional, controls_held, effect_appeared), effect_appeared, "
    "statement, headline, per_seed, config.",
)(study_cmd.study)


# -- make-synthetic -------------------------------------------------------------------------
@command(
    app,
    "make-synthetic",
    epilog="JSON results: folder, n_artists, per_artist, seed, works_seed, size, difficulty, "
    "artists (the parameters of each artist; follows and closeness for the second of a hard "
    "pair). --seed fixes the artists; --works-seed draws new works by the same artists.",
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
    run.finish(results, config.__dict__, views.render_synthetic)


DEMO = (
    DemoStep(
        "style-check unique",
        ("style-check", "unique", "--synthetic", "--difficulty", "hard"),
        lambda doc: (
            f"held-out accuracy {doc['results']['mean_heldout_accuracy']:.1%} on "
            f"{doc['results']['n_artists']} hard synthetic artists (pairs sharing palette and "
            f"strokes), {doc['results']['n_unique']} unique"
        ),
    ),
    DemoStep(
        "style-check check",
        ("style-check", "check", "--synthetic", "--difficulty", "hard"),
        lambda doc: (
            f"{doc['results']['n_at_risk']}/{doc['results']['n_targeted_artists']} styles at "
            f"risk; {doc['results']['n_attributed_not_unique']} set(s) attributed to artists "
            "without a unique style, not flagged"
        ),
    ),
    DemoStep(
        "style-check study",
        ("style-check", "study", "--quick"),
        lambda doc: doc["results"]["headline"],
    ),
)
