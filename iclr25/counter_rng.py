"""A counter-based random number generator shared by the CPU and CUDA sequential paths.

UCB1 and Thompson sampling are simulated round by round. Their CPU path (numpy, vectorised
over executions), their CUDA kernel (one thread per execution) and the plain per-execution
reference all draw the same numbers: the uniform for execution ``run``, round ``t`` and
stream ``s`` is a pure function of ``(seed, run, t, s)``, so results do not depend on the
device, on how executions are chunked, or on the order in which they are simulated.

Construction (SplitMix64, Steele et al. 2014): each execution gets the key
``mix64(mix64(seed) + (run + 1) * GOLDEN)``; the uniform for counter ``c = t * streams + s``
is ``(mix64(key + (c + 1) * GOLDEN) >> 11 + 0.5) * 2^-53``, which lies in (0, 1).
Stream 0 of a round is the reward; streams 1..k are the per-arm posterior draws of Thompson
sampling. The same constants are in ``iclr25/gpu/kernels/bandit_sequential/kernel.cu``.
"""

from __future__ import annotations

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
MASK64 = (1 << 64) - 1
#: multipliers of the two lanes of the rolling trace hash (odd, so the map is invertible)
HASH_P1 = 0x100000001B3
HASH_P2 = 0xC2B2AE3D27D4EB4F


def mix64(x, xp=np):
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic)."""
    x = xp.asarray(x, dtype=xp.uint64)
    x = x ^ (x >> xp.uint64(30))
    x = x * xp.uint64(MIX1)
    x = x ^ (x >> xp.uint64(27))
    x = x * xp.uint64(MIX2)
    return x ^ (x >> xp.uint64(31))


def mix64_int(x: int) -> int:
    """The same finaliser on one Python int (for the plain reference loops)."""
    x &= MASK64
    x ^= x >> 30
    x = (x * MIX1) & MASK64
    x ^= x >> 27
    x = (x * MIX2) & MASK64
    return x ^ (x >> 31)


def seed_key(seed: int) -> int:
    return mix64_int(seed & MASK64)


def run_keys(seed: int, runs: np.ndarray, xp=np):
    """Per-execution keys for execution indices ``runs`` (uint64, shape (n,))."""
    base = xp.uint64(seed_key(seed))
    idx = xp.asarray(runs, dtype=xp.uint64) + xp.uint64(1)
    return mix64(base + idx * xp.uint64(GOLDEN), xp)


def run_key_int(seed: int, run: int) -> int:
    return mix64_int(seed_key(seed) + ((run + 1) * GOLDEN & MASK64))


def uniforms(keys, counter: int, xp=np):
    """One uniform in (0, 1) per key for the scalar ``counter``; shape of ``keys``."""
    step = xp.uint64(((counter + 1) * GOLDEN) & MASK64)
    bits = mix64(keys + step, xp) >> xp.uint64(11)
    return (bits.astype(xp.float64) + 0.5) * (2.0**-53)


def uniforms_streams(keys, counter0: int, streams: int, xp=np):
    """Uniforms for counters ``counter0 .. counter0 + streams - 1``: shape (n, streams)."""
    offs = xp.arange(counter0 + 1, counter0 + 1 + streams, dtype=xp.uint64)
    steps = offs * xp.uint64(GOLDEN)  # (streams,) wrapping
    bits = mix64(keys[:, None] + steps[None, :], xp) >> xp.uint64(11)  # (n, streams)
    return (bits.astype(xp.float64) + 0.5) * (2.0**-53)


def uniform_int(key: int, counter: int) -> float:
    """The same uniform as :func:`uniforms` for one key, in pure Python."""
    bits = mix64_int(key + (((counter + 1) * GOLDEN) & MASK64)) >> 11
    return (bits + 0.5) * (2.0**-53)
