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


def _set_cell(a: dict) -> str:
    """How the artist's set was classified (and whether it counts as attributed)."""
    s = a["set_attribution"]
    if "artist" not in s:  # verification: share accepted
        return f"{share(s['accepted_share'])} accepted"
    mark = "attributed" if s["attributed"] else "not attrib."
    return f"{s['artist']}\n({mark})"


def _artist_rows(res) -> list[dict]:
    """Per artist with a generated set: uniqueness, set attribution, evidence, verdict.
    'img attr.' counts only the artist's own images attributed to them."""
    rows = []
    for a in res["artists"]:
        tags = a.get("tag_signature_overlap")
        rows.append(
            {
                "artist": a["name"],
                "images": a["n_generated_for"],
                "held-out acc.": "-"
                if a["heldout_accuracy"] is None
                else share(a["heldout_accuracy"]),
                "set classified as": _set_cell(a),
                "img attr.": f"{a['n_attributed']}/{a['n_generated_for']}"
                if "n_attributed" in a
                else share(a["image_share"]),
                "tags": "-"
                if tags is None
                else f"{share(tags['set_match_share'])} vs {share(tags['other_works_share'])}",
                "verdict": a["verdict"],
            }
        )
    return rows


def _encoder_lines(res) -> list[str]:
    """The second encoder's verdicts where they differ from the DB encoder's."""
    lines = []
    for a in res["artists"]:
        if a.get("encoders_agree", True):
            continue
        views = ", ".join(
            f"{name}: {'at risk' if v['at_risk'] else 'not at risk'}"
            for name, v in a["by_encoder"].items()
        )
        lines.append(f"encoders disagree on {a['name']} ({views})")
    return lines


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
    if res["artists"]:
        title = (
            "artists (verification against a background corpus)"
            if res["mode"] == ("verification")
            else "artists with a generated set"
        )
        console.print(table(_artist_rows(res), title=title))
        for a in res["artists"]:
            console.print(f"{a['name']}: {a['verdict_text']}", markup=False)
    elif res.get("share_of_all"):
        rows = [{"artist": k, "share of all": share(v)} for k, v in res["share_of_all"].items()]
        console.print(table(rows, title="share of all images attributed to each artist"))
    if res["mode"] == "classification":
        images = _image_rows(res)[:30]
        console.print(table(images, title=f"images (first {len(images)} of {res['n_images']})"))
    for line in _encoder_lines(res):
        console.print(line, markup=False)
    console.print(_check_summary(res))


def _check_summary(res) -> str:
    if res["mode"] == "verification":
        return f"{res['n_at_risk']} of 1 artist at risk (verification)"
    line = f"{share(res['attributed_share'])} of the images attributed with confidence"
    if res["attribution_accuracy"] is not None:
        line += (
            f"; attribution accuracy {share(res['attribution_accuracy'])} (top match = the "
            f"artist an image was made for); {res['n_at_risk']} of "
            f"{res['n_targeted_artists']} targeted styles at risk (unique, and the set "
            f"attributed to them); {res['n_attributed_not_unique']} set(s) attributed to an "
            "artist without a unique style"
        )
    return line


def render_study(console, res) -> None:
    from iclr25.core.style_check.study import CONDITIONS

    console.print(f"hypothesis: {res['hypothesis']}")
    rows = []
    for cond in CONDITIONS:
        for enc, cell in res["conditions"][cond].items():
            r = cell["set_attribution_rate"]
            rows.append(
                {
                    "condition": cond,
                    "encoder": enc,
                    "set attribution": _interval(r),
                    "set classified": _interval(cell["set_classified_rate"]),
                    "image top-1": _interval(cell["image_top1"]),
                }
            )
    console.print(table(rows, title=f"set attribution over seeds (chance {res['chance']:.2f})"))
    for enc, v in res["verdicts"].items():
        marks = ", ".join(f"{k} {'met' if ok else 'NOT met'}" for k, ok in v["checks"].items())
        console.print(f"{enc}: {marks}")
    for key, text in res["pass_conditions"].items():
        console.print(f"  {key}: {text}")
    console.print(res["statement"], style="bold")


def _interval(cell: dict) -> str:
    if cell["low"] is None:
        return f"{cell['mean']:.2f}"
    return f"{cell['mean']:.2f} [{cell['low']:.2f}, {cell['high']:.2f}]"


def render_synthetic(console, res) -> None:
    cols = ["name", "shape", "base_hue_deg", "angle_deg", "composition", "n_strokes"]
    console.print(table(res["artists"], cols, title=f"synthetic artists in {res['folder']}"))
