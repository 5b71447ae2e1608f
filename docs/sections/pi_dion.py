"""Measured sections of docs/pi-dion.md (`<!-- generated: pi_dion.<name> -->`).

- ``compare``: the headline study, the earlier runs and the control
  (experiments/results/pi-dion-compare*.json).
- ``bundled``: the embedded model's training log (iclr25/data/pi_dion/train_log.json).
- ``bundled_2d``, ``compare_2d``: the 2-D model's log (train_log_2d.json) and its study
  (experiments/results/pi-dion-compare-2d.json).
- ``compare_2d_retrained``: the 2-D headline with PI-DION retrained per seed
  (experiments/results/pi-dion-compare-2d-retrained.json).
- ``baselines``: the bundled supervised DeepONets' log (iclr25/data/pi_dion/baselines_log.json).
- ``noise``: the stability study (experiments/results/pi-dion-noise.json).
- ``bench``: the physics-loss benchmark (benchmarks/results/pi-dion.json).
- ``darcy``: the darcy study and its budget check
  (experiments/results/pi-dion-compare-darcy.json, pi-dion-compare-darcy-long.json).
- ``cli_timing``: `solve` and `compare --quick` timed against the 60 s target, with the
  quick run's errors per method (experiments/results/pi-dion-cli-timing.json,
  scripts/time_pi_dion_cli.py).
- ``bundled_darcy``, ``noise_darcy``, ``cli_timing_darcy``: the bundled darcy model's log
  (iclr25/data/pi_dion/train_log_darcy.json), darcy's stability study
  (experiments/results/pi-dion-noise-darcy.json) and darcy's `solve` and `compare --quick`
  timed (experiments/results/pi-dion-cli-timing-darcy.json).
"""

from __future__ import annotations

from docs.sections import cli_timing_table, interval, md_table, num, targets_table

COMPARE = "experiments/results/pi-dion-compare.json"
HALF = "experiments/results/pi-dion-compare-half.json"
CONTROL = "experiments/results/pi-dion-compare-subdomain.json"
PREVIOUS = "experiments/results/pi-dion-compare-bundled.json"
BUNDLED = "iclr25/data/pi_dion/train_log.json"
BUNDLED_2D = "iclr25/data/pi_dion/train_log_2d.json"
COMPARE_2D = "experiments/results/pi-dion-compare-2d.json"
COMPARE_2D_RETRAINED = "experiments/results/pi-dion-compare-2d-retrained.json"
BASELINES = "iclr25/data/pi_dion/baselines_log.json"
NOISE = "experiments/results/pi-dion-noise.json"
BENCH = "benchmarks/results/pi-dion.json"
DARCY = "experiments/results/pi-dion-compare-darcy.json"
DARCY_LONG = "experiments/results/pi-dion-compare-darcy-long.json"
CLI_TIMING = "experiments/results/pi-dion-cli-timing.json"
BUNDLED_DARCY = "iclr25/data/pi_dion/train_log_darcy.json"
NOISE_DARCY = "experiments/results/pi-dion-noise-darcy.json"
CLI_TIMING_DARCY = "experiments/results/pi-dion-cli-timing-darcy.json"


def _table(res: dict, outside: bool) -> str:
    rows = []
    for name in res["methods"]:
        f, u = res["rel_l2_f"][name], res["rel_l2_u"][name]
        row = [f"`{name}`", interval(f["mean"], f["ci_low"], f["ci_high"]),
               interval(u["mean"], u["ci_low"], u["ci_high"]) if u else "—",
               num(res["nmse_f"][name]),
               num(res["inference_ms_per_instance"][name])]  # fmt: skip
        if outside:
            row += [num(res["rel_l2_f_inside"][name]["mean"]),
                    num(res["rel_l2_f_outside"][name]["mean"])]  # fmt: skip
        rows.append(row)
    headers = ["method", "rel. L² f [95% CI]", "rel. L² u [95% CI]", "nMSE f", "ms / instance"]
    headers += ["f inside hull", "f outside hull"] if outside else []
    return md_table(rows, headers)


