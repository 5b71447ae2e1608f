"""What `compare` concludes: per-NFE summaries, paired tests, the verdict and its headline.

Written down before any run (the pass conditions are these constants and functions):

- **H1, the paper's claim** — AT improves sample quality at small NFE at equal optimiser
  steps: AT's primary metric is significantly better than the baseline's at some NFE ≤
  :data:`SMALL_NFE`.
- **H2, the effect is adversarial** — at an NFE where H1 holds, AT is also significantly
  better than *both* controls (``replay``: the same updates without δ; ``noise``: a
  random δ of the same norm). Without both controls H2 is not decided (None).

"Significantly better" = the two-sided paired t-test over seeds (``stats.paired_test``),
Holm-adjusted over its family, below α = :data:`stats.ALPHA`, with the mean difference in
the better direction. Families: every (variant, NFE) comparison with the baseline; every
(control, NFE) comparison of AT with a control. Intervals are 95 % t-intervals of the
mean paired difference (unadjusted).

Mismatch: for every timestep the sampler visits, AT − baseline of the unbiased MMD² between
p_θ(x_t) and q(x_t), with its interval; AT *raises* (*lowers*) the mismatch at t when the
whole interval is above (below) zero.
"""

from __future__ import annotations

import math

from iclr25.core.diffusion_at.metric_names import HIGHER_IS_BETTER, LABELS, METRICS, PRIMARY
from iclr25.core.diffusion_at.stats import ALPHA, holm, mean_sd, paired_test, summary

SMALL_NFE = 5  # "small NFE" for H1: the paper's gains are largest at few sampling steps
CONTROLS = ("replay", "noise")
MISMATCH_METRICS = ("mmd", "sw")

HYPOTHESIS = {
    "claim": "AT improves sample quality at small NFE at equal optimiser steps "
    "(Wang et al., ICLR 2025)",
    "controls": {
        "baseline": "plain training, the same number of optimiser updates",
        "replay": "free AT's m updates per minibatch with δ ≡ 0 (more updates per minibatch)",
        "noise": "free AT's schedule with a random δ of the same norm (noise augmentation)",
    },
    "test": f"two-sided paired t-test over seeds, Holm-adjusted per family, α = {ALPHA}",
    "pass_conditions": {
        "H1": f"AT significantly better than the baseline at some NFE ≤ {SMALL_NFE}",
        "H2": "where H1 holds, AT also significantly better than replay and than noise",
    },
}


def _value(row: dict, metric: str) -> float:
    """A metric from a task row (NaN became None in the JSON round trip)."""
    value = row.get(metric)
    return float("nan") if value is None else float(value)


def _better(diff_mean: float, metric: str) -> bool:
    """A mean difference (variant − reference) in the better direction of ``metric``."""
    return diff_mean > 0 if metric in HIGHER_IS_BETTER else diff_mean < 0


def _paired(outcomes: list[dict], a: str, b: str, i: int, metric: str) -> dict:
    """a − b of ``metric`` at sampler i, paired by seed, with the test and seed wins."""
    d = [_value(o[a]["rows"][i], metric) - _value(o[b]["rows"][i], metric) for o in outcomes]
    test = paired_test(d)
    wins = sum(1 for x in d if x == x and _better(x, metric))
    return {
        "difference": {k: test[k] for k in ("mean", "sd", "low", "high")},
        **test,
        "better_seeds": wins,
    }


def _holm_mark(tests: list[dict], metric: str) -> None:
    """Add ``p_holm`` and ``significant`` to every test of one family, in place."""
    adjusted = holm([t["p_value"] if t["p_value"] == t["p_value"] else math.nan for t in tests])
    for test, p in zip(tests, adjusted, strict=True):
        test["p_holm"] = p
        test["significant"] = bool(p == p and p < ALPHA and _better(test["mean"], metric))


def per_nfe_table(outcomes: list[dict], variants, samplers, metrics, primary: str) -> list[dict]:
    """One entry per sampler: every variant's metric summaries, the paired tests of each
    variant against the baseline (``versus_baseline``) and of AT against each control
    (``at_versus``), and ``significant`` — the variants significantly better than the
    baseline there."""
    rows = []
    for i, spec in enumerate(samplers):
        entry = {"nfe": spec.nfe, "sampler": spec.kind}
        for v in variants:
            entry[v] = {m: summary([_value(o[v]["rows"][i], m) for o in outcomes]) for m in metrics}
        others = [v for v in variants if v != "baseline"]
        entry["versus_baseline"] = {v: _paired(outcomes, v, "baseline", i, primary) for v in others}
        controls = [c for c in CONTROLS if c in variants and "at" in variants]
        entry["at_versus"] = {c: _paired(outcomes, "at", c, i, primary) for c in controls}
        rows.append(entry)
    for family in ("versus_baseline", "at_versus"):
        _holm_mark([t for r in rows for t in r[family].values()], primary)
    for entry in rows:
        vs = entry["versus_baseline"]
        entry["significant"] = [v for v in vs if vs[v]["significant"]]
        if "at" in vs:  # the AT − baseline difference under its earlier names
            entry["difference"] = vs["at"]["difference"]
            entry["at_better_seeds"] = vs["at"]["better_seeds"]
    return rows


