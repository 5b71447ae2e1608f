"""Report artefacts: escaping, the disclaimer, contact-sheet geometry and content, the
nearest works in order, round robin."""

from __future__ import annotations

from iclr25.core.style_check import DISCLAIMER
from iclr25.core.style_check.report import (
    MISSING_RGB,
    THUMB_PX,
    contact_sheet,
    html_report,
    spread,
)


def _image(path: str, made_for: str, n_near: int = 2) -> dict:
    return {
        "path": path,
        "made_for": made_for,
        "top_matches": [{"artist": made_for, "probability": 0.9}],
        "attributed_to": None,
        "typicality_p": 0.2,
        "nearest_works": [
            {"path": f"/nowhere/{i}.png", "artist": "b", "cosine": 0.5} for i in range(n_near)
        ],
        "explanation": {"matched": ["brightness:dark"]},
    }


def test_html_escapes_names_and_states_the_disclaimer():
    evil = "<script>alert(1)</script>"
    results = {
        "images": [_image("/nowhere/x.png", evil)],
        "artists": [
            {
                "name": evil,
                "n_generated_for": 1,
                "heldout_accuracy": 0.5,
                "unique": False,
                "set_attribution": {"artist": evil, "attributed": True},
                "image_share": 1.0,
                "verdict": "no unique style",
                "verdict_text": f"no unique style: no basis for a style claim ({evil})",
                "at_risk": False,
            }
        ],
        "attribution_accuracy": 1.0,
        "n_at_risk": 0,
        "n_targeted_artists": 1,
        "n_attributed_not_unique": 1,
        "encoder": "stats",
    }
    page = html_report(results)
    assert evil not in page and "&lt;script&gt;" in page
    assert "no basis for a style claim" in page
    assert DISCLAIMER in page.replace("&#x27;", "'")


def test_contact_sheet_geometry_and_placeholders():
    images = [_image(f"/nowhere/{i}.png", f"artist{i % 3}", n_near=3) for i in range(7)]
    sheet = contact_sheet(images, max_rows=5)
    # 4 columns (image + 3 nearest) and 5 rows of (thumb + caption), 6 px gutters
    assert sheet.size == (4 * (THUMB_PX + 6) + 6, 5 * (THUMB_PX + 34 + 6) + 6)


def test_spread_takes_artists_in_turn():
    images = [{"made_for": a, "i": i} for i, a in enumerate("aaabbc")]
    assert [r["i"] for r in spread(images, 5)] == [0, 3, 5, 1, 4]


def _solid(path, colour) -> str:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (60, 40), colour).save(path)
    return str(path)


def test_contact_sheet_shows_each_image_beside_its_nearest_works(tmp_path):
    """Solid-colour files: the pixel at each cell's centre is the colour of that file."""
    colours = {"gen": (200, 30, 30), "near0": (30, 200, 30), "near1": (30, 30, 200)}
    paths = {k: _solid(tmp_path / f"{k}.png", c) for k, c in colours.items()}
    row = _image(paths["gen"], "a", n_near=0)
    row["nearest_works"] = [
        {"path": paths["near0"], "artist": "b", "cosine": 0.9},
        {"path": paths["near1"], "artist": "c", "cosine": 0.8},
        {"path": str(tmp_path / "gone.png"), "artist": "d", "cosine": 0.7},
    ]
    sheet = contact_sheet([row], max_rows=1)
    centre_y = 6 + THUMB_PX // 2
    cells = [sheet.getpixel((6 + c * (THUMB_PX + 6) + THUMB_PX // 2, centre_y)) for c in range(4)]
    expected = [colours["gen"], colours["near0"], colours["near1"]]
    for got, want in zip(cells[:3], expected, strict=True):
        assert max(abs(g - w) for g, w in zip(got, want, strict=True)) <= 2, (got, want)
    assert cells[3] == MISSING_RGB  # a reference file deleted since indexing


def test_html_shows_nearest_works_in_order_and_escapes_file_names(tmp_path):
    import base64
    import io
    import re

    from PIL import Image

    evil = '"><img src=x onerror=alert(1)>&.png'  # a legal file name on Linux and macOS
    gen = _solid(tmp_path / "gen" / evil, (200, 30, 30))
    near = [_solid(tmp_path / f"ref{i}.png", (30, 30 + 80 * i, 200)) for i in range(2)]
    row = _image(gen, "a<b>", n_near=0)
    row["nearest_works"] = [
        {"path": p, "artist": f"artist{i}", "cosine": 0.9 - i / 10} for i, p in enumerate(near)
    ]
    results = {
        "images": [row],
        "artists": [],
        "attribution_accuracy": None,
        "n_at_risk": 0,
        "n_targeted_artists": 0,
        "n_attributed_not_unique": 0,
        "encoder": "stats",
    }
    page = html_report(results)
    assert "<img src=x" not in page and "onerror=alert(1)>" not in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&amp;.png" in page
    assert "a&lt;b&gt;" in page and str(tmp_path) not in page  # no local path leaks
    # the embedded thumbnails: generated image first, then the nearest works in order
    data = re.findall(r'src="data:image/jpeg;base64,([^"]+)"', page)
    assert len(data) == 3
    pixels = [Image.open(io.BytesIO(base64.b64decode(d))).getpixel((10, 10)) for d in data]
    for got, want in zip(pixels, [(200, 30, 30), (30, 30, 200), (30, 110, 200)], strict=True):
        assert max(abs(g - w) for g, w in zip(got, want, strict=True)) <= 6, (got, want)
    assert page.index("artist0") < page.index("artist1")