def _budget(p: dict) -> str:
    text = f"{num(p['steps'])} Adam steps"
    if p.get("batch"):
        text += f" (batch {num(p['batch'])})"
    if p.get("lbfgs_steps"):
        text += f" + {num(p['lbfgs_steps'])} L-BFGS steps"
    return text + " per network"


def _block(doc: dict, title: str, outside: bool, name: str | None = None) -> str:
    res = doc["document"]["results"]
    p = res["problem"]
    head = f"**{title}** (study `{name or doc['name']}`, {num(doc['seconds'])} s)"
    setting = (
        f"{p['pde']}, sensors {p['sensors']}, noise {num(p['noise'])}, {num(p['n_train'])} "
        f"unlabelled training inputs, {num(p['n_test'])} held-out instances, "
        f"{res['seeds']} seeds, {_budget(p)}."
    )
    if p.get("model"):
        setting += (
            f" PI-DION is the trained model `{p['model'].rsplit('/', 1)[-1]}` (sha256 "
            f"{p['model_sha256'][:12]}…), the same at every seed; seeds vary the supervised "
            "models' data and initialisation."
        )
    else:
        setting += (
            " PI-DION is retrained on every seed's unlabelled data with the same recipe as "
            "every supervised model."
        )
    parts = [head, setting, _table(res, outside)]
    losses = res.get("final_train_loss", {}).get("pi_dion")
    if losses:  # recorded since this round: did every seed's PI-DION train?
        parts.append("PI-DION's loss after training, per seed: "
                     + ", ".join(num(v) for v in losses) + ".")  # fmt: skip
    return "\n\n".join([*parts, f"Verdict: {res['verdict']}"])


def render_compare(sources) -> str:
    parts = [_block(sources.load(COMPARE), "Headline", False)]
    parts.append(_block(sources.load(HALF), "Previous round: half the recipe", False,
                        "pi-dion-compare-half"))  # fmt: skip
    parts.append(_block(sources.load(PREVIOUS), "Two rounds ago: the bundled model scored on "
                        "every seed", False, "pi-dion-compare-bundled"))  # fmt: skip
    parts.append(_block(sources.load(CONTROL), "Control (partial sensors)", True))
    return "\n\n".join(parts)


def render_bundled(sources) -> str:
    log = sources.load(BUNDLED)
    held, tr = log["held_out"], log["train"]
    rows = [
        ["rel. L² f", num(held["rel_l2_f"]), f"≤ {num(log['targets']['rel_l2_f'])}",
         "met" if held["rel_l2_f"] <= log["targets"]["rel_l2_f"] else "**not met**"],
        ["rel. L² u", num(held["rel_l2_u"]), f"≤ {num(log['targets']['rel_l2_u'])}",
         "met" if held["rel_l2_u"] <= log["targets"]["rel_l2_u"] else "**not met**"],
    ]  # fmt: skip
    recipe = (
        f"Recipe: {num(tr['steps'])} full-batch Adam steps (batch {num(tr['batch'])}, lr "
        f"{num(tr['lr'])}, cosine decay), then {num(tr['lbfgs_steps'])} L-BFGS iterations; "
        f"width {tr['width']}, depth {tr['depth']}, p = {tr['basis']}, w_res {num(tr['w_res'])}, "
        f"{tr['collocation']} collocation points; training loss after L-BFGS "
        f"{num(log['final_loss'])}. Training took {num(log['wall_s'])} s wall, "
        f"{num(log['cpu_s'])} s CPU (one torch thread, `nice -n 10` on a shared machine). "
        f"sha256 `{log['sha256']}`."
    )
    held_out = (
        f"Held-out set: seed {held['seed']}, {num(held['instances'])} instances (labels used "
        "for this score only)."
    )
    return "\n\n".join(
        [recipe, held_out, md_table(rows, ["error", "measured", "target", "verdict"])]
    )


