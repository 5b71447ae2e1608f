"""Measured sections of docs/exicl.md, rendered from the bundled priors' report and the study."""

from __future__ import annotations

from docs.sections import cli_timing_table, interval, md_table, num, pct

STUDY = "experiments/results/exicl-experiment-quick.json"
STUDY_5 = "experiments/results/exicl-experiment-5seeds.json"
STUDY_FULL = "experiments/results/exicl-experiment.json"
PRIORS = "iclr25/data/exicl/priors.json"
LEGAL_TARGET, GUIDED_TARGET = 0.90, 1.15


def render_priors(sources) -> str:
    report = sources.load(PRIORS)
    rows = []
    for layout in ("wall", "box"):
        r = report[layout]
        legal, guided = r["legal_move_rate"], r["guided_over_shortest"]
        rows.append([
            f"`{layout}`", pct(legal), "met" if legal >= LEGAL_TARGET else "**not met**",
            num(guided), "met" if guided is not None and guided <= GUIDED_TARGET else "**not met**",
            num(r["final_loss"]), f"{r['train_s']:.0f} s", f"`{r['sha256'][:16]}…`",
        ])  # fmt: skip
    headers = ["prior", "legal moves (unguided)", "≥ 90 %", "guided / shortest (median)",
               "≤ 1.15", "final loss", "training (shared CPU)", "sha256"]  # fmt: skip
    return md_table(rows, headers)


def _ci(entry: dict | None) -> str:
    if entry is None:
        return "—"
    ci = entry["ci95"]
    return interval(entry["mean"], *(ci or (None, None)))


def render_experiment(sources, study: str = STUDY) -> str:
    doc = sources.load(study)
    res = doc["document"]["results"]
    config = doc["document"]["config"]
    rows = [
        [name, num(c["value"]), interval(c["value"], *(c["ci95"] or (None, None))),
         num(c["threshold"]), "yes" if c["passed"] else "**no**", c["text"]]
        for name, c in res["conditions"].items()
    ]  # fmt: skip
    table = md_table(rows, ["condition", "value", "value [95 % CI]", "threshold", "passed", "what"])
    metric_rows = []
    for layout, methods in res["methods"].items():
        for method, m in methods.items():
            metric_rows.append([
                f"`{layout}`", method, _ci(m["n_distinct_feasible"]),
                _ci(m["exact_feasible_share"]), _ci(m["mean_iou_with_true"]),
                _ci(m["cost_variance"]), _ci(m.get("verifier_agreement")),
            ])  # fmt: skip
    metrics = md_table(metric_rows, ["layout", "method", "distinct feasible", "feasible share",
                                     "IoU with truth", "cost variance", "GDV = exact"])  # fmt: skip
    size = (f"{res['seeds']} seeds, K = {config['k']}, {config['rounds']} rounds × "
            f"{config['samples']} guided samples per constraint")  # fmt: skip
    notes = []
    wall = res["methods"]["wall"]
    if wall["exicl"] == wall["control"]:
        notes.append(
            "ExICL and the control produced identical metrics on `wall`: no candidate passed "
            "the GDV, so none was accepted and the diversity term never had a negative — "
            "with our acceptance rule the exploration then reduces to the control."
        )
    elif wall["exicl"]["n_distinct_feasible"] == wall["control"]["n_distinct_feasible"]:
        notes.append(
            "ExICL and the control found the same number of distinct feasible constraints "
            "on `wall` in every seed."
        )
    share_e = wall["exicl"]["exact_feasible_share"]["mean"]
    share_c = wall["control"]["exact_feasible_share"]["mean"]
    if share_e < share_c:
        notes.append(
            f"On `wall` the diversity term cost feasibility: ExICL's exact-feasible share "
            f"{share_e:.2f} against the control's {share_c:.2f}."
        )
    if not any(m["n_exact_feasible"]["mean"] for lay in res["methods"].values()
               for m in lay.values()):  # fmt: skip
        notes.append(
            "No learned constraint was exactly feasible at this size, so the effect the paper "
            "claims (several distinct feasible constraints) did not appear here."
        )
    extra = "".join(f"\n\n{n}" for n in notes)
    name = study.rsplit("/", 1)[-1].removesuffix(".json")
    return (
        f"Study `{name}` ({size}):\n\n{table}\n\n{metrics}\n\n"
        f"**Verdict: {res['verdict']}** — {res['summary']}.{extra}"
    )


CALIBRATION = "experiments/results/exicl-calibrate-2000.json"


def render_calibrate(sources) -> str:
    doc = sources.load(CALIBRATION)
    res = doc["document"]["results"]
    rows = [
        [
            "all",
            res["candidates"],
            res["exact_feasible"],
            res["gdv_feasible"],
            num(res["precision"]),
            num(res["recall"]),
            pct(res["agreement"]),
        ]
    ]
    for kind, r in res["by_kind"].items():
        n = res["candidates"] // 2
        rows.append([kind, n, r["exact_feasible"], r["gdv_feasible"], num(r["precision"]),
                     num(r["recall"]), pct(r["agreement"])])  # fmt: skip
    headers = ["candidates", "masks", "exactly feasible", "GDV feasible", "precision",
               "recall", "agreement"]  # fmt: skip
    return md_table(rows, headers)


def render_experiment_5(sources) -> str:
    return render_experiment(sources, STUDY_5)


def render_experiment_full(sources) -> str:
    return render_experiment(sources, STUDY_FULL)


CLI_TIMING = "experiments/results/exicl-cli-timing.json"


def render_cli_timing(sources) -> str:
    doc = sources.load(CLI_TIMING)
    cmds = doc["commands"]
    head = (
        f"{doc['rounds']} round(s), each command a fresh subprocess (Python start-up and the "
        f"torch import included), `OMP_NUM_THREADS={doc['omp_num_threads']}`, {doc['cpus']} "
        "CPUs shared with other jobs; CPU = user + sys of the run and every process it started "
        "(`experiment --quick` runs two worker processes)."
    )
    prior, rec, rec4 = (cmds[n]["results"] for n in ("train_prior", "recover", "recover_k4"))
    quick = cmds["experiment_quick"]["results"]
    work = (
        f"Work done: the prior trained on {num(prior['train_trajectories'])} trajectories "
        f"(final loss {num(prior['final_loss'])}, legal moves {pct(prior['legal_move_rate'])}); "
        f"`recover` returned {rec['k']} constraints ({rec['n_exact_feasible']} exactly "
        f"feasible), `--k 4` {rec4['k']} ({rec4['n_exact_feasible']}); the quick experiment's "
        f"verdict: {quick['verdict']}."
    )
    return "\n\n".join([head, cli_timing_table(doc), work])


SECTIONS = {"priors": render_priors, "experiment": render_experiment,
            "experiment_5seeds": render_experiment_5, "experiment_full": render_experiment_full,
            "calibrate": render_calibrate, "cli_timing": render_cli_timing}  # fmt: skip
