"""Terminal views of the `iclr25 mufu` results, and the demo headlines."""

from __future__ import annotations

EXPERIMENT_KEYS = (
    "hypothesis, control, pass_conditions, chrf ({arm: {mean, per_seed}}), gain "
    "(mufu_vs_plain, mufu_vs_teacher, mufu_vs_shuffled, shuffled_vs_plain, "
    "unrelated_vs_plain: {mean, ci95, per_seed}), conditions, passed, verdict, headline, "
    "budget (per arm: examples, epochs, batch_size, steps, lr, tokens, answer_tokens), "
    "budget_equal, aux_langs, unrelated_langs, seeds, teacher_chrf_by_lang, best_epoch, "
    "validation, copy, distances, sizes, gain_vs_k (with --k 1,3,5)"
)


def _scores_line(results) -> str:
    return (
        f"chrF {results['chrf']:.2f}  chrF++ {results['chrf_pp']:.2f}  (n = {results['n']})\n"
        f"{results['signature']}"
    )


def render_prompt(console, results) -> None:
    for i, p in enumerate(results["prompts"]):
        if i:
            console.print()
        console.print(p, markup=False, highlight=False)
    if results.get("saved_to"):
        console.print(f"\n{results['n']} prompts written to {results['saved_to']}", markup=False)


def render_translate(console, results) -> None:
    from iclr25.output import rows_table

    rows = [{"#": i + 1, "hypothesis": h} for i, h in enumerate(results["hypotheses"][:10])]
    title = (
        f"first {len(rows)} of {results['n']} translations ({results['prompt']['format']} prompts)"
    )
    console.print(rows_table(rows, ["#", "hypothesis"], title=title))
    if "chrf" in results:
        console.print(_scores_line(results), markup=False)


def render_score(console, results) -> None:
    console.print(_scores_line(results), markup=False)
    boot = results.get("bootstrap")
    if boot:
        lo, hi = boot["ci95"]
        line = (
            f"bootstrap ({boot['n_samples']} resamples, seed {boot['seed']}): "
            f"mean {boot['mean']:.2f}, 95% [{lo:.2f}, {hi:.2f}]"
        )
        if boot.get("p_value") is not None:
            line += f"; vs baseline {results['baseline_chrf']:.2f}: p = {boot['p_value']:.4f}"
        console.print(line, markup=False)


def render_finetune(console, results) -> None:
    from iclr25.output import rows_table

    console.print(
        rows_table(results["history"], ["epoch", "loss", "valid_chrf"], title="finetuning")
    )
    b = results["budget"]
    console.print(
        f"best epoch {results['best_epoch']} (validation chrF {results['best_valid_chrf']:.2f}); "
        f"{b['steps']} steps of {b['batch_size']} over {b['examples']} examples, lr {b['lr']:g}; "
        f"saved to {results['saved_to']}",
        markup=False,
    )


def render_experiment(console, results) -> None:
    from iclr25.output import rows_table

    chrf = results["chrf"]
    rows = [
        {"arm": arm, "chrF": v["mean"], "per seed": ", ".join(f"{x:.1f}" for x in v["per_seed"])}
        for arm, v in chrf.items()
    ]
    console.print(
        rows_table(rows, ["arm", "chrF", "per seed"], title="test chrF (mean over seeds)")
    )
    gains = [
        {
            "gain": name,
            "mean": g["mean"],
            "95% interval": f"[{g['ci95'][0]:+.2f}, {g['ci95'][1]:+.2f}]",
        }
        for name, g in results["gain"].items()
        if g is not None
    ]
    console.print(
        rows_table(
            gains, ["gain", "mean", "95% interval"], title="gains (seeds × sentences bootstrap)"
        )
    )
    for name, ok in results["conditions"].items():
        state = "not evaluated" if ok is None else ("met" if ok else "NOT met")
        console.print(
            f"{state}: {name} — {results['pass_conditions'][name]}",
            markup=False,
        )
    console.print(results["verdict"], markup=False)


def headline(doc: dict) -> str:
    """Demo headline of a prompt, translate or score step (one line)."""
    r = doc["results"]
    if "prompts" in r:
        langs = ", ".join(r["prompt"]["aux_langs"])
        return f"{r['n']} {r['prompt']['format']} prompts, candidates in {langs}"
    if r.get("bootstrap"):
        return score_headline(r)
    return f"chrF {r['chrf']:.1f}, chrF++ {r['chrf_pp']:.1f} on {r['n']} sentences"


def score_headline(r: dict) -> str:
    """chrF with sacrebleu's bootstrap interval; against a baseline: the difference, its
    p-value, and plainly whether it is significant at 0.05."""
    boot = r["bootstrap"]
    lo, hi = boot["ci95"]
    line = f"chrF {r['chrf']:.1f} (95% [{lo:.1f}, {hi:.1f}])"
    if boot.get("p_value") is None:
        return line
    diff, p = r["chrf"] - r["baseline_chrf"], boot["p_value"]
    verdict = "significant at 0.05" if p < 0.05 else "no significant difference"
    return f"{line} vs baseline {r['baseline_chrf']:.1f}: {diff:+.1f}, p = {p:.3f} ({verdict})"
