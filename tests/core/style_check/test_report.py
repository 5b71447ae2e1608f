"""Report artefacts: escaping, the disclaimer, contact-sheet geometry, round robin; and
the BLAS thread limit for small problems."""

from __future__ import annotations

from iclr25.core.style_check import DISCLAIMER
from iclr25.core.style_check.report import THUMB_PX, contact_sheet, html_report, spread


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
                "attributed_share": 0.0,
                "top1_share": 1.0,
                "set_vote": evil,
                "at_risk": False,
            }
        ],
        "attribution_accuracy": 1.0,
        "n_at_risk": 0,
        "style_at_risk_share": 0.0,
        "encoder": "stats",
    }
    page = html_report(results)
    assert evil not in page and "&lt;script&gt;" in page
    assert DISCLAIMER in page.replace("&#x27;", "'")


def test_contact_sheet_geometry_and_placeholders():
    images = [_image(f"/nowhere/{i}.png", f"artist{i % 3}", n_near=3) for i in range(7)]
    sheet = contact_sheet(images, max_rows=5)
    # 4 columns (image + 3 nearest) and 5 rows of (thumb + caption), 6 px gutters
    assert sheet.size == (4 * (THUMB_PX + 6) + 6, 5 * (THUMB_PX + 34 + 6) + 6)


def test_spread_takes_artists_in_turn():
    images = [{"made_for": a, "i": i} for i, a in enumerate("aaabbc")]
    assert [r["i"] for r in spread(images, 5)] == [0, 3, 5, 1, 4]