def render_bundled_2d(sources) -> str:
    log = sources.load(BUNDLED_2D)
    held, tr, curve = log["held_out"], log["train"], log["loss_curve"]["adam"]
    recipe = (
        f"`scripts/train_pi_dion.py {' '.join(log['argv'])}`: {num(log['instances'])} "
        f"unlabelled instances, {num(tr['steps'])} full-batch Adam steps (lr {num(tr['lr'])}, "
        f"cosine decay), then {num(tr['lbfgs_steps'])} L-BFGS iterations; "
        f"{num(tr['collocation'])} collocation points per step. Training loss "
        f"{num(curve[0])} at Adam step 100, {num(curve[-1])} at step {num(100 * len(curve))}, "
        f"{num(log['final_loss'])} after L-BFGS. {num(log['wall_s'])} s wall, "
        f"{num(log['cpu_s'])} s CPU (one thread, shared machine). sha256 `{log['sha256']}`."
    )
    rows = [["rel. L² f", num(held["rel_l2_f"])], ["rel. L² u", num(held["rel_l2_u"])]]
    head = f"Held-out set: seed {held['seed']}, {num(held['instances'])} instances:"
    return "\n\n".join([recipe, head, md_table(rows, ["error", "measured"])])


def render_compare_2d(sources) -> str:
    return _block(sources.load(COMPARE_2D), "2-D", False)


def render_compare_2d_retrained(sources) -> str:
    return _block(sources.load(COMPARE_2D_RETRAINED), "2-D, PI-DION retrained per seed", False)


def render_baselines(sources) -> str:
    log = sources.load(BASELINES)
    tr, held = log["train"], log["held_out"]
    rows = [[num(r["labels"]), f"`{r['file']}`", num(r["rel_l2_f"]), num(r["cpu_s"]),
             f"`{r['sha256'][:12]}…`"] for r in log["baselines"]]  # fmt: skip
    head = (
        f"Supervised DeepONets trained by `scripts/train_pi_dion.py {' '.join(log['argv'])}` "
        f"with the embedded model's recipe ({num(tr['steps'])} full-batch Adam + "
        f"{num(tr['lbfgs_steps'])} L-BFGS steps, seed 0) on the first N of its 1,000 training "
        f"instances with their f; rel. L² f on the held-out set (seed {held['seed']}, "
        f"{num(held['instances'])} instances):"
    )
    headers = ["N labels", "file", "rel. L² f", "CPU s", "sha256"]
    return "\n\n".join([head, md_table(rows, headers)])


def render_noise(sources) -> str:
    doc = sources.load(NOISE)
    res = doc["document"]["results"]
    rows = []
    for m in res["methods"]:
        fit = res["fitted_slope"][m]
        rows.append([f"`{m}`", *[num(v) for v in res["root_nmse_f"][m]],
                     interval(fit["slope"], fit["ci_low"], fit["ci_high"]),
                     "yes" if res["rate_reproduced"][m] else "**no**"])  # fmt: skip
    headers = ["method", *[f"√nMSE f @ {num(v)}" for v in res["noise_levels"]],
               "slope [95% bootstrap]", "rate reproduced"]  # fmt: skip
    p = res["problem"]
    head = (
        f"**Stability** (study `{doc['name']}`, {num(doc['seconds'])} s): {p['pde']}, "
        f"{num(p['n_train'])} unlabelled training inputs per level, {num(p['n_test'])} held-out "
        f"instances, PI-DION retrained per level: {_budget(p).removesuffix(' per network')}. "
        f"Pass: {res['pass_condition']}."
    )
    return "\n\n".join([head, md_table(rows, headers), f"Verdict: {res['verdict']}"])


