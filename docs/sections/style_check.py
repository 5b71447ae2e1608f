"""Measured sections of docs/style-check.md (and the README line of style-check)."""

from __future__ import annotations

from docs.sections import interval, md_table, num, pct
from iclr25.core.style_check.study import headline

QUICK = "experiments/results/style-check-study-quick.json"
HARD = "experiments/results/style-check-hard.json"
BENCH = "benchmarks/results/style-check.json"
CONDITION_NAMES = {
    "heldout": "held-out real works of the artist (positive control)",
    "other_artists": "real works of other artists (negative control)",
    "conditional": "class-conditional samples for the artist",
    "unconditional": "unconditional samples, assigned in turn (control)",
}


def _cell(c: dict) -> str:
    return interval(c["mean"], c["low"], c["high"], digits=2)


def _study_table(res: dict) -> str:
    rows = []
    for cond, by_encoder in res["conditions"].items():
        for enc, cell in by_encoder.items():
            rows.append(
                [
                    CONDITION_NAMES[cond],
                    enc,
                    _cell(cell["set_attribution_rate"]),
                    _cell(cell["set_classified_rate"]),
                    _cell(cell["image_top1"]),
                ]
            )
    headers = [
        "generated set",
        "encoder",
        "set attributed",
        "set classified as target",
        "image top-1",
    ]
    return md_table(rows, headers)


def _verdicts(res: dict) -> str:
    lines = []
    for enc, v in res["verdicts"].items():
        marks = ", ".join(f"{k} {'met' if ok else '**not met**'}" for k, ok in v["checks"].items())
        diff = v["difference_vs_unconditional"]
        lines.append(
            f"- **{enc}**: {marks}; conditional − unconditional "
            f"{interval(diff['mean'], diff['low'], diff['high'], digits=2)}"
        )
    return "\n".join(lines)


def _study(doc: dict) -> str:
    res = doc["document"]["results"]
    cfg = doc["document"]["config"]
    uniq = ", ".join(
        f"{enc} {_cell(c)} (unique artists per seed: {', '.join(map(str, res['n_unique'][enc]))})"
        for enc, c in res["uniqueness"].items()
    )
    return "\n\n".join(
        [
            f"{cfg['n_artists']} hard synthetic artists, {cfg['works_per_artist']} works each "
            f"({cfg['heldout_per_artist']} held out) at {cfg['size_px']} px, "
            f"{cfg['generator']['steps']} DDPM updates per model, {len(res['seeds'])} seeds, "
            f"{cfg['generated_per_artist']} images per generated set; chance = "
            f"{num(res['chance'], 3)}. Mean over seeds [95% t-interval]:",
            _study_table(res),
            f"DeepMatch held-out accuracy of the references: {uniq}. Sets attributed to an "
            f"artist without a unique style (never flagged at risk): "
            + ", ".join(
                f"{cond} {sum(v.values())}" for cond, v in res["attributed_not_unique"].items()
            )
            + f"; at risk without a unique style: {res['at_risk_not_unique']}.",
            "Pass conditions (fixed in `core/style_check/study.py` before the run):\n\n"
            + "\n".join(f"- {k}: {t}" for k, t in res["pass_conditions"].items()),
            _verdicts(res),
            f"**Verdict**: {res['statement']}.",
            f"Headline (`study.headline`, as `iclr25 demo` prints it): {headline(res)}.",
        ]
    )


def render_quick(sources) -> str:
    return _study(sources.load(QUICK))


def render_hard(sources) -> str:
    res = sources.load(HARD)["document"]["results"]
    rows = [
        [
            a["name"],
            pct(a["heldout_accuracy"]),
            "yes" if a["unique"] else "no",
            a["set_attribution"]["artist"],
            "yes" if a["set_attribution"]["attributed"] else "no",
            pct(a["image_share"]),
            a["verdict"],
        ]
        for a in res["artists"]
    ]
    table = md_table(
        rows,
        [
            "artist",
            "held-out acc.",
            "unique",
            "set classified as",
            "set attributed",
            "own images attributed",
            "verdict",
        ],
    )
    uniq = "; ".join(
        f"{enc}: mean held-out accuracy {pct(u['mean_heldout_accuracy'])}, "
        f"{u['n_unique']} of {u['n_artists']} unique"
        for enc, u in res["uniqueness"].items()
    )
    return (
        f"{table}\n\n{uniq}. {res['n_at_risk']} of {res['n_targeted_artists']} styles at risk; "
        f"{res['n_attributed_not_unique']} set(s) attributed to an artist without a unique "
        f'style, reported as "no unique style"; attribution accuracy '
        f"{pct(res['attribution_accuracy'])}."
    )


def render_speed(sources) -> str:
    doc = sources.load(BENCH)
    fig = doc["figures"]
    rows = [
        [k.replace(" images_per_cpu_s", ""), num(v, 3)]
        for k, v in fig.items()
        if k.endswith("images_per_cpu_s")
    ]
    return md_table(rows, ["encoder (input)", "images per CPU second"])


SECTIONS = {
    "study_quick": render_quick,
    "hard": render_hard,
    "speed": render_speed,
}
