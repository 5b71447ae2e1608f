"""The forward-backward probe on tree grammars: tasks, their summary and the verdict.

For every rule instance (seed) and depth L, and every noise level t of the grid: draw
``samples`` data x_0, noise them to x_t, draw x̂_0 ~ p(x_0 | x_t) with the exact denoiser
(:mod:`bp`), and record the change indicators σ = 1[x̂_0 ≠ x_0], their χ, χ̃, C(r) and C by
tree height, and whether the class (root) changed. The controls (:mod:`controls`) get
the same number of samples, the same levels and the same seeds.

One (seed, depth) pair is one task of :mod:`iclr25.parallel` (a pure function of its
configuration and seed), so results are the same in-process, on local workers or on Dask.

The hypothesis (Sclocchi, Favero, Levi & Wyart, ICLR 2025) and its pass conditions,
fixed here before any run (:func:`verdict`):

(a) ``chi_grows_with_depth``: the peak of χ̃ rises at every depth step by more than the
    sum of the two 95 % half-widths (over seeds) at the peaks;
(b) ``peak_at_class_transition``: |peak level − class midpoint| ≤ 0.1 at every depth;
(c) ``peak_approaches_threshold``: the class midpoint is closer to the L → ∞ threshold at
    the deepest depth than at the shallowest, and within 0.1 of it there;
(d) ``controls_flat``: each control's χ̃ peak rises from the shallowest to the deepest
    depth by less than a quarter of the hierarchy's rise and stays below the hierarchy's
    peak at the deepest depth; the iid control's χ̃, averaged over the levels, is 1 ± 0.1
    at every depth (level by level, the estimator's sampling noise at small d reaches
    ±0.1 with 1,000 samples, so single levels are not a test of the estimator).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from iclr25.core.diffusion_probe import bp, observables
from iclr25.core.diffusion_probe.controls import fit_control
from iclr25.core.diffusion_probe.noise import leaf_messages
from iclr25.core.diffusion_probe.rhm import Grammar, RHMSpec, generate, parse_rules, sample_rules
from iclr25.errors import UsageError

#: arrays of one chunk of BP may use this much memory; larger problems are chunked
CHUNK_BYTES = 256 * 2**20
#: a run whose per-level arrays (samples × tokens) exceed this is refused
MEMORY_BUDGET_BYTES = 4 * 2**30
MAX_R = 81  # C(r) is stored for r = 0..MAX_R
PEAK_TOLERANCE = 0.1  # (b) and (c)
IID_TOLERANCE = 0.1  # (d)


@dataclass(frozen=True)
class ProbeConfig:
    spec: RHMSpec = field(default_factory=RHMSpec)  # v, m, s, classes (depth unused)
    depths: tuple[int, ...] = (3, 4, 5)
    noise: str = "flip"
    levels: tuple[float, ...] = tuple(round(0.1 + 0.05 * i, 10) for i in range(17))
    samples: int = 2000
    seeds: int = 3  # rule instances
    controls: tuple[str, ...] = ("markov", "iid")
    fit_samples: int = 20_000  # data the controls are fitted on
    rules: dict | None = None  # a user's grammar (JSON form): one fixed instance
    data: list | None = None  # a user's x_0 (list of token lists), checked against rules
    device: str = "cpu"  # "cuda": the rhm_bp kernel (float32; same uniforms as numpy)


# ---------------------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------------------
def bytes_per_datum(grammar: Grammar) -> int:
    """BP arrays of one datum: messages of every level plus the per-rule products."""
    total = grammar.d * grammar.vocab[-1]
    for level in range(grammar.depth):
        m = grammar.rules[level].shape[1]
        total += grammar.s**level * grammar.vocab[level] * (m + 2)
    return 8 * 4 * total  # float64, a few live copies


def check_memory(grammar: Grammar, samples: int) -> None:
    need = samples * grammar.d * 8 * 6  # x_0, x_t, x̂_0, σ and two float copies
    need = max(need, bytes_per_datum(grammar))
    if need > MEMORY_BUDGET_BYTES:
        largest = max(2, MEMORY_BUDGET_BYTES // max(1, grammar.d * 8 * 6))
        raise UsageError(
            f"depth {grammar.depth} with {samples} samples would need about "
            f"{need / 2**30:.1f} GiB (budget {MEMORY_BUDGET_BYTES / 2**30:.0f} GiB)",
            f"use --samples {largest} or less, or smaller depths",
        )


def denoise(grammar: Grammar, leaf_msgs: np.ndarray, rng: np.random.Generator, device="cpu"):
    """x̂_0 and its root for every datum, chunked to :data:`CHUNK_BYTES` (on ``device``)."""
    n = leaf_msgs.shape[0]
    chunk = max(1, CHUNK_BYTES // bytes_per_datum(grammar))
    uniforms = rng.random((n, bp.uniforms_per_datum(grammar)))
    if device == "cuda":
        from iclr25.gpu.kernels.rhm_bp import rhm_bp_cuda

        return rhm_bp_cuda(
            leaf_msgs, grammar.rules, grammar.weights, grammar.vocab, grammar.s, uniforms
        )
    leaves, roots = [], []
    for start in range(0, n, chunk):
        msgs = bp.upward(grammar, leaf_msgs[start : start + chunk])
        x, r = bp.sample(grammar, msgs, uniforms[start : start + chunk])
        leaves.append(x)
        roots.append(r)
    return np.concatenate(leaves), np.concatenate(roots)


# ---------------------------------------------------------------------------------------
# One task: a rule instance at one depth
# ---------------------------------------------------------------------------------------
def instance_grammar(config: ProbeConfig, seed: int, depth: int) -> Grammar:
    if config.rules is not None:
        return parse_rules(config.rules)
    spec = RHMSpec(config.spec.v, config.spec.m, config.spec.s, max(config.depths))
    spec = RHMSpec(spec.v, spec.m, spec.s, spec.depth, config.spec.classes)
    rules_rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    return sample_rules(spec, rules_rng).truncated(depth)


def level_stats(sigma: np.ndarray, s: int, class_changed: np.ndarray | None) -> dict:
    stats = observables.change_stats(sigma)
    stats["class_change"] = None if class_changed is None else float(class_changed.mean())
    stats["corr_r"] = observables.correlation_by_distance(sigma, MAX_R)
    stats["corr_tree"] = observables.correlation_by_height(sigma, s)
    return stats


def probe_task(task: dict, seed: int) -> dict:
    """Hierarchy and controls at every level for one (rule instance, depth).

    ``task``: ``{"config": asdict(ProbeConfig), "depth": L}``; ``seed``: the instance seed.
    """
    config = _config_from_dict(task["config"])
    depth = task["depth"]
    grammar = instance_grammar(config, seed, depth)
    data_rng = np.random.default_rng(np.random.SeedSequence([seed, 1, depth]))
    if config.data is not None:
        x0 = np.asarray(config.data, dtype=np.int64)
        root0 = _parse_roots(grammar, x0)
    else:
        x0, root0 = generate(grammar, config.samples, data_rng)
    v = grammar.vocab[-1]
    out = {"depth": depth, "tokens": grammar.d, "hierarchy": [], "controls": {}}
    for level in config.levels:
        msgs, _ = leaf_messages(config.noise, x0, v, level, data_rng)
        xhat, root = denoise(grammar, msgs, data_rng, config.device)
        out["hierarchy"].append(level_stats(xhat != x0, grammar.s, root != root0))
    for name in config.controls:
        control_rng = np.random.default_rng(np.random.SeedSequence([seed, 2, depth]))
        fit_data, _ = generate(grammar, config.fit_samples, control_rng)
        model = fit_control(name, fit_data, v)
        cx0 = model.generate(len(x0), control_rng)
        rows = []
        for level in config.levels:
            msgs, _ = leaf_messages(config.noise, cx0, v, level, control_rng)
            rows.append(level_stats(model.denoise(msgs, control_rng) != cx0, grammar.s, None))
        out["controls"][name] = rows
    return out


def _parse_roots(grammar: Grammar, x0: np.ndarray) -> np.ndarray:
    """The class of each user datum (its unique parse; the most probable if ambiguous)."""
    onehot = np.eye(grammar.vocab[-1])[x0]
    return bp.root_posterior(grammar, bp.upward(grammar, onehot)).argmax(axis=1)


def _config_from_dict(raw: dict) -> ProbeConfig:
    raw = dict(raw)
    raw["spec"] = RHMSpec(**raw["spec"])
    for key in ("depths", "levels", "controls"):
        raw[key] = tuple(raw[key])
    return ProbeConfig(**raw)


def config_to_dict(config: ProbeConfig) -> dict:
    return asdict(config)


# ---------------------------------------------------------------------------------------
# Summary over seeds, and the verdict
# ---------------------------------------------------------------------------------------
def _t_half_width(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and not math.isnan(v)]
    if len(values) < 2:
        return None
    from scipy import stats

    return float(
        stats.t.ppf(0.975, len(values) - 1) * np.std(values, ddof=1) / math.sqrt(len(values))
    )


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(values)) if values else None


def summarise_depth(levels: list[float], rows_by_seed: list[list[dict]], classes: int | None):
    """Seed-averaged curves of one depth (hierarchy or control) and their key points."""
    per_level = list(zip(*rows_by_seed, strict=True))  # levels × seeds
    chi_norm = [_mean([r["chi_norm"] for r in rows]) for rows in per_level]
    out = {
        "change_fraction": [_mean([r["change_fraction"] for r in rows]) for rows in per_level],
        "class_change": [_mean([r["class_change"] for r in rows]) for rows in per_level],
        "chi": [_mean([r["chi"] for r in rows]) for rows in per_level],
        "chi_norm": chi_norm,
        "chi_norm_ci95": [_t_half_width([r["chi_norm"] for r in rows]) for rows in per_level],
    }
    peak = observables.peak_level(levels, chi_norm)
    out["peak_level"], out["peak_chi_norm"] = peak if peak else (None, None)
    at = int(np.nanargmax([np.nan if c is None else c for c in chi_norm])) if peak else 0
    out["peak_chi_norm_ci95"] = out["chi_norm_ci95"][at]
    out["class_midpoint"] = (
        observables.class_midpoint(levels, out["class_change"], classes)
        if classes and out["class_change"][0] is not None
        else None
    )
    out["corr_r"] = np.mean([rows[at]["corr_r"] for rows in rows_by_seed], axis=0).tolist()
    out["corr_tree"] = np.mean([rows[at]["corr_tree"] for rows in rows_by_seed], axis=0).tolist()
    return out


def summarise(config: ProbeConfig, outcomes: list[dict], classes: int) -> dict:
    """``per_depth`` and ``controls`` from the task outcomes (seeds × depths)."""
    levels = list(config.levels)
    per_depth, controls = [], {name: [] for name in config.controls}
    for depth in config.depths:
        mine = [o for o in outcomes if o["depth"] == depth]
        summary = summarise_depth(levels, [o["hierarchy"] for o in mine], classes)
        per_depth.append({"depth": depth, "tokens": mine[0]["tokens"], **summary})
        for name in config.controls:
            rows = [o["controls"][name] for o in mine]
            controls[name].append({"depth": depth, **summarise_depth(levels, rows, None)})
    return {"per_depth": per_depth, "controls": controls}


def verdict(per_depth: list[dict], controls: dict, threshold: float | None) -> dict:
    """The pass conditions of the module docstring, each True / False (None: not testable)."""
    peaks = [d["peak_chi_norm"] for d in per_depth]
    halves = [d["peak_chi_norm_ci95"] or 0.0 for d in per_depth]
    conditions: dict[str, bool | None] = {}
    if len(per_depth) < 2 or None in peaks:
        conditions["chi_grows_with_depth"] = None
    else:
        conditions["chi_grows_with_depth"] = all(
            peaks[i + 1] - peaks[i] > halves[i] + halves[i + 1] for i in range(len(peaks) - 1)
        )
    gaps = [
        None
        if d["peak_level"] is None or d["class_midpoint"] is None
        else abs(d["peak_level"] - d["class_midpoint"])
        for d in per_depth
    ]
    conditions["peak_at_class_transition"] = (
        None if None in gaps else all(g <= PEAK_TOLERANCE for g in gaps)
    )
    mids = [d["class_midpoint"] for d in per_depth]
    if threshold is None or None in mids or len(mids) < 2:
        conditions["peak_approaches_threshold"] = None
    else:
        first, last = abs(mids[0] - threshold), abs(mids[-1] - threshold)
        conditions["peak_approaches_threshold"] = last < first and last <= PEAK_TOLERANCE
    conditions["controls_flat"] = _controls_flat(per_depth, controls, peaks)
    failed = [name for name, ok in conditions.items() if ok is False]
    untested = [name for name, ok in conditions.items() if ok is None]
    return {
        **conditions,
        "observed": not failed and not untested,
        "failed": failed,
        "untested": untested,
    }


def _controls_flat(per_depth, controls: dict, peaks) -> bool | None:
    if not controls or len(per_depth) < 2 or None in peaks:
        return None
    rise = peaks[-1] - peaks[0]
    for name, rows in controls.items():
        cpeaks = [r["peak_chi_norm"] for r in rows]
        if None in cpeaks or cpeaks[-1] - cpeaks[0] >= rise / 4 or cpeaks[-1] >= peaks[-1]:
            return False
        if name == "iid":
            for r in rows:
                values = [c for c in r["chi_norm"] if c is not None]
                if not values or abs(float(np.mean(values)) - 1.0) > IID_TOLERANCE:
                    return False
    return True