def decide(per_nfe: list[dict], variants, n_seeds: int) -> dict:
    """The verdict: H1, H2 (pass conditions in the module docstring) and a plain statement."""
    significant = {str(r["nfe"]): r["significant"] for r in per_nfe}
    at_nfe = [r["nfe"] for r in per_nfe if "at" in r["significant"]]
    h1_nfe = [k for k in at_nfe if k <= SMALL_NFE]
    both = all(c in variants for c in CONTROLS)
    adversarial_nfe = [
        r["nfe"]
        for r in per_nfe
        if r["nfe"] in h1_nfe and all(r["at_versus"][c]["significant"] for c in CONTROLS if both)
    ]
    h2 = (bool(adversarial_nfe) if h1_nfe else False) if both else None
    return {
        "significant": significant,
        "at_better_nfe": at_nfe,
        "paper_claim_observed": bool(h1_nfe),
        "adversarial_effect_observed": h2,
        "adversarial_nfe": adversarial_nfe if both else [],
        "statement": statement(per_nfe, variants, n_seeds, h1_nfe, adversarial_nfe, both),
    }


def statement(per_nfe, variants, n_seeds, h1_nfe, adversarial_nfe, both) -> str:
    """One or two plain sentences of what the comparison showed."""
    test = f"{n_seeds} seeds, paired t-test, Holm α = {ALPHA}"
    if n_seeds < 2:
        return f"{n_seeds} seed: no test is possible; run at least 2 (5 for the full study)."
    parts = []
    for v in variants:
        nfe = [r["nfe"] for r in per_nfe if v in r["significant"]]
        if nfe:
            parts.append(f"{v} at NFE {', '.join(map(str, nfe))}")
    if not parts:
        return f"No variant is significantly better than the baseline at any NFE ({test})."
    text = f"Significantly better than the baseline ({test}): {'; '.join(parts)}."
    if not h1_nfe:
        return text + f" AT is not significantly better at any NFE ≤ {SMALL_NFE} (H1 not met)."
    if not both:
        return text + " The replay and noise controls were not run: H2 is not decided."
    if adversarial_nfe:
        nfe = ", ".join(map(str, adversarial_nfe))
        return text + f" At NFE {nfe} AT also beats replay and noise: the gain is adversarial."
    return text + (
        " Where AT beats the baseline it is not significantly better than both controls, so"
        " the gain is not shown to come from the adversarial direction (H2 not met)."
    )


def mismatch_table(outcomes: list[dict], variants) -> dict:
    """Per visited timestep: every variant's MMD² / SW₂ summaries and AT − baseline."""
    first = outcomes[0][variants[0]]["curve"]
    if first is None:
        return {"curve": [], "at_raises_t": [], "at_lowers_t": []}
    curve, raises, lowers = [], [], []
    for j, point in enumerate(first):
        row = {"step": point["step"], "t": point["t"]}
        for v in variants:
            row[v] = {
                m: summary([_value(o[v]["curve"][j], m) for o in outcomes])
                for m in MISMATCH_METRICS
            }
        if "at" in variants:
            d = [
                _value(o["at"]["curve"][j], "mmd") - _value(o["baseline"]["curve"][j], "mmd")
                for o in outcomes
            ]
            test = paired_test(d)
            row["at_minus_baseline_mmd"] = test
            if test["low"] > 0:
                raises.append(point["t"])
            elif test["high"] < 0:
                lowers.append(point["t"])
        curve.append(row)
    return {"curve": curve, "at_raises_t": raises, "at_lowers_t": lowers}


def summarise_compare(config, dataset, outcomes: list[dict]) -> dict:
    """The ``results`` of `compare` from the per-seed task outcomes ({variant: result})."""
    variants = config.variants
    metrics, primary = METRICS[dataset.kind], PRIMARY[dataset.kind]
    per_nfe = per_nfe_table(outcomes, variants, config.samplers, metrics, primary)
    mismatch = mismatch_table(outcomes, variants)
    spec = config.mismatch
    return {
        "data": dataset.name,
        "objective": config.base.objective,
        "primary_metric": primary,
        "primary_label": LABELS.get(_feature_space(dataset), {}).get(primary, primary),
        "metrics": list(metrics),
        "feature_space": _feature_space(dataset),
        "variants": list(variants),
        "seeds": list(config.seeds),
        "steps": config.base.steps,
        "at_start": config.base.at_start,
        "at": config.at,
        "hypothesis": HYPOTHESIS,
        "per_nfe": per_nfe,
        "mismatch": {
            "nfe": spec.nfe if spec else None,
            "sampler": spec.kind if spec else None,
            **mismatch,
        },
        "training": {
            v: {
                "final_loss": mean_sd([o[v]["final_loss"] for o in outcomes]),
                "delta_norm": mean_sd(
                    [
                        o[v]["delta_norm"] if o[v]["delta_norm"] is not None else 0.0
                        for o in outcomes
                    ]
                ),
            }
            for v in variants
        },
        "verdict": decide(per_nfe, variants, len(config.seeds)),
    }


def _feature_space(dataset) -> str:
    from iclr25.core.diffusion_at.evaluation import feature_space_of

    return feature_space_of(dataset)


def _cell(cell: dict) -> str:
    mean, sd = cell.get("mean"), cell.get("sd")
    if mean is None or mean != mean:
        return "nan"
    return f"{mean:.3f}±{sd:.3f}" if sd is not None and sd == sd else f"{mean:.3f}"


def headline(results: dict) -> str:
    """One line for the demo and the docs: the smallest NFE, every variant, the verdict."""
    row = results["per_nfe"][0]
    metric = results["primary_metric"]
    arms = ", ".join(f"{v} {_cell(row[v][metric])}" for v in results["variants"])
    return (
        f"{results['data']} NFE {row['nfe']} {results.get('primary_label', metric)}: {arms}. "
        f"{results['verdict']['statement']}"
    )
