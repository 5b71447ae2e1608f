"""The exact denoiser against brute-force enumeration and against pgmpy.

Known answers: at (classes, m, s, L) = (3, 2, 2, 2) every derivation (root, rule of every
node) is enumerated; its posterior weight is prior · Π rule weights · Π leaf likelihoods.
BP's marginals of every node must equal the enumerated ones to 1e-12, and 20,000 posterior
samples must pass a χ² test against the enumerated posterior over leaf strings.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from iclr25.core.diffusion_probe import bp
from iclr25.core.diffusion_probe.noise import leaf_messages
from iclr25.core.diffusion_probe.rhm import Grammar, RHMSpec, generate, sample_rules


def _derivations(grammar: Grammar):
    """Every derivation: (probability under the prior, node symbols per level)."""
    out = []

    def expand(level, symbols, prob):
        if level == grammar.depth:
            out.append((prob, symbols))
            return
        parents = symbols[-1]
        choices = [range(grammar.rules[level].shape[1])] * len(parents)
        for ks in itertools.product(*choices):
            p = prob
            children = []
            for a, k in zip(parents, ks, strict=True):
                p *= grammar.weights[level][a, k]
                children += list(grammar.rules[level][a, k])
            if p > 0:
                expand(level + 1, symbols + [children], p)

    for root in range(grammar.classes):
        expand(0, [[root]], 1.0 / grammar.classes)
    return out


def _enumerated_marginals(grammar: Grammar, leaf_msg: np.ndarray):
    """leaf_msg (d, v) -> [per level (nodes, vocab)] and {leaf tuple: posterior}."""
    marg = [np.zeros((grammar.s**lv, grammar.vocab[lv])) for lv in range(grammar.depth + 1)]
    leaves = {}
    total = 0.0
    for prob, symbols in _derivations(grammar):
        w = prob * np.prod([leaf_msg[i, a] for i, a in enumerate(symbols[-1])])
        total += w
        for lv, row in enumerate(symbols):
            marg[lv][np.arange(len(row)), row] += w
        key = tuple(symbols[-1])
        leaves[key] = leaves.get(key, 0.0) + w
    return [m / total for m in marg], {k: w / total for k, w in leaves.items()}


@pytest.fixture(scope="module")
def small():
    spec = RHMSpec(v=3, m=2, s=2, depth=2)
    grammar = sample_rules(spec, np.random.default_rng(3))
    x0, _ = generate(grammar, 1, np.random.default_rng(4))
    return grammar, x0


@pytest.mark.parametrize("noise,level", [("flip", 0.3), ("mask", 0.5), ("soft", 0.4)])
def test_bp_marginals_equal_enumeration(small, noise, level):
    grammar, x0 = small
    msg, _ = leaf_messages(noise, x0, 3, level, np.random.default_rng(5))
    got = bp.marginals(grammar, msg)
    want, _ = _enumerated_marginals(grammar, msg[0])
    for lv in range(grammar.depth + 1):
        np.testing.assert_allclose(got[lv][0], want[lv], atol=1e-12, rtol=0)


def test_bp_marginals_with_unequal_rule_weights(small):
    grammar, x0 = small
    rng = np.random.default_rng(9)
    weights = [rng.random(w.shape) + 0.1 for w in grammar.weights]
    weighted = Grammar(
        grammar.rules, [w / w.sum(1, keepdims=True) for w in weights], grammar.vocab, grammar.s
    )
    msg, _ = leaf_messages("flip", x0, 3, 0.6, rng)
    got = bp.marginals(weighted, msg)
    want, _ = _enumerated_marginals(weighted, msg[0])
    for lv in range(weighted.depth + 1):
        np.testing.assert_allclose(got[lv][0], want[lv], atol=1e-12, rtol=0)


def test_posterior_samples_pass_a_chi_square_test(small):
    grammar, x0 = small
    msg, _ = leaf_messages("flip", x0, 3, 0.5, np.random.default_rng(6))
    _, want = _enumerated_marginals(grammar, msg[0])
    n = 20_000
    msgs = bp.upward(grammar, np.repeat(msg, n, axis=0))
    leaves, _ = bp.sample(grammar, msgs, np.random.default_rng(7).random((n, 1 + 3)))
    keys, counts = np.unique(leaves, axis=0, return_counts=True)
    observed = dict(zip(map(tuple, keys), counts, strict=True))
    assert set(observed) <= set(want)  # never a leaf string the grammar cannot make
    support = sorted(want)
    expected = np.array([want[k] * n for k in support])
    got = np.array([observed.get(k, 0) for k in support])
    keep = expected >= 5
    chi2 = stats.chisquare(got[keep], expected[keep] * got[keep].sum() / expected[keep].sum())
    assert chi2.pvalue > 1e-3


def test_noise_zero_changes_nothing_and_full_noise_forgets_the_class():
    grammar = sample_rules(RHMSpec(9, 6, 3, 3), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    x0, root0 = generate(grammar, 4000, rng)
    for noise in ("flip", "mask", "soft"):
        msg, _ = leaf_messages(noise, x0, 9, 0.0, rng)
        x, root = bp.sample(grammar, bp.upward(grammar, msg), rng.random((4000, 14)))
        assert (x == x0).all() and (root == root0).all()
        msg, _ = leaf_messages(noise, x0, 9, 1.0, rng)
        _, root = bp.sample(grammar, bp.upward(grammar, msg), rng.random((4000, 14)))
        # the class is redrawn from the prior: P(change) = 1 - 1/9, sd ≈ 0.005
        assert abs((root != root0).mean() - 8 / 9) < 0.02


def test_first_unparsable_names_the_datum_and_position():
    grammar = sample_rules(RHMSpec(4, 2, 2, 3), np.random.default_rng(2))
    x0, _ = generate(grammar, 5, np.random.default_rng(3))
    assert bp.first_unparsable(grammar, x0) is None
    bad = x0.copy()
    # a leaf pair no rule of level 2 produces: find one
    produced = {tuple(t) for t in grammar.rules[2].reshape(-1, 2)}
    pair = next(p for p in itertools.product(range(4), repeat=2) if p not in produced)
    bad[3, 4:6] = pair
    assert bp.first_unparsable(grammar, bad) == (3, 4)


def test_pgmpy_variable_elimination_gives_the_same_marginals():
    pgmpy = pytest.importorskip("pgmpy")
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.inference import VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork

    del pgmpy
    spec = RHMSpec(v=4, m=2, s=2, depth=3)
    grammar = sample_rules(spec, np.random.default_rng(11))
    x0, _ = generate(grammar, 1, np.random.default_rng(12))
    eps = 0.35
    msg, xt = leaf_messages("flip", x0, 4, eps, np.random.default_rng(13))
    edges, cpds = [], []
    cpds.append(TabularCPD("x0_0", 4, [[0.25]] * 4))
    for lv in range(grammar.depth):
        for j in range(grammar.s**lv):
            node, rule = f"x{lv}_{j}", f"k{lv}_{j}"
            edges.append((node, rule))
            cpds.append(TabularCPD(rule, 2, grammar.weights[lv].T, [node], [4]))
            for i in range(grammar.s):
                child = f"x{lv + 1}_{j * grammar.s + i}"
                edges += [(node, child), (rule, child)]
                table = np.zeros((4, 4 * 2))  # columns: (parent a, rule k), k fastest
                for a in range(4):
                    for k in range(2):
                        table[grammar.rules[lv][a, k, i], a * 2 + k] = 1.0
                cpds.append(TabularCPD(child, 4, table, [node, rule], [4, 2]))
    channel = np.full((4, 4), eps / 4) + (1 - eps) * np.eye(4)  # P(obs = b | x = a)
    for i in range(grammar.d):
        edges.append((f"x3_{i}", f"o{i}"))
        cpds.append(TabularCPD(f"o{i}", 4, channel, [f"x3_{i}"], [4]))
    net = DiscreteBayesianNetwork(edges)
    net.add_cpds(*cpds)
    evidence = {f"o{i}": int(xt[0, i]) for i in range(grammar.d)}
    infer = VariableElimination(net)
    got = bp.marginals(grammar, msg)
    for lv, j in [(0, 0), (1, 1), (2, 3), (3, 5)]:
        want = infer.query([f"x{lv}_{j}"], evidence=evidence, show_progress=False).values
        np.testing.assert_allclose(got[lv][0, j], want, atol=1e-10)
