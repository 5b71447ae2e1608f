"""The exact denoiser of a tree grammar: belief propagation (sum-product), batched.

The grammar is a tree graphical model (node symbols and the rule each node picks), so
p(x_0 | x_t) is computed exactly in two sweeps (Sclocchi, Favero, Levi & Wyart, ICLR 2025,
Section 2; Mézard & Montanari, ch. 14):

1. upward messages, leaves to root, for a node at level ℓ with children c_1..c_s:
       ν↑(a) ∝ Σ_k w_ℓ[a, k] Π_i ν↑_{c_i}(R_ℓ[a, k, i])                    (normalised)
2. posterior sampling, root to leaves (forward filtering, backward sampling on a tree):
   the root from prior(a)·ν↑_root(a), then every node with drawn symbol a draws its rule
   k with probability ∝ w_ℓ[a, k] Π_i ν↑_{c_i}(R_ℓ[a, k, i]) and sets its children to
   R_ℓ[a, k, ·].

Sampling draws one uniform per choice, passed in (``uniforms``, one row per datum: the
root first, then the nodes of level 0, 1, ..., L − 1 left to right), so the CPU path and
the CUDA kernel (``iclr25/gpu/kernels/rhm_bp``) draw the same samples. All node marginals
(:func:`marginals`) add a downward message pass; the tests compare them with enumeration.

Shapes: n data, d = s^L leaves, ``msgs[ℓ]`` is (n, s^ℓ, vocab[ℓ]). :func:`upward` and
:func:`sample` also run on CuPy arrays (the vectorised GPU baseline gpu-bench measures the
kernel against).
"""

from __future__ import annotations

import numpy as np

from iclr25.core.diffusion_probe.rhm import Grammar


def array_module(x):
    """numpy, or cupy for CuPy arrays (without importing cupy on CPU machines)."""
    if type(x).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


def upward(grammar: Grammar, leaf_msgs: np.ndarray) -> list[np.ndarray]:
    """Normalised upward messages of every level, ``msgs[0]`` the root's (n, 1, classes).

    A node whose evidence no rule can explain gets an all-zero message (and so does every
    ancestor): the data cannot come from the grammar."""
    xp = array_module(leaf_msgs)
    n = leaf_msgs.shape[0]
    msgs: list[np.ndarray] = [None] * (grammar.depth + 1)  # type: ignore[list-item]
    msgs[grammar.depth] = _normalise(leaf_msgs)
    for level in range(grammar.depth - 1, -1, -1):
        child = msgs[level + 1].reshape(n, grammar.s**level, grammar.s, -1)  # (n, N, s, v')
        per_rule = _rule_products(child, xp.asarray(grammar.rules[level]))  # (n, N, n_ℓ, m)
        weights = xp.asarray(grammar.weights[level])
        msgs[level] = _normalise(xp.einsum("xjak,ak->xja", per_rule, weights))
    return msgs


def _rule_products(child: np.ndarray, rules: np.ndarray) -> np.ndarray:
    """Π_i child[:, :, i, R[a, k, i]]: (n, N, s, v') and (n_ℓ, m, s) -> (n, N, n_ℓ, m)."""
    out = child[:, :, 0, rules[:, :, 0]]
    for i in range(1, rules.shape[2]):
        out = out * child[:, :, i, rules[:, :, i]]
    return out