def render_bench(sources) -> str:
    doc = sources.load(BENCH)
    fig = doc["figures"]
    rows = []
    for key, peer, label, size in (
        ("1d", "autograd", "plain autograd at all N·M points", ""),
        ("2d", "autograd", "plain autograd at all N·M points (∂_xx, ∂_yy nested)", ""),
        ("deepxde_1d", "deepxde", "DeepXDE `PDEOperatorCartesianProd` (one Hessian per "
         "function)", "same as 1-D"),
    ):  # fmt: skip
        if f"{key}_ms" not in fig:
            continue
        ms, loss = fig[f"{key}_ms"], fig[f"{key}_loss"]
        where = size or f"N = {loss['N']} × M = {loss['M']}"
        rows.append([key.replace("_1d", " 1-D").replace("1d", "1-D").replace("2d", "2-D"),
                     where, label, num(ms["ours"]), num(ms.get(peer, ms.get("peer"))),
                     num(loss["ours"], 7),
                     num(loss.get(f"residual_term_{peer}", loss[peer]), 7)
                     if "residual_term_ours" in loss else "—",
                     num(loss["equal_1e-5"])])  # fmt: skip
    head = (
        "One loss + gradient step (median CPU time, one thread). Comparable only if the loss "
        "and its residual term agree to 1e-5 (the sensor term dominates the loss at "
        "initialisation, so the residual term is checked on its own)."
    )
    table = md_table(rows, ["case", "size", "peer", "ours ms", "peer ms", "loss",
                            "peer's residual term", "equal to 1e-5"])  # fmt: skip
    return "\n\n".join([head, table, targets_table(doc)])


def _darcy_block(doc: dict, title: str) -> str:
    res = doc["document"]["results"]
    p = res["problem"]
    rows = []
    for name in res["methods"]:
        cells = [res[k][name] for k in ("rel_l2_a", "rel_l2_g", "rel_l2_u")]
        rows.append([f"`{name}`", *[interval(c["mean"], c["ci_low"], c["ci_high"]) if c else "—"
                                    for c in cells],
                     num(res["rel_l2_a_near_flux_zero"][name]["mean"]),
                     num(res["rel_l2_a_away"][name]["mean"]),
                     num(res["inference_ms_per_instance"][name])])  # fmt: skip
    headers = ["method", "rel. L² a [95% CI]", "rel. L² g [95% CI]", "rel. L² u [95% CI]",
               "a near flux zero", "a away", "ms / instance"]  # fmt: skip
    head = (
        f"**{title}** (study `{doc['name']}`, {num(doc['seconds'])} s): −(a u')' = 1, a = exp(g), "
        f"g from the Matérn prior (ν = {num(p['nu'])}, ℓ = {num(p['ell'])}), sensors "
        f"{p['sensors']} ({p['n_sensors']}), noise {num(p['noise'])} (σ = "
        f"{num(p['noise_std'])}), {num(p['n_train'])} unlabelled training inputs, "
        f"{num(p['n_test'])} held-out instances, {res['seeds']} seeds, {_budget(p)}. "
        "PI-DION and the supervised DeepONets (target g) are trained per seed with one recipe; "
        "Tikhonov–Gauss–Newton is deterministic on the one held-out set (interval width 0). "
        f"No Bayes row ({res['bayes'].removeprefix('none: ')}). Pass condition (fixed in "
        "code before the run): "
        f"{res['pass_condition']}."
    )
    losses = ", ".join(num(v) for v in res["final_train_loss"]["pi_dion"])
    trained = f"PI-DION's loss after training, per seed: {losses}."
    parts = [head, md_table(rows, headers), trained, f"Verdict: {res['verdict']}"]
    return "\n\n".join(parts)


def render_darcy(sources) -> str:
    blocks = [_darcy_block(sources.load(DARCY), "darcy"),
              _darcy_block(sources.load(DARCY_LONG), "darcy, twice the recipe")]  # fmt: skip
    return "\n\n".join(blocks)


