"""diffusion-probe: the exact BP denoiser, vectorised, against the plain loop and pgmpy.

1. numpy BP (upward pass + posterior sampling, batched over data) against the plain
   per-datum, per-node loop that defines it (``iclr25/gpu/kernels/rhm_bp/reference.py``),
   at (v, m, s) = (9, 6, 3), L = 4, 200 data, the same uniforms: samples must agree.
2. pgmpy variable elimination (the library a user would reach for) on the same network
   (symbols and rule choices as variables, noisy observations as children) at (4, 2, 2),
   L = 3: root marginal of one datum, against numpy BP's root marginal of the same datum;
   reported, not a target (VE answers one query per call; BP answers all nodes at once).
3. The rhm_bp CUDA kernel against numpy at 10⁵ data, L = 6 (needs a GPU: "not measured"
   without one; ``scripts/gpu-check.sh`` runs it).
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Report, Target

NAME = "diffusion-probe"
TARGETS = {
    "speedup_numpy_vs_loop": Target(">=", 50.0, "issue 26 (prototype ≈ 70×)"),
    "speedup_kernel_vs_numpy": Target(">=", 50.0, "issue 26, at 10⁵ data, L = 6"),
}


def _case(v, m, s, depth, n, seed=0):
    from iclr25.core.diffusion_probe import bp
    from iclr25.core.diffusion_probe.noise import leaf_messages
    from iclr25.core.diffusion_probe.rhm import RHMSpec, generate, sample_rules

    rng = np.random.default_rng(seed)
    grammar = sample_rules(RHMSpec(v, m, s, depth), rng)
    x0, _ = generate(grammar, n, rng)
    msg, xt = leaf_messages("flip", x0, v, 0.4, rng)
    return grammar, msg, xt, rng.random((n, bp.uniforms_per_datum(grammar)))


def _numpy_vs_loop(report: Report) -> None:
    from iclr25.core.diffusion_probe import bp
    from iclr25.gpu.kernels.rhm_bp.reference import bp_sample_reference

    n = 40 if report.quick else 200
    grammar, msg, _, u = _case(9, 6, 3, 4, n)

    def numpy_path():
        return bp.sample(grammar, bp.upward(grammar, msg), u)

    def loop():
        return bp_sample_reference(msg, grammar.rules, grammar.weights, grammar.vocab, 3, u)

    agree = float((numpy_path()[0] == loop()[0]).mean())
    timed = report.time("numpy_vs_loop", {"numpy": numpy_path, "loop": loop})
    report.figure("numpy_vs_loop", {"data": n, "shape": "(9,6,3) L=4", "token_agreement": agree})
    report.check(
        "speedup_numpy_vs_loop",
        timed.ratio("loop", "numpy"),
        comparable=agree >= 0.999,
        note=f"samples agree on {agree:.4%} of tokens",
    )


def _pgmpy(report: Report) -> None:
    try:
        from pgmpy.inference import VariableElimination
    except ImportError:
        report.figure("pgmpy", "not installed (pip install pgmpy; extra bench)")
        return
    from iclr25.core.diffusion_probe import bp

    grammar, msg, xt, _ = _case(4, 2, 2, 3, 1)
    net, evidence = _pgmpy_network(grammar, xt[0], 0.4)
    infer = VariableElimination(net)

    def ve():
        return infer.query(["x0_0"], evidence=evidence, show_progress=False).values

    def ours():
        return bp.root_posterior(grammar, bp.upward(grammar, msg))[0]

    gap = float(np.abs(ve() - ours()).max())
    timed = report.time("root_marginal_vs_pgmpy", {"numpy_bp": ours, "pgmpy_ve": ve})
    report.figure(
        "pgmpy",
        {
            "shape": "(4,2,2) L=3, one datum, root marginal",
            "max_abs_difference": gap,
            "speedup_numpy_bp_vs_pgmpy_ve": timed.ratio("pgmpy_ve", "numpy_bp"),
        },
    )


def _pgmpy_network(grammar, xt, eps):
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    v = grammar.vocab[-1]
    edges, cpds = (
        [],
        [TabularCPD("x0_0", grammar.classes, [[1 / grammar.classes]] * grammar.classes)],
    )
    for lv in range(grammar.depth):
        m = grammar.rules[lv].shape[1]
        vin, vout = grammar.vocab[lv], grammar.vocab[lv + 1]
        for j in range(grammar.s**lv):
            node, rule = f"x{lv}_{j}", f"k{lv}_{j}"
            edges.append((node, rule))
            cpds.append(TabularCPD(rule, m, grammar.weights[lv].T, [node], [vin]))
            for i in range(grammar.s):
                child = f"x{lv + 1}_{j * grammar.s + i}"
                edges += [(node, child), (rule, child)]
                table = np.zeros((vout, vin * m))
                for a in range(vin):
                    for k in range(m):
                        table[grammar.rules[lv][a, k, i], a * m + k] = 1.0
                cpds.append(TabularCPD(child, vout, table, [node, rule], [vin, m]))
    channel = np.full((v, v), eps / v) + (1 - eps) * np.eye(v)
    for i in range(grammar.d):
        edges.append((f"x{grammar.depth}_{i}", f"o{i}"))
        cpds.append(TabularCPD(f"o{i}", v, channel, [f"x{grammar.depth}_{i}"], [v]))
    net = DiscreteBayesianNetwork(edges)
    net.add_cpds(*cpds)
    return net, {f"o{i}": int(x) for i, x in enumerate(xt)}


def _kernel(report: Report) -> None:
    from iclr25.gpu import get_cupy, select_device

    if select_device("auto").kind != "cuda" or get_cupy() is None:
        report.check(
            "speedup_kernel_vs_numpy", None, note="no CUDA device: run scripts/gpu-check.sh"
        )
        return
    from iclr25.core.diffusion_probe.probe import denoise

    n = 10_000 if report.quick else 100_000
    grammar, msg, _, _ = _case(9, 6, 3, 6, n)

    def on(device):
        return lambda: denoise(grammar, msg, np.random.default_rng(1), device)

    timed = report.time("kernel_vs_numpy", {"kernel": on("cuda"), "numpy": on("cpu")})
    report.check("speedup_kernel_vs_numpy", timed.ratio("numpy", "kernel"))


def run(report: Report) -> None:
    _numpy_vs_loop(report)
    _pgmpy(report)
    _kernel(report)