def _normalise(msg: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row stays zero."""
    xp = array_module(msg)
    total = msg.sum(axis=-1, keepdims=True)
    return msg / xp.where(total > 0, total, 1.0)


def root_posterior(grammar: Grammar, msgs: list[np.ndarray], prior=None) -> np.ndarray:
    """p(root = a | x_t): (n, classes) (uniform class prior unless ``prior``)."""
    xp = array_module(msgs[0])
    prior = xp.full(grammar.classes, 1.0 / grammar.classes) if prior is None else prior
    return _normalise(msgs[0][:, 0, :] * xp.asarray(prior))


def uniforms_per_datum(grammar: Grammar) -> int:
    """One for the root and one per internal node: 1 + (s^L − 1)/(s − 1)."""
    return 1 + (grammar.s**grammar.depth - 1) // (grammar.s - 1)


def _draw(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw along the last axis: index of the first cum > u·total."""
    xp = array_module(weights)
    cum = xp.cumsum(weights, axis=-1)
    idx = (cum <= u[..., None] * cum[..., -1:]).sum(axis=-1)
    return xp.minimum(idx, weights.shape[-1] - 1)


def sample(
    grammar: Grammar, msgs: list[np.ndarray], uniforms: np.ndarray, prior=None
) -> tuple[np.ndarray, np.ndarray]:
    """A posterior sample per datum: (leaves (n, d), root (n,)), from ``uniforms``."""
    xp = array_module(msgs[0])
    n = uniforms.shape[0]
    root = _draw(root_posterior(grammar, msgs, prior), uniforms[:, 0])
    symbols = root[:, None]  # (n, 1)
    offset = 1
    for level in range(grammar.depth):
        nodes = grammar.s**level
        u = uniforms[:, offset : offset + nodes]  # (n, N)
        offset += nodes
        child = msgs[level + 1].reshape(n, nodes, grammar.s, -1)  # (n, N, s, v')
        rules = xp.asarray(grammar.rules[level])[symbols]  # (n, N, m, s)
        probs = xp.asarray(grammar.weights[level])[symbols]  # (n, N, m)
        for i in range(grammar.s):
            probs = probs * xp.take_along_axis(child[:, :, i, :], rules[..., i], axis=-1)
        k = _draw(probs, u)  # (n, N)
        children = xp.take_along_axis(rules, k[..., None, None], axis=2)[:, :, 0, :]
        symbols = children.reshape(n, nodes * grammar.s)
    return symbols, root


def marginals(grammar: Grammar, leaf_msgs: np.ndarray, prior=None) -> list[np.ndarray]:
    """Exact posterior marginals of every node, ``out[ℓ]`` (n, s^ℓ, vocab[ℓ])."""
    up = upward(grammar, leaf_msgs)
    n = leaf_msgs.shape[0]
    prior = np.full(grammar.classes, 1.0 / grammar.classes) if prior is None else prior
    down = np.broadcast_to(prior, (n, 1, grammar.classes)).copy()  # μ↓ of the root
    out = [_normalise(down * up[0])]
    for level in range(grammar.depth):
        nodes = grammar.s**level
        child = up[level + 1].reshape(n, nodes, grammar.s, -1)  # (n, N, s, v')
        rules, weights = grammar.rules[level], grammar.weights[level]
        n_out = grammar.vocab[level + 1]
        # T(a, k) without child i's own message, scattered onto b = R[a, k, i]
        base = down[..., None] * weights  # (n, N, n_ℓ, m)
        child_down = np.zeros((n, nodes, grammar.s, n_out))
        for i in range(grammar.s):
            t = base.copy()
            for j in range(grammar.s):
                if j != i:
                    t = t * child[:, :, j, rules[:, :, j]]
            onehot = np.eye(n_out)[rules[:, :, i].ravel()]  # (n_ℓ·m, n_out)
            child_down[:, :, i, :] = t.reshape(n, nodes, -1) @ onehot
        down = _normalise(child_down.reshape(n, nodes * grammar.s, n_out))
        out.append(_normalise(down * up[level + 1]))
    return out


def first_unparsable(grammar: Grammar, data: np.ndarray) -> tuple[int, int] | None:
    """(datum, leaf position) of the first datum the grammar cannot generate, or None.

    The position is the first leaf under the lowest node whose evidence no rule explains."""
    onehot = np.eye(grammar.vocab[-1])[data]  # (n, d, v)
    msgs = upward(grammar, onehot)
    bad = np.flatnonzero(msgs[0][:, 0, :].sum(axis=1) == 0)
    if bad.size == 0:
        return None
    i = int(bad[0])
    for level in range(grammar.depth - 1, -1, -1):
        dead = np.flatnonzero(msgs[level][i].sum(axis=1) == 0)
        if dead.size:
            return i, int(dead[0]) * grammar.s ** (grammar.depth - level)
    return i, 0
