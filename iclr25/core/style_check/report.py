"""What a person looks at: a PNG contact sheet, an HTML report, an accuracy plot.

The contact sheet shows each generated image (left) beside its nearest reference works
with their artist and cosine; the HTML page holds the same rows with embedded thumbnails,
the per-artist table and the disclaimer. Both show at most ``max_rows`` images (the
JSON document always has all of them).
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from iclr25.core.style_check import DISCLAIMER
from iclr25.core.style_check.imageio import thumbnail

THUMB_PX = 112
CAPTION_PX = 34
MISSING_RGB = (200, 200, 200)  # placeholder of a file that cannot be read any more


def _caption(draw, x: int, y: int, lines: list[str]) -> None:
    for i, line in enumerate(lines[:3]):
        draw.text((x + 2, y + 2 + 11 * i), line[:19], fill=(20, 20, 20))


def spread(images: list[dict], max_rows: int) -> list[dict]:
    """Up to ``max_rows`` images, taking the artists' sets in turn (round robin)."""
    groups: dict[str, list[dict]] = {}
    for row in images:
        groups.setdefault(str(row["made_for"]), []).append(row)
    queues = list(groups.values())
    out: list[dict] = []
    while len(out) < max_rows and any(queues):
        for queue in queues:
            if queue and len(out) < max_rows:
                out.append(queue.pop(0))
    return out


