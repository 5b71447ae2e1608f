from __future__ import annotations

import torch
from threadpoolctl import threadpool_info

from iclr25.threads import small_problem_threads


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_small_problems_run_single_threaded_and_settings_come_back():
    torch.set_num_threads(2)
    before_blas = _blas_threads()
    with small_problem_threads(1000):
        assert torch.get_num_threads() == 1
        assert all(n == 1 for n in _blas_threads())
    assert torch.get_num_threads() == 2
    assert _blas_threads() == before_blas


def test_large_problems_keep_the_defaults():
    torch.set_num_threads(2)
    with small_problem_threads(10**9):
        assert torch.get_num_threads() == 2


def test_nested_blocks_keep_the_limit_and_restore_once():
    """Inside a block, a nested one does not ask threadpoolctl again (a ~20 ms library scan
    that dominated dro-bound's bootstrap); the limits hold throughout and come back after."""
    torch.set_num_threads(2)
    before_blas = _blas_threads()
    with small_problem_threads(1000):
        with small_problem_threads(1000):
            assert torch.get_num_threads() == 1
            assert all(n == 1 for n in _blas_threads())
        assert torch.get_num_threads() == 1  # the outer block still holds
    assert torch.get_num_threads() == 2
    assert _blas_threads() == before_blas
