"""BLAS threading for the small dense problems of style-check.

A linear probe over a few thousand works multiplies small matrices; there a second
BLAS thread only adds synchronisation, and on a busy (oversubscribed) machine OpenBLAS'
spinning threads made such products ~70x slower in our measurements (600 x 168 @ 168 x
20: 0.13 ms with one thread vs 9.7 ms with two). Problems below ``SMALL_ELEMENTS``
therefore run single-threaded; larger ones keep the library's default. (threadpoolctl
comes with scikit-learn; without it nothing is limited.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

SMALL_ELEMENTS = 4_000_000  # n_works * dim below which BLAS runs single-threaded


@contextlib.contextmanager
def blas_threads_for(n_elements: int) -> Iterator[None]:
    try:
        from threadpoolctl import threadpool_limits  # installed with scikit-learn
    except ImportError:
        threadpool_limits = None
    if n_elements >= SMALL_ELEMENTS or threadpool_limits is None:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
