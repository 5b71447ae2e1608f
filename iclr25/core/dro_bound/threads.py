"""Thread limits for the small dense problems of dro-bound.

Our operations are small (Gram matrices of d ≲ 100 columns, tensors of ≲ 10⁶ elements): on a
busy machine, multi-threaded BLAS and torch intra-op threads spend their time waiting for
each other — measured on a loaded 2-core machine: one Newton solve 6.7 s with two BLAS
threads, 0.05 s with one; one inner maximisation 5.1 s with two torch threads, 0.09 s with
one. :func:`small_problem_threads` runs a block single-threaded and restores the previous
settings after (no process-wide change survives the block).
"""

from __future__ import annotations

import contextlib

#: below this many tensor elements per operation, threads only add synchronisation
SMALL_PROBLEM = 2_000_000


@contextlib.contextmanager
def small_problem_threads(elements: int = 0):
    """One BLAS thread, and one torch thread when ``elements`` < SMALL_PROBLEM."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"), _torch_threads(elements):
        yield


@contextlib.contextmanager
def _torch_threads(elements: int):
    import sys

    torch = sys.modules.get("torch")
    if torch is None or elements >= SMALL_PROBLEM:
        yield
        return
    before = torch.get_num_threads()
    if before > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
