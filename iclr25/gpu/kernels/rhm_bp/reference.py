"""The plain per-datum, per-node definition of the ``rhm_bp`` kernel (Python floats).

One datum at a time, one node at a time, on the flattened layout of :func:`flatten`:
the definition the CUDA kernel and the vectorised numpy path
(``iclr25/core/diffusion_probe/bp.py``) are tested against, and the "plain loop" baseline
of ``benchmarks/bench_diffusion_probe.py``.
"""

from __future__ import annotations

import numpy as np

META = 5  # vocab, m, rules offset, weights offset, message offset


def flatten(rules: list, weights: list, vocab: list, s: int):
    """(rules int32, weights float32, meta int32 (L + 1, 5), total_msgs) of a grammar."""
    depth = len(rules)
    meta = np.zeros((depth + 1, META), np.int32)
    r_parts, w_parts = [], []
    r_off = w_off = m_off = 0
    for level in range(depth + 1):
        nodes = s**level
        meta[level, 0] = vocab[level]
        meta[level, 4] = m_off
        m_off += nodes * vocab[level]
        if level < depth:
            meta[level, 1] = rules[level].shape[1]
            meta[level, 2], meta[level, 3] = r_off, w_off
            r_parts.append(np.asarray(rules[level], np.int32).ravel())
            w_parts.append(np.asarray(weights[level], np.float32).ravel())
            r_off += r_parts[-1].size
            w_off += w_parts[-1].size
    return np.concatenate(r_parts), np.concatenate(w_parts), meta, m_off


def bp_sample_reference(leaf, rules, weights, vocab, s, uniforms, prior=None):
    """(leaves (n, d), root (n,), messages (n, total)) by explicit loops over data and nodes."""
    depth = len(rules)
    d = s**depth
    n = leaf.shape[0]
    prior = np.full(vocab[0], 1.0 / vocab[0]) if prior is None else prior
    offsets = np.cumsum([0] + [s**lv * vocab[lv] for lv in range(depth + 1)])
    out_leaves = np.zeros((n, d), np.int64)
    out_root = np.zeros(n, np.int64)
    out_msgs = np.zeros((n, int(offsets[-1])))
    for b in range(n):
        msgs = [None] * (depth + 1)
        msgs[depth] = [_normalised(list(leaf[b, j])) for j in range(d)]
        for level in range(depth - 1, -1, -1):
            msgs[level] = [
                _normalised(_node_message(rules[level], weights[level], msgs[level + 1], j, s))
                for j in range(s**level)
            ]
        for level in range(depth + 1):
            row = np.asarray(msgs[level]).ravel()
            out_msgs[b, offsets[level] : offsets[level] + row.size] = row
        leaves, root = _sample_one(rules, weights, msgs, prior, uniforms[b], s)
        out_leaves[b], out_root[b] = leaves, root
    return out_leaves, out_root, out_msgs


def _node_message(rules, weights, children, j, s):
    n_in, m, _ = rules.shape
    out = []
    for a in range(n_in):
        total = 0.0
        for k in range(m):
            p = float(weights[a, k])
            for i in range(s):
                p *= children[j * s + i][rules[a, k, i]]
            total += p
        out.append(total)
    return out


def _normalised(values):
    total = sum(values)
    return [x / total if total > 0 else 0.0 for x in values]


def _inverse_cdf(values, u):
    threshold = u * sum(values)
    cum, count = 0.0, 0
    for x in values:
        cum += x
        if cum <= threshold:
            count += 1
    return min(count, len(values) - 1)


def _sample_one(rules, weights, msgs, prior, u, s):
    root = _inverse_cdf([prior[a] * msgs[0][0][a] for a in range(len(prior))], u[0])
    symbols, offset = [root], 1
    for level, (r, w) in enumerate(zip(rules, weights, strict=True)):
        children = []
        for j, a in enumerate(symbols):
            probs = []
            for k in range(r.shape[1]):
                p = float(w[a, k])
                for i in range(s):
                    p *= msgs[level + 1][j * s + i][r[a, k, i]]
                probs.append(p)
            k = _inverse_cdf(probs, u[offset + j])
            children += [int(c) for c in r[a, k]]
        offset += len(symbols)
        symbols = children
    return symbols, root
