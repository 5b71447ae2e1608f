"""Tables and CSV files of ``iclr25 style-check`` (rich is imported by the caller).

Every renderer takes (rich Console, results) and prints tables that fit 100 columns:
cells wrap instead of being cut, numbers carry their unit (% for shares).
"""

import csv
import os
from pathlib import Path

from iclr25.output import rows_table


def table(rows: list[dict], columns: list[str] | None = None, title: str | None = None):
    """``rows_table`` whose cells wrap instead of being cut with an ellipsis."""
    result = rows_table(rows, columns, title=title)
    for column in result.columns:
        column.overflow = "fold"
    return result


def share(value) -> str:
    """A share in [0, 1] as a percentage; None (not measured) as '-'."""
    return "-" if value is None or value != value else f"{value:.0%}"


def tags_cell(tags: list[str], most: int = 4) -> str:
    """Tags one per line, 'attribute: level' so a narrow cell wraps at the colon."""
    return "\n".join(t.replace(":", ": ", 1) for t in tags[:most]) or "-"


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
            "acc.": share(r["heldout_accuracy"]),
            "95% CI": f"{r['ci_low']:.0%}-{r['ci_high']:.0%}",
            "prec.": share(r["precision"]),
            "set acc.": share(r["set_accuracy"]),
            "unique": "yes" if r["unique"] else "no",
            "confused with": r["confused_with"] or "-",
        }
        for r in res["artists"]
    ]
    console.print(table(rows, title=f"DeepMatch ({res['classifier']} probe), held-out"))
    console.print(
        f"mean held-out accuracy {share(res['mean_heldout_accuracy'])} (k-NN "
        f"{share(res['knn_accuracy'])}, linear {share(res['linear_accuracy'])} over works); "
        f"{res['n_unique']} of {res['n_artists']} artists unique at threshold "
        f"{res['threshold']:.0%}"
    )
    for ex in res["excluded"]:
        console.print(f"excluded {ex['name']}: {ex['n_works']} works, {ex['reason']}")


def render_explain(console, res) -> None:
    rows = [
        {
            "artist": r["name"],
            "signature": tags_cell(r["signature"]),
            "prec.": share(r["heldout_precision"]),
            "recall": share(r["heldout_recall"]),
            "closest artist": r["closest_artist"],
            "shared with it": tags_cell(r["shared_with_closest"]),
        }
        for r in res["artists"]
    ]
    console.print(table(rows, title=f"TagMatch signatures ({res['tag_source']} tags), held-out"))
    console.print(
        f"tag top-1 accuracy {share(res['tag_top1_accuracy'])}, top-5 "
        f"{share(res['tag_top5_accuracy'])}; {res['n_distinct_signatures']} distinct "
        f"signatures for {res['n_artists']} artists"
    )


def _artist_rows(res) -> tuple[list[dict], list[str]]:
    """The per-artist table: by target set when images name their artist, else by share."""
    rows = [
        {
            "artist": a["name"],
            "images": a["n_generated_for"],
            "attr.": a["n_attributed"],
            "share of all": share(a["share_of_all"]),
            "set attr.": share(a["attributed_share"]),
            "set top-1": share(a["top1_share"]),
            "set vote": a["set_vote"] or "-",
            "at risk": "yes" if a["at_risk"] else "no",
        }
        for a in res["artists"]
    ]
    if res["n_targeted_artists"]:
        return rows, [c for c in rows[0] if c != "share of all"] if rows else []
    return rows, ["artist", "attr.", "share of all", "at risk"]


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
            "signature tags shared": tags_cell(r["explanation"]["matched"], 3),
        }
        for r in res["images"]
    ]


def render_check(console, res) -> None:
    console.print(res["disclaimer"], style="bold")
    rows, cols = _artist_rows(res)
    console.print(table(rows, cols, title="artists"))
    images = _image_rows(res)[:30]
    console.print(table(images, title=f"images (first {len(images)} of {res['n_images']})"))
    line = f"{share(res['attributed_share'])} of the images attributed with confidence"
    if res["attribution_accuracy"] is not None:
        line += (
            f"; attribution accuracy {share(res['attribution_accuracy'])} (top match = the "
            f"artist an image was made for); {res['n_at_risk']} of "
            f"{res['n_targeted_artists']} targeted styles at risk (>= "
            f"{res['risk_threshold']:.0%} of their set attributed to them)"
        )
    console.print(line)


def render_synthetic(console, res) -> None:
    cols = ["name", "shape", "base_hue_deg", "angle_deg", "composition", "n_strokes"]
    console.print(table(res["artists"], cols, title=f"synthetic artists in {res['folder']}"))