def render_cli_timing(sources) -> str:
    doc = sources.load(CLI_TIMING)
    cmds = doc["commands"]
    solve = cmds["solve"]["results"]
    head = (
        f"{doc['rounds']} interleaved rounds, each command a fresh subprocess (Python start-up "
        f"and the torch import included), `OMP_NUM_THREADS={doc['omp_num_threads']}`, "
        f"{doc['cpus']} CPUs shared with other jobs; CPU = user + sys of the run and every "
        f"process it started. `DATA` is `{' '.join(doc['generate'])}` ({num(doc['instances'])} "
        "instances of the bundled model's problem, written before the timing)."
    )
    check = (
        f"Work done: `solve` returned {num(solve['instances'])} instances "
        f"(`{solve['method']}`, rel. L² f {num(solve['rel_l2_f'])}, u {num(solve['rel_l2_u'])} "
        "against the truth it never read); the same results in every round: "
        + ", ".join(f"{n} {'yes' if c['same_results_every_run'] else 'NO'}"
                    for n, c in cmds.items()) + "."
    )  # fmt: skip
    quick = cmds["compare_quick"]["results"]
    qrows = [[f"`{m}`", num(quick["rel_l2_f"][m]), num(quick["nmse_f"][m])]
             for m in quick["methods"]]  # fmt: skip
    qhead = (
        "The timed `compare --quick` run's errors (bundled PI-DION and baselines, 3 held-out "
        "draws of 100 instances; mean rel. L² f over draws, nMSE f), the GCV Tikhonov row "
        "included:"
    )
    return "\n\n".join([head, cli_timing_table(doc), check, qhead,
                         md_table(qrows, ["method", "rel. L² f", "nMSE f"])])  # fmt: skip


def render_bundled_darcy(sources) -> str:
    log = sources.load(BUNDLED_DARCY)
    held, tr, curve = log["held_out"], log["train"], log["loss_curve"]["adam"]
    recipe = (
        f"`scripts/train_pi_dion.py {' '.join(log['argv'])}`: {num(log['instances'])} "
        f"unlabelled instances, {num(tr['steps'])} Adam steps in batches of {num(tr['batch'])} "
        f"(lr {num(tr['lr'])}, cosine decay), then {num(tr['lbfgs_steps'])} full-batch L-BFGS "
        f"iterations; width {tr['width']}, depth {tr['depth']}, p = {tr['basis']}, residual "
        f"weight {num(log['w_res'])}, {num(tr['collocation'])} collocation points per step. "
        f"Training loss {num(curve[0])} at Adam step 100, {num(curve[-1])} at step "
        f"{num(100 * len(curve))}, {num(log['final_loss'])} after L-BFGS. {num(log['wall_s'])} "
        f"s wall, {num(log['cpu_s'])} s CPU (one thread, shared machine). sha256 "
        f"`{log['sha256']}`."
    )
    rows = [[name, num(held[key])] for name, key in (
        ("rel. L² a", "rel_l2_a"), ("rel. L² g", "rel_l2_g"), ("rel. L² u", "rel_l2_u"),
        ("rel. L² a near the flux zero", "rel_l2_a_near_flux_zero"),
        ("rel. L² a away from it", "rel_l2_a_away"))]  # fmt: skip
    head = (
        f"Held-out set: seed {held['seed']}, {num(held['instances'])} instances — the held-out "
        "set of the darcy studies above, so the figures read against their Tikhonov row "
        "(labels used for this score only):"
    )
    return "\n\n".join([recipe, head, md_table(rows, ["error", "measured"])])


