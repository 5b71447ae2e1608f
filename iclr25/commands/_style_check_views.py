"""Tables and CSV files of ``iclr25 style-check`` (rich is imported by the caller).

Every renderer takes (rich Console, results) and prints tables that fit 100 columns:
cells wrap instead of being cut, numbers carry their unit (% for shares).
"""

import csv
import os
from pathlib import Path

from iclr25.output import format_value, rows_table


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


def render_index(console, res) -> None:
    from iclr25.output import render_mapping

    summary = {k: v for k, v in res.items() if k not in ("skipped", "works_per_artist")}
    summary["skipped"] = len(res["skipped"])
    render_mapping(console, summary, title="style-check index")
    if res["skipped"]:
        console.print(table(res["skipped"][:20], ["path", "reason"], title="skipped files"))


def render_unique(console, res) -> None:
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


def render_explain(console, res) -> None:
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


def render_check(console, res) -> None:
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


def render_synthetic(console, res) -> None:
    cols = ["name", "shape", "base_hue_deg", "angle_deg", "composition", "n_strokes"]
    console.print(table(res["artists"], cols, title=f"synthetic artists in {res['folder']}"))
