"""Measured sections of docs/pi-dion.md (`<!-- generated: pi_dion.<name> -->`).

- ``compare``: the headline study and its control (experiments/results/pi-dion-compare*.json).
"""

from __future__ import annotations

from docs.sections import interval, md_table, num

COMPARE = "experiments/results/pi-dion-compare.json"
CONTROL = "experiments/results/pi-dion-compare-subdomain.json"


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


def _block(doc: dict, title: str, outside: bool) -> str:
    res = doc["document"]["results"]
    p = res["problem"]
    head = f"**{title}** (study `{doc['name']}`, {num(doc['seconds'])} s)"
    setting = (
        f"{p['pde']}, sensors {p['sensors']}, noise {num(p['noise'])}, {num(p['n_train'])} "
        f"unlabelled training inputs, {num(p['n_test'])} held-out instances, "
        f"{res['seeds']} seeds, {num(p['steps'])} steps per network."
    )
    return "\n\n".join([head, setting, _table(res, outside), f"Verdict: {res['verdict']}"])


def render_compare(sources) -> str:
    parts = [_block(sources.load(COMPARE), "Headline", False)]
    parts.append(_block(sources.load(CONTROL), "Control (partial sensors)", True))
    return "\n\n".join(parts)


SECTIONS = {"compare": render_compare}