def render_noise_darcy(sources) -> str:
    doc = sources.load(NOISE_DARCY)
    res = doc["document"]["results"]
    rows, blank = [], [""] * len(res["noise_levels"])

    def span(fit):
        return interval(fit["slope"], fit["ci_low"], fit["ci_high"])

    for m in res["methods"]:
        rows.append([f"`{m}` √nMSE a", *[num(v) for v in res["root_nmse_a"][m]],
                     span(res["fitted_slope"][m])])  # fmt: skip
        rows.append([f"`{m}` median rel. L² a", *[num(v) for v in res["median_rel_l2_a"][m]],
                     span(res["fitted_slope_median"][m])])  # fmt: skip
        rows.append([f"`{m}` breakdowns", *[num(v) for v in res["breakdowns"][m]], "—"])
    for key, label in (
        ("slope_pi_dion_minus_tikhonov", "PI-DION − Tikhonov, √nMSE"),
        ("slope_pi_dion_minus_tikhonov_median", "PI-DION − Tikhonov, median"),
    ):
        if res[key] is not None:
            rows.append([label, *blank, span(res[key])])
    headers = ["method, error", *[f"@ {num(v)}" for v in res["noise_levels"]],
               "slope [95% bootstrap]"]  # fmt: skip
    p = res["problem"]
    head = (
        f"**Stability, darcy** (study `{doc['name']}`, {num(doc['seconds'])} s): −(a u')' = 1, "
        f"a = exp(g), {num(p['n_train'])} unlabelled training inputs per level, "
        f"{num(p['n_test'])} held-out instances (the darcy held-out draw), PI-DION retrained "
        f"per level: {_budget(p).removesuffix(' per network')}; Tikhonov–Gauss–Newton at the "
        f"true σ. Errors per noise level: the root nMSE of a over the held-out set, the "
        f"median of the instances' rel. L² of a, and the breakdowns ({res['breakdown_rule']}, "
        f"of {num(p['n_test'])}). Predicted slope: {res['predicted_slope_reason']}. Pass "
        f"condition: {res['pass_condition']}."
    )
    losses = ", ".join(num(v) for v in res["final_train_loss"].get("pi_dion", []))
    parts = [head, md_table(rows, headers)]
    if losses:
        parts.append(f"PI-DION's loss after training, per level: {losses}.")
    return "\n\n".join([*parts, f"Verdict: {res['verdict']}"])


def render_cli_timing_darcy(sources) -> str:
    doc = sources.load(CLI_TIMING_DARCY)
    cmds = doc["commands"]
    solve, quick = cmds["solve"]["results"], cmds["compare_quick"]["results"]
    head = (
        f"{doc['rounds']} interleaved rounds, each command a fresh subprocess (start-up and "
        f"the torch import included), `OMP_NUM_THREADS={doc['omp_num_threads']}`, "
        f"{doc['cpus']} CPUs shared with other jobs; CPU = user + sys of the run and every "
        f"process it started. `DATA` is `{' '.join(doc['generate'])}` ({num(doc['instances'])} "
        "darcy instances, written before the timing)."
    )
    check = (
        f"Work done: `solve` returned {num(solve['instances'])} instances (`{solve['method']}`, "
        f"bundled model `{solve['model_sha256'][:12]}…`, rel. L² a {num(solve['rel_l2_a'])}, u "
        f"{num(solve['rel_l2_u'])} against the truth it never read); `compare --quick`'s mean "
        "rel. L² of a: "
        + ", ".join(f"`{m}` {num(v)}" for m, v in quick["rel_l2_a"].items())
        + "; the same results in every round: "
        + ", ".join(f"{n} {'yes' if c['same_results_every_run'] else 'NO'}"
                    for n, c in cmds.items()) + "."
    )  # fmt: skip
    return "\n\n".join([head, cli_timing_table(doc), check])


SECTIONS = {
    "compare": render_compare,
    "bundled": render_bundled,
    "bundled_2d": render_bundled_2d,
    "compare_2d": render_compare_2d,
    "compare_2d_retrained": render_compare_2d_retrained,
    "baselines": render_baselines,
    "noise": render_noise,
    "bench": render_bench,
    "darcy": render_darcy,
    "cli_timing": render_cli_timing,
    "bundled_darcy": render_bundled_darcy,
    "noise_darcy": render_noise_darcy,
    "cli_timing_darcy": render_cli_timing_darcy,
}
