"""The error bounds gpu-bench checks every row with (iclr25/gpu/tolerance.py)."""

from __future__ import annotations

import math

import pytest
import torch

from iclr25.gpu.tolerance import Tolerance, compare


def test_bound_is_row_rms_plus_relative_plus_absolute():
    exact = torch.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=torch.float64)  # row RMS 3.536, 0
    bound = Tolerance(rtol=0.1, atol_rms=0.01, atol=0.5).bound(exact)
    rms = math.sqrt(12.5)
    expected = [[0.01 * rms + 0.3 + 0.5, 0.01 * rms + 0.4 + 0.5], [0.5, 0.5]]
    assert bound.flatten().tolist() == pytest.approx([x for row in expected for x in row])


def test_compare_reports_the_worst_ratio_and_flags_non_finite_outputs():
    exact = torch.tensor([[1.0, -2.0, 100.0]])
    out = exact + torch.tensor([[0.01, 0.0, -0.5]])
    report = compare("C", out, exact, Tolerance(rtol=0.01))
    assert report.max_abs_err == pytest.approx(0.5) and report.ok
    assert report.error_ratio == pytest.approx(1.0)  # 0.01 / (0.01 * 1) and 0.5 / (0.01 * 100)
    assert not compare("C", out, exact, Tolerance(rtol=0.001)).ok
    nan = compare("C", torch.tensor([[float("nan"), 1.0]]), torch.ones(1, 2), Tolerance(atol=1.0))
    assert not nan.ok and nan.error_ratio == math.inf
    assert compare("C", torch.zeros(0), torch.zeros(0), Tolerance()).ok


def test_an_error_where_the_bound_is_zero_is_never_within_tolerance():
    report = compare("C", torch.tensor([[1e-9]]), torch.zeros(1, 1), Tolerance(rtol=1.0))
    assert not report.ok and report.error_ratio == math.inf
    assert compare("C", torch.zeros(1, 1), torch.zeros(1, 1), Tolerance()).ok


def test_row_rms_scales_with_the_output_unlike_a_fixed_absolute_bound():
    """The issue's case: attention outputs at N = 4097 have an RMS of ~0.026, smaller than
    bf16's 4u = 0.0156 absolute; a 5% error passes an absolute bound but not the RMS one."""
    gen = torch.Generator().manual_seed(0)
    exact = 0.026 * torch.randn(64, 128, generator=gen, dtype=torch.float64)
    wrong = exact * 1.05
    u = 2.0**-8
    assert compare("O", wrong, exact, Tolerance(rtol=4 * u, atol=4 * u)).ok  # the old bound
    assert not compare("O", wrong, exact, Tolerance(rtol=2 * u, atol_rms=6 * u)).ok


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        compare("C", torch.zeros(2, 2), torch.zeros(2, 3), Tolerance())
