"""The body of `diffusion-at compare` (imported lazily by the command module)."""

from __future__ import annotations

from iclr25.runner import Run

QUICK = {"steps": 800, "seeds": 3, "nfe": [3, 5, 10, 20], "n": 800, "w2_subsample": 400}


def _sampler_specs(config, sampler: str | None, nfe_list, quick: bool) -> list:
    from iclr25.core.diffusion_at.pipeline import check_sampler
    from iclr25.core.diffusion_at.samplers import SamplerSpec

    cm = config.objective != "ddpm"
    kind = sampler or ("cm" if cm else "ddim")
    default = [1, 2] if cm else (QUICK["nfe"] if quick else [2, 3, 5, 10, 20, 50])
    specs = [SamplerSpec(kind, k) for k in (nfe_list or default)]
    for spec in specs:
        check_sampler(spec, config)
    return specs


def run_compare_command(
    run: Run, data, opts: dict, seeds: int, nfe_list, sampler, n, mismatch_nfe, quick: bool
) -> None:
    import dataclasses

    from iclr25.commands.diffusion_at_options import build_config
    from iclr25.commands.diffusion_at_train import report_data
    from iclr25.core.diffusion_at.adversarial import ATConfig
    from iclr25.core.diffusion_at.compare import CompareConfig, run_compare, steps_per_seed
    from iclr25.core.diffusion_at.data import load_dataset
    from iclr25.core.diffusion_at.evaluation import EvalConfig
    from iclr25.core.diffusion_at.samplers import SamplerSpec

    spec = data or "8gaussians"
    dataset = load_dataset(spec, opts.get("image_size"))
    report_data(run, dataset)
    if quick:
        opts = {**opts, "steps": opts.get("steps") or QUICK["steps"]}
        n = n or QUICK["n"]
    arm = build_config({**opts, "seed": run.seed}, dataset, data_spec=spec)
    base = dataclasses.replace(arm, at=ATConfig())
    specs = _sampler_specs(base, sampler, nfe_list, quick)
    cm = base.objective != "ddpm"
    m_nfe = mismatch_nfe if mismatch_nfe is not None else (2 if cm else 10)
    mismatch = SamplerSpec(specs[0].kind, min(m_nfe, 2) if cm else m_nfe) if m_nfe else None
    if mismatch is not None and not cm and mismatch.nfe > base.diffusion_steps:
        mismatch = SamplerSpec(mismatch.kind, base.diffusion_steps)
    w2 = QUICK["w2_subsample"] if quick else 1000
    config = CompareConfig(
        base=base,
        at=arm.at,
        seeds=tuple(run.seed + i for i in range(seeds)),
        samplers=tuple(specs),
        eval=EvalConfig(n or 2000, n or 2000, w2, seed=run.seed),
        mismatch=mismatch,
        mismatch_n=400 if quick else min(n or 2000, 1000),
    )
    with (
        run.progress("compare", total=seeds * steps_per_seed(base)) as advance,
        run.timer("compare_s"),
    ):
        results, artifacts = run_compare(config, dataset, run.device.kind, advance)
    if run.wants_artifacts:
        _compare_plots(run, results, artifacts, specs, run.seed)
    run.finish(results, config, _render)


def _compare_plots(run: Run, results: dict, artifacts: dict, specs: list, seed: int) -> None:
    from iclr25.core.diffusion_at import plots
    from iclr25.core.diffusion_at.pipeline import sample

    run.save_plot(
        plots.metric_vs_nfe_figure(results["per_nfe"], results["primary_metric"]),
        f"{results['primary_metric']}_vs_nfe",
    )
    if results["mismatch"]["curve"]:
        for metric in ("mmd", "sw"):
            figure = plots.mismatch_figure(
                results["mismatch"]["curve"], metric, nfe=results["mismatch"]["nfe"]
            )
            run.save_plot(figure, f"mismatch_{metric}")
    # the smallest NFE of the sweep and the one closest to 10, seed 0, both arms
    shown = [specs[0], min(specs, key=lambda s: abs(s.nfe - 10))]
    panels = []
    for spec in dict.fromkeys(shown):
        for arm, trained in artifacts.items():
            x = sample(
                trained.state.ema,
                spec,
                trained.schedule,
                trained.dataset,
                2000,
                1000 + seed,
                trained.param,
                run.device.kind,
            )
            panels.append((f"{arm}, {spec.kind} NFE {spec.nfe} (seed {seed})", x.numpy()))
    run.save_plot(plots.samples_figure(panels, artifacts["baseline"].dataset.kind), "samples")


def _fmt(cell: dict) -> str:
    mean, sd = cell["mean"], cell["sd"]
    if mean is None or mean != mean:
        return "nan"
    return f"{mean:.4g} ± {sd:.2g}" if sd == sd and sd is not None else f"{mean:.4g}"


def _render(console, results) -> None:
    from iclr25.output import rows_table

    metric = results["primary_metric"]
    rows = []
    for row in results["per_nfe"]:
        rows.append(
            {
                "NFE": row["nfe"],
                f"baseline {metric}": _fmt(row["baseline"][metric]),
                f"AT {metric}": _fmt(row["at"][metric]),
                "AT - baseline": _fmt(row["difference"]),
                "AT better (seeds)": f"{row['at_better_seeds']}/{len(results['seeds'])}",
            }
        )
    title = (
        f"diffusion-at compare: {results['data']}, {results['objective']}, "
        f"{results['steps']} steps, {len(results['seeds'])} seeds"
    )
    console.print(rows_table(rows, title=title))
    curve = results["mismatch"]["curve"]
    if curve:
        mrows = [
            {
                "t": r["t"],
                "baseline mmd": _fmt(r["baseline"]["mmd"]),
                "AT mmd": _fmt(r["at"]["mmd"]),
            }
            for r in curve
        ]
        console.print(
            rows_table(
                mrows,
                title=f"mismatch q(x_t) vs p_θ(x_t) at NFE "
                f"{results['mismatch']['nfe']} (unbiased MMD²)",
            )
        )
