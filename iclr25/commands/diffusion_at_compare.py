"""The body of `diffusion-at compare` (imported lazily by the command module)."""

from __future__ import annotations

from iclr25.runner import Run

QUICK = {"steps": 800, "seeds": 3, "nfe": [3, 5, 10, 20], "n": 800, "w2_subsample": 400}
FULL_NFE = [2, 3, 5, 10, 20, 50]
PREVIEW_N = {"points": 2000, "image": 64}  # samples per panel of samples.png


def _sampler_specs(config, sampler: str | None, nfe_list, quick: bool) -> list:
    from iclr25.core.diffusion_at.pipeline import check_sampler
    from iclr25.core.diffusion_at.samplers import SamplerSpec

    cm = config.objective != "ddpm"
    kind = sampler or ("cm" if cm else "ddim")
    default = [1, 2] if cm else (QUICK["nfe"] if quick else FULL_NFE)
    specs = [SamplerSpec(kind, k) for k in (nfe_list or default)]
    for spec in specs:
        check_sampler(spec, config)
    return specs


def _mismatch_spec(base, specs: list, mismatch_nfe: int | None):
    from iclr25.core.diffusion_at.samplers import SamplerSpec

    cm = base.objective != "ddpm"
    m_nfe = mismatch_nfe if mismatch_nfe is not None else (2 if cm else 10)
    if not m_nfe:
        return None
    nfe = min(m_nfe, 2) if cm else min(m_nfe, base.diffusion_steps)
    return SamplerSpec(specs[0].kind, nfe)


def _variants(run: Run, at, requested: tuple[str, ...]) -> tuple[str, ...]:
    from iclr25.core.diffusion_at.compare import variants_for

    variants = variants_for(at, requested)
    dropped = [v for v in requested if v not in variants]
    if dropped:
        run.warn(
            f"the {' and '.join(dropped)} control(s) mirror free AT's replays; with --at "
            f"{at.method} they are not run"
        )
    return variants


def build_compare_config(run: Run, dataset, spec: str, opts: dict, args: dict):
    """The CompareConfig of the command's options (``args``: seeds, nfe_list, sampler, n,
    mismatch_nfe, quick, variants, preset)."""
    import dataclasses

    from iclr25.commands.diffusion_at_options import apply_preset, build_config
    from iclr25.core.diffusion_at.adversarial import ATConfig
    from iclr25.core.diffusion_at.compare import CompareConfig, seeds_for
    from iclr25.core.diffusion_at.evaluation import EvalConfig

    quick, n = args["quick"], args["n"]
    if quick:
        opts = {**opts, "steps": opts.get("steps") or QUICK["steps"]}
        n = n or QUICK["n"]
    opts = apply_preset(opts, args["preset"], dataset.dim)
    arm = build_config({**opts, "seed": 0}, dataset, data_spec=spec)
    base = dataclasses.replace(arm, at=ATConfig())
    specs = _sampler_specs(base, args["sampler"], args["nfe_list"], quick)
    shown = tuple(dict.fromkeys([specs[0], min(specs, key=lambda s: abs(s.nfe - 10))]))
    w2 = QUICK["w2_subsample"] if quick else 1000
    return CompareConfig(
        base=base,
        at=arm.at,
        seeds=seeds_for(run.seed, args["seeds"]),
        samplers=tuple(specs),
        eval=EvalConfig(n or 2000, n or 2000, w2, seed=run.seed),
        mismatch=_mismatch_spec(base, specs, args["mismatch_nfe"]),
        mismatch_n=400 if quick else min(n or 2000, 1000),
        variants=_variants(run, arm.at, args["variants"]),
        previews=shown if run.wants_artifacts else (),
        preview_n=PREVIEW_N[dataset.kind] if run.wants_artifacts else 0,
        device=run.device.kind,
    )


def run_compare_command(run: Run, data, opts: dict, args: dict, execution) -> None:
    from iclr25 import parallel_options
    from iclr25.commands.diffusion_at_train import report_data
    from iclr25.core.diffusion_at.compare import run_compare
    from iclr25.core.diffusion_at.data import load_dataset

    spec = data or "8gaussians"
    dataset = load_dataset(spec, opts.get("image_size"))
    report_data(run, dataset)
    config = build_compare_config(run, dataset, spec, opts, args)
    total = len(config.seeds) * len(config.variants)
    with run.progress("compare (seed × variant)", total=total) as advance, run.timer("compare_s"):
        results, outcome, previews = run_compare(config, execution, on_done=advance)
    parallel_options.report(run, outcome)
    if run.wants_artifacts:
        _compare_plots(run, results, previews, dataset.kind)
    run.finish(results, config, _render)


def _compare_plots(run: Run, results: dict, previews: dict, kind: str) -> None:
    import numpy as np

    from iclr25.core.diffusion_at import plots

    variants = tuple(results["variants"])
    metric = results["primary_metric"]
    figure = plots.metric_vs_nfe_figure(results["per_nfe"], metric, labels=variants)
    run.save_plot(figure, f"{metric}_vs_nfe")
    curve = results["mismatch"]["curve"]
    for m in ("mmd", "sw") if curve else ():
        figure = plots.mismatch_figure(curve, m, labels=variants, nfe=results["mismatch"]["nfe"])
        run.save_plot(figure, f"mismatch_{m}")
    keys = list(next(iter(previews.values()), {}))  # one row per preview sampler
    panels = [
        (f"{variant}, {key.replace(':', ' NFE ')} (seed 0)", np.asarray(by_key[key], float))
        for key in keys
        for variant, by_key in previews.items()
    ]
    if panels:
        run.save_plot(plots.samples_figure(panels, kind, ncols=len(previews)), "samples")


def _fmt(cell: dict) -> str:
    mean, sd = cell.get("mean"), cell.get("sd")
    if mean is None or mean != mean:
        return "nan"
    return f"{mean:.4g} ± {sd:.2g}" if sd is not None and sd == sd else f"{mean:.4g}"


def _diff(test: dict) -> str:
    d = test["difference"]
    if d["mean"] is None or d["low"] is None:
        return _fmt(d)
    mark = " *" if test.get("significant") else ""
    return f"{d['mean']:+.3g} [{d['low']:+.3g}, {d['high']:+.3g}]{mark}"


def _render(console, results) -> None:
    from iclr25.output import rows_table

    metric = results["primary_metric"]
    variants = results["variants"]
    rows = []
    for row in results["per_nfe"]:
        cells = {"NFE": row["nfe"], **{v: _fmt(row[v][metric]) for v in variants}}
        for v, test in row["versus_baseline"].items():
            cells[f"{v} − baseline"] = _diff(test)
        rows.append(cells)
    title = (
        f"diffusion-at compare: {results['data']}, {results['objective']}, "
        f"{results['steps']} steps, {len(results['seeds'])} seeds — "
        f"{results.get('primary_label', metric)} (mean ± sd; differences: mean [95% CI], "
        "* = significant, paired t, Holm)"
    )
    console.print(rows_table(rows, title=title))
    curve = results["mismatch"]["curve"]
    if curve:
        mrows = [{"t": r["t"], **{f"{v} MMD²": _fmt(r[v]["mmd"]) for v in variants}} for r in curve]
        console.print(
            rows_table(
                mrows,
                title=f"mismatch q(x_t) vs p_θ(x_t) at NFE {results['mismatch']['nfe']} "
                "(unbiased MMD², mean ± sd over seeds)",
            )
        )
    console.print(results["verdict"]["statement"])