def contact_sheet(images: list[dict], max_rows: int = 24):
    """An RGB PIL image: one row per generated image, nearest works to its right."""
    from PIL import Image, ImageDraw

    rows = spread(images, max_rows)
    cols = 1 + max((len(r["nearest_works"]) for r in rows), default=0)
    cell_h = THUMB_PX + CAPTION_PX
    sheet = Image.new(
        "RGB", (cols * (THUMB_PX + 6) + 6, max(1, len(rows)) * (cell_h + 6) + 6), "white"
    )
    draw = ImageDraw.Draw(sheet)
    for r, row in enumerate(rows):
        y = 6 + r * (cell_h + 6)
        cells = [(row["path"], _generated_caption(row))]
        cells += [
            (w["path"], [w["artist"], f"cos {w['cosine']:.3f}"]) for w in row["nearest_works"]
        ]
        for c, (path, caption) in enumerate(cells):
            x = 6 + c * (THUMB_PX + 6)
            thumb = thumbnail(Path(path), THUMB_PX)
            if thumb is None:  # moved, deleted or unreadable since indexing
                draw.rectangle([x, y, x + THUMB_PX - 1, y + THUMB_PX - 1], fill=MISSING_RGB)
                draw.text((x + 4, y + THUMB_PX // 2 - 6), "file missing", fill=(90, 90, 90))
            else:
                left, top = (THUMB_PX - thumb.width) // 2, (THUMB_PX - thumb.height) // 2
                sheet.paste(thumb, (x + left, y + top))
            if c == 0:
                draw.rectangle(
                    [x - 2, y - 2, x + THUMB_PX + 1, y + cell_h - 1], outline=(200, 40, 40)
                )
            _caption(draw, x, y + THUMB_PX, caption)
    return sheet


def _generated_caption(row: dict) -> list[str]:
    top = row["top_matches"][0] if row["top_matches"] else {"artist": "-", "probability": 0.0}
    return [f"for {row['made_for'] or '?'}", f"top {top['artist']}", f"p {top['probability']:.2f}"]


def _img_tag(path: str, side: int = 128) -> str:
    """The image as an embedded JPEG thumbnail (no file path reaches the page's markup
    except its escaped name)."""
    name = html.escape(Path(path).name)
    thumb = thumbnail(Path(path), side)
    if thumb is None:
        return f'<div class="missing" title="{name}">file missing</div>'
    buffer = io.BytesIO()
    thumb.save(buffer, format="JPEG", quality=85)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img src="data:image/jpeg;base64,{data}" alt="{name}">'


def _summary_table(results: dict) -> str:
    columns = (
        "artist",
        "images made for",
        "held-out accuracy",
        "unique",
        "set classified as",
        "set attributed",
        "own images attributed",
        "verdict",
    )
    head = "<tr>" + "".join(f"<th>{c}</th>" for c in columns) + "</tr>"
    body = "".join(
        f"<tr><td>{html.escape(a['name'])}</td><td>{a['n_generated_for']}</td>"
        f"<td>{_fmt(a['heldout_accuracy'])}</td><td>{_yes(a['unique'])}</td>"
        f"<td>{html.escape(str(a['set_attribution'].get('artist', '-')))}</td>"
        f"<td>{_yes(a['set_attribution']['attributed'])}</td><td>{_fmt(a['image_share'])}</td>"
        f"<td title='{html.escape(a['verdict_text'], quote=True)}'>"
        f"<b>{html.escape(a['verdict'])}</b><br><small>{html.escape(a['verdict_text'])}</small>"
        "</td></tr>"
        for a in results["artists"]
    )
    return f"<table>{head}{body}</table>"


def _yes(value) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _image_row(row: dict) -> str:
    tops = "<br>".join(
        f"{html.escape(t['artist'])} {t['probability']:.2f}" for t in row["top_matches"]
    )
    near = "".join(
        f"<figure>{_img_tag(w['path'], 96)}<figcaption>{html.escape(w['artist'])}<br>"
        f"<small>{html.escape(Path(w['path']).name)}</small><br>"
        f"cos {w['cosine']:.3f}</figcaption></figure>"
        for w in row["nearest_works"]
    )
    expl = row.get("explanation") or {}
    shared = ", ".join(html.escape(t) for t in expl.get("matched", [])) or "-"
    return (
        f"<tr><td>{_img_tag(row['path'])}<br><small>{html.escape(Path(row['path']).name)}</small></td>"
        f"<td>{html.escape(str(row['made_for'] or '-'))}</td><td>{tops}</td>"
        f"<td>{html.escape(str(row['attributed_to'] or 'none'))}<br>typicality p "
        f"{row['typicality_p']:.3f}</td><td>{shared}</td><td class='near'>{near}</td></tr>"
    )


def html_report(results: dict, max_rows: int = 200) -> str:
    """A self-contained page: disclaimer, artist table, up to ``max_rows`` images (the
    artists' sets taken in turn, as on the contact sheet) beside their nearest works."""
    rows = spread(results["images"], max_rows)
    more = len(results["images"]) - len(rows)
    acc = results.get("attribution_accuracy")
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>style-check report</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px;vertical-align:top}}
figure{{display:inline-block;margin:2px}}
.missing{{width:96px;height:96px;background:#ccc;color:#555;font-size:small}}
.note{{background:#fff4d6;padding:0.8em;border:1px solid #e0c060}}</style></head><body>
<h1>style-check: generated images against the reference corpus</h1>
<p class="note"><b>{html.escape(DISCLAIMER)}</b></p>
<p>{len(results["images"])} images; attribution accuracy {_fmt(acc)};
artists at risk (a unique style whose set is attributed to it): {results["n_at_risk"]} of
{results["n_targeted_artists"]}; sets attributed to artists without a unique style:
{results["n_attributed_not_unique"]}; encoder {html.escape(results["encoder"])}.</p>
<h2>Artists</h2>{_summary_table(results)}
<h2>Images</h2><table><tr><th>generated image</th><th>made for</th><th>top matches</th>
<th>attributed</th><th>signature tags shared</th><th>nearest reference works</th></tr>
{"".join(_image_row(r) for r in rows)}</table>
{f"<p>{more} more images are in result.json.</p>" if more > 0 else ""}
</body></html>
"""


def plot_uniqueness(artists: list[dict], threshold: float):
    """Bar chart of held-out accuracy per artist with Wilson intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(artists, key=lambda r: r["heldout_accuracy"])
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.22 * len(rows) + 1)))
    acc = [r["heldout_accuracy"] for r in rows]
    err = [
        [a - r["ci_low"] for a, r in zip(acc, rows, strict=True)],
        [r["ci_high"] - a for a, r in zip(acc, rows, strict=True)],
    ]
    colours = ["tab:blue" if r["unique"] else "tab:grey" for r in rows]
    ax.barh(range(len(rows)), acc, xerr=err, color=colours, capsize=2)
    ax.axvline(threshold, color="tab:red", linestyle="--", label=f"threshold {threshold:g}")
    ax.set_yticks(range(len(rows)), [r["name"] for r in rows], fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("held-out accuracy (95% Wilson interval)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig
