"""Reference tests for the PH-DGN step: ∇H, symplecticity, energy, aggregation paths."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.ph_dgn.graphs import aggregate_index_add, aggregation, hops, topology
from iclr25.core.ph_dgn.models import MODELS, ModelSpec, build, graph_aggregations
from iclr25.core.ph_dgn.phdgn import PHDGN, PHDGNConfig, log_cosh

torch.set_num_threads(1)


def random_directed(n: int, e: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, n, (2, e), generator=g)  # (2, E), may repeat and self-loop


def model64(width=3, seed=0, **kw) -> PHDGN:
    torch.manual_seed(seed)
    return PHDGN(PHDGNConfig(2, 1, width, steps=1, eps=0.1, **kw)).double()


def step_map(model, aggs, n, d):
    def f(x):  # x (n·2d,) in (q, p) order
        q, p = x[: n * d].view(n, d), x[n * d :].view(n, d)
        p2, q2 = model.step(p, q, aggs, 0.0)
        return torch.cat([q2.reshape(-1), p2.reshape(-1)])

    return f


def omega(m: int) -> torch.Tensor:
    eye, zero = torch.eye(m, dtype=torch.float64), torch.zeros(m, m, dtype=torch.float64)
    return torch.cat([torch.cat([zero, eye], 1), torch.cat([-eye, zero], 1)], 0)


@pytest.mark.parametrize("mode", ["sum", "gcn"])
def test_aggregation_csr_equals_index_add_forward_and_backward(mode):
    edges = random_directed(7, 20, 1)
    agg = aggregation(edges, 7, mode, torch.float64)
    x = torch.randn(7, 3, dtype=torch.float64, requires_grad=True)
    ref_x = x.detach().clone().requires_grad_(True)
    y = agg(x)
    ref = aggregate_index_add(torch.stack([agg.cols, agg.rows]), ref_x, agg.weight)
    torch.testing.assert_close(y, ref)
    g = torch.randn(7, 3, dtype=torch.float64)
    (y * g).sum().backward()
    (ref * g).sum().backward()
    torch.testing.assert_close(x.grad, ref_x.grad)
    torch.testing.assert_close(agg.dense() @ x.detach(), y.detach())


def test_gcn_normalisation_hand_computed():
    # path 0-1-2 plus self-loops: degrees 2, 3, 2; Â[0, 1] = 1/√(2·3)
    edges = topology("line", 3)[0]
    a = aggregation(edges, 3, "gcn", torch.float64).dense()
    assert a[0, 1].item() == pytest.approx(1 / math.sqrt(6))
    assert a[1, 1].item() == pytest.approx(1 / 3)
    assert a[0, 2].item() == 0.0


@given(
    st.integers(2, 6), st.integers(0, 14), st.integers(0, 10_000), st.sampled_from(["sum", "gcn"])
)
def test_grad_h_is_autograd_of_h_on_directed_graphs(n, e, seed, mode):
    model = model64(seed=seed)
    agg = aggregation(random_directed(n, e, seed), n, mode, torch.float64)
    s = torch.randn(n, 3, dtype=torch.float64, requires_grad=True)
    (auto,) = torch.autograd.grad(model.h_p.energy(s, agg), s)
    torch.testing.assert_close(model.h_p.grad(s.detach(), agg), auto, rtol=1e-10, atol=1e-12)


def test_grad_h_hand_computed_two_nodes():
    # d = 1, edge 0 → 1, W = w, V = v, b = 0: Z_0 = w s_0, Z_1 = w s_1 + v s_0
    # ∂H/∂s_0 = w tanh(Z_0) + v tanh(Z_1), ∂H/∂s_1 = w tanh(Z_1)
    model = model64(width=1)
    w, v = 0.7, -1.3
    with torch.no_grad():
        model.h_p.w.weight.fill_(w), model.h_p.w.bias.zero_(), model.h_p.v.weight.fill_(v)
    agg = aggregation(torch.tensor([[0], [1]]), 2, "sum", torch.float64)
    s = torch.tensor([[0.4], [-0.9]], dtype=torch.float64)
    z0, z1 = w * 0.4, w * -0.9 + v * 0.4
    expected = [w * math.tanh(z0) + v * math.tanh(z1), w * math.tanh(z1)]
    assert model.h_p.grad(s, agg).flatten().tolist() == pytest.approx(expected, rel=1e-12)
    h = math.log(math.cosh(z0)) + math.log(math.cosh(z1))
    assert model.h_p.energy(s, agg).item() == pytest.approx(h, rel=1e-12)


def test_log_cosh_is_stable():
    z = torch.tensor([0.0, 1.0, -30.0, 800.0], dtype=torch.float64)
    expected = [0.0, math.log(math.cosh(1.0)), 30 - math.log(2), 800 - math.log(2)]
    assert log_cosh(z).tolist() == pytest.approx(expected, rel=1e-12)


@given(st.integers(2, 5), st.integers(1, 12), st.integers(0, 10_000))
def test_step_is_symplectic_with_unit_determinant_on_directed_graphs(n, e, seed):
    d = 2
    model = model64(width=d, seed=seed)
    agg = aggregation(random_directed(n, e, seed), n, "sum", torch.float64)
    x = torch.randn(2 * n * d, dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(step_map(model, (agg, agg), n, d), x)
    om = omega(n * d)
    assert (jac.T @ om @ jac - om).abs().max().item() < 1e-10
    assert torch.linalg.slogdet(jac)[1].abs().item() < 1e-10


def test_reusing_forward_aggregation_breaks_symplecticity():
    # the official form (the same edge list for both sums) is not a gradient on a directed path
    n, d = 4, 2
    model = model64(width=d, seed=3)
    agg = aggregation(torch.tensor([[0, 1, 2], [1, 2, 3]]), n, "sum", torch.float64)
    agg.transposed = lambda: agg  # reuse A where Aᵀ belongs
    x = torch.randn(2 * n * d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        model.h_p.v.weight.mul_(3.0), model.h_q.v.weight.mul_(3.0)
    jac = torch.autograd.functional.jacobian(step_map(model, (agg, agg), n, d), x)
    om = omega(n * d)
    assert (jac.T @ om @ jac - om).abs().max().item() > 1e-3


def test_alpha_beta_zero_equals_conservative():
    edges, n, _, _ = topology("ring", 4)
    x = torch.randn(n, 2, dtype=torch.float64)
    aggs = graph_aggregations(edges, n, torch.float64)
    cons = model64(seed=5)
    port = model64(seed=5, dampening="param+", forcing="dgn-tanh")
    port.load_state_dict(cons.state_dict(), strict=False)
    torch.testing.assert_close(cons(x, aggs), port(x, aggs), rtol=0, atol=0)
    port2 = PHDGN(
        PHDGNConfig(2, 1, 3, 1, 0.1, alpha=1.0, beta=1.0, dampening="param", forcing="dgn-tanh")
    ).double()
    port2.load_state_dict(port.state_dict(), strict=False)
    assert not torch.allclose(cons(x, aggs), port2(x, aggs))


def test_topologies_have_the_official_hop_counts():
    for name, distance, expected in (("line", 10, 9), ("ring", 5, 5), ("crossed-ring", 5, 5)):
        edges, n, s, t = topology(name, distance)
        assert hops(edges, n, s, t) == expected
    edges, n, _, _ = topology("line", 4)
    assert n == 4 and edges.shape == (2, 6)


@pytest.mark.parametrize("name", MODELS)
def test_every_model_maps_nodes_to_outputs_and_mlp_ignores_edges(name):
    torch.manual_seed(0)
    model = build(ModelSpec(name, 2, 1, width=4, steps=3))
    edges, n, _, _ = topology("line", 5)
    x = torch.randn(n, 2)
    out = model(x, graph_aggregations(edges, n))
    assert out.shape == (n, 1) and torch.isfinite(out).all()
    cut = model(x, graph_aggregations(torch.zeros(2, 0, dtype=torch.long), n))
    assert torch.equal(out, cut) == (name == "mlp")


@pytest.mark.parametrize(
    ("dampening", "forcing"), [("mlp", "mlp-sin"), ("dgn", "dgn-tanh"), ("mlp", "dgn-tanh")]
)
def test_official_dampening_and_forcing_modes(dampening, forcing):
    edges, n, _, _ = topology("ring", 4)
    aggs = graph_aggregations(edges, n, torch.float64)
    x = torch.randn(n, 2, dtype=torch.float64)
    cons = model64(seed=2)
    off = model64(seed=2, dampening=dampening, forcing=forcing)  # α = β = 0
    off.load_state_dict(cons.state_dict(), strict=False)
    torch.testing.assert_close(cons(x, aggs), off(x, aggs), rtol=0, atol=0)
    torch.manual_seed(3)
    cfg = PHDGNConfig(2, 1, 3, 1, 0.1, alpha=1.0, beta=1.0, dampening=dampening, forcing=forcing)
    port = PHDGN(cfg).double()
    q = torch.randn(n, 3, dtype=torch.float64)
    damp = port.dampening(q, aggs["sum"])
    assert damp.shape == (n, 3) and (damp >= 0).all()  # mlp and dgn end in a ReLU: D ⪰ 0
    f0, f1 = port.forcing(q, 0.0, aggs["sum"]), port.forcing(q, 1.0, aggs["sum"])
    assert f0.shape == (n, 3) and not torch.allclose(f0, f1)  # F depends on t
    expected = 4 + (dampening == "dgn") + (forcing == "dgn-tanh")
    assert port.aggregations_per_step == expected
    out = port(x, aggs)
    out.sum().backward()
    assert torch.isfinite(out).all() and not torch.allclose(out, cons(x, aggs))


@pytest.mark.parametrize("seed", [0, 1])
def test_step_agrees_across_csr_pyg_and_index_add_on_directed_graphs(seed):
    """The benchmark's three sides: the same PH-DGN step (outputs, input and weight
    gradients) with our CSR aggregation, gather + index_add_ and PyG MessagePassing."""
    pytest.importorskip("torch_geometric")
    from benchmarks.bench_ph_dgn import IndexAddAggregation, PygAggregation

    n, d = 9, 4
    agg = aggregation(random_directed(n, 25, seed), n, "sum", dtype=torch.float64)
    edge_index = torch.stack([agg.cols, agg.rows])  # (2, E) src → dst, as A's entries
    model = model64(width=d, seed=seed)
    torch.manual_seed(seed + 10)
    p0, q0 = torch.randn(n, d, dtype=torch.float64), torch.randn(n, d, dtype=torch.float64)

    def run(side):
        model.zero_grad()
        p, q = p0.clone().requires_grad_(True), q0.clone().requires_grad_(True)
        p2, q2 = model.step(p, q, (side, side), 0.0)
        (p2.sum() + q2.square().sum()).backward()
        weights = [w.grad.clone() for w in (model.h_p.w.weight, model.h_q.v.weight)]
        return [p2.detach(), q2.detach(), p.grad, q.grad, *weights]

    ours = run(agg)
    for side in (IndexAddAggregation(edge_index, agg.weight), PygAggregation(edge_index)):
        for got, want in zip(run(side), ours, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "gcn"])
def test_fused_grad_h_matches_plain_autograd_and_passes_gradcheck(mode):
    """∇H as one node with a written-out backward (hamiltonian_grad) equals the plain
    autograd expression, forward and every first-order gradient, on a directed graph."""
    from iclr25.core.ph_dgn.hamiltonian_grad import HamiltonianGrad

    n, d = 8, 3
    agg = aggregation(random_directed(n, 22, 3), n, mode, torch.float64)
    half = model64(width=d, seed=4).h_p
    s = torch.randn(n, d, dtype=torch.float64, requires_grad=True)
    fused, plain = half.grad(s, agg), half.grad_reference(s, agg)
    cot = torch.randn(n, d, dtype=torch.float64)
    wrt = (s, half.w.weight, half.w.bias, half.v.weight)
    torch.testing.assert_close(fused, plain, rtol=1e-12, atol=1e-12)
    for a, b in zip(torch.autograd.grad(fused, wrt, cot), torch.autograd.grad(plain, wrt, cot),
                    strict=True):  # fmt: skip
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(lambda *t: HamiltonianGrad.apply(*t, agg), wrt)


def _plain_step(model, p, q, aggs):
    """Steps 1–2 through plain autograd ops (the per-half reference ∇H, then the adds)."""
    eps = model.cfg.eps
    q2 = q + eps * model.h_p.grad_reference(p, aggs[0])
    return p - eps * model.h_q.grad_reference(q2, aggs[1]), q2


@pytest.mark.parametrize(("p_mode", "q_mode"), [("sum", "sum"), ("gcn", "sum"), ("sum", "gcn")])
def test_fused_step_equals_plain_autograd_step_with_every_gradient(p_mode, q_mode):
    """PH-DGN_C's step as one autograd node (SymplecticStep, what PHDGN.step runs when
    α = β = 0) equals the plain autograd step in float64: p', q' and the gradients with
    respect to p, q and every parameter of both halves, on a directed graph; and it
    passes gradcheck."""
    from iclr25.core.ph_dgn.hamiltonian_grad import SymplecticStep

    n, d = 9, 4
    edges = random_directed(n, 25, 6)
    aggs = (
        aggregation(edges, n, p_mode, torch.float64),
        aggregation(edges, n, q_mode, torch.float64),
    )
    model = model64(width=d, seed=2, p_agg=p_mode, q_agg=q_mode)
    params = [model.h_p.w.weight, model.h_p.w.bias, model.h_p.v.weight,
              model.h_q.w.weight, model.h_q.w.bias, model.h_q.v.weight]  # fmt: skip
    torch.manual_seed(3)
    p = torch.randn(n, d, dtype=torch.float64, requires_grad=True)
    q = torch.randn(n, d, dtype=torch.float64, requires_grad=True)
    gp, gq = torch.randn(n, d, dtype=torch.float64), torch.randn(n, d, dtype=torch.float64)
    fused, plain = model.step(p, q, aggs, 0.0), _plain_step(model, p, q, aggs)
    assert "SymplecticStep" in type(fused[0].grad_fn).__name__
    for a, b in zip(fused, plain, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    wrt = [p, q, *params]
    got = torch.autograd.grad(fused, wrt, (gp, gq))
    want = torch.autograd.grad(plain, wrt, (gp, gq))
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    # one output used alone (the other's gradient is zero)
    unused = {"allow_unused": True, "materialize_grads": True}  # q' needs no q-half weight
    got = torch.autograd.grad(model.step(p, q, aggs, 0.0)[1].sum(), wrt, **unused)
    want = torch.autograd.grad(_plain_step(model, p, q, aggs)[1].sum(), wrt, **unused)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    assert torch.autograd.gradcheck(
        lambda *t: SymplecticStep.apply(*t, *aggs, model.cfg.eps), (p, q, *params)
    )


def test_port_terms_keep_the_per_half_path():
    """With dampening or forcing active the step is not the fused node (it needs ∇_p H
    on its own) and still equals the plain formula."""
    n, d = 6, 3
    agg = aggregation(random_directed(n, 14, 8), n, "sum", torch.float64)
    model = model64(width=d, seed=5, alpha=1.0, dampening="param")
    p = torch.randn(n, d, dtype=torch.float64, requires_grad=True)
    q = torch.randn(n, d, dtype=torch.float64)
    p2, q2 = model.step(p, q, (agg, agg), 0.0)
    assert "SymplecticStep" not in type(p2.grad_fn).__name__
    dh_dp = model.h_p.grad_reference(p, agg)
    want_q = q + 0.1 * dh_dp
    want_p = p - 0.1 * model.h_q.grad_reference(want_q, agg) - 0.1 * model.damp * dh_dp
    torch.testing.assert_close(q2, want_q, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(p2, want_p, rtol=1e-12, atol=1e-12)


def test_numpy_tanh_in_place_matches_torch():
    from iclr25.core.ph_dgn.hamiltonian_grad import tanh_

    for dtype, tol in ((torch.float32, 1.2e-7), (torch.float64, 3e-16)):
        z = torch.randn(500, 7, dtype=dtype) * 4
        want = torch.tanh(z)
        assert tanh_(z) is not None
        torch.testing.assert_close(z, want, rtol=0, atol=tol)
    view = torch.randn(6, 8)[:, ::2]  # not contiguous: torch's own tanh_
    want = torch.tanh(view)
    torch.testing.assert_close(tanh_(view), want)


def test_spmm_into_a_buffer_ignores_its_contents():
    from iclr25.core.ph_dgn.graphs import spmm

    agg = aggregation(random_directed(30, 90, 5), 30, "sum", torch.float32)
    x, out = torch.randn(30, 5), torch.full((30, 5), math.nan)
    assert spmm(agg.csr, x, out=out) is out
    torch.testing.assert_close(out, agg.dense() @ x)


def test_spmm_with_32_bit_indices_equals_dense_and_accumulates_in_place():
    from iclr25.core.ph_dgn.graphs import spmm

    agg = aggregation(random_directed(30, 90, 5), 30, "gcn", torch.float32)
    assert agg.csr.crow_indices().dtype == torch.int32
    x, out = torch.randn(30, 5), torch.randn(30, 5)
    dense = agg.dense() @ x
    torch.testing.assert_close(spmm(agg.csr, x), dense)
    torch.testing.assert_close(spmm(agg.csr, x.t().contiguous().t()), dense)  # column-major
    want = out + dense
    agg.add_into(out, x)
    torch.testing.assert_close(out, want)


def _kernel_step(device: str, kernel: bool, n: int = 300, d: int = 16):
    """One PH-DGN_C step, forward + backward, float32 on ``device``; the kernel switch set."""
    from iclr25.core.ph_dgn.hamiltonian_grad import use_cuda_kernel

    torch.manual_seed(0)
    agg = aggregation(random_directed(n, 4 * n, 7), n, "gcn", torch.float32).to(device)
    model = PHDGN(PHDGNConfig(1, 1, d, steps=1, eps=0.1)).to(device)
    p = torch.randn(n, d, device=device, requires_grad=True)
    q = torch.randn(n, d, device=device, requires_grad=True)
    before = use_cuda_kernel(kernel)
    try:
        p2, q2 = model.step(p, q, (agg, agg), 0.0)
        (p2.sum() + q2.square().sum()).backward()
    finally:
        use_cuda_kernel(before)
    grads = [model.h_p.w.weight.grad, model.h_q.v.weight.grad, p.grad, q.grad]
    return [t.detach().cpu() for t in (p2, q2, *grads)]


def test_cuda_kernel_switch_leaves_the_cpu_path_unchanged():
    for got, want in zip(_kernel_step("cpu", True), _kernel_step("cpu", False), strict=True):
        assert torch.equal(got, want)


@pytest.mark.gpu
def test_cuda_kernel_step_matches_torch_sparse_on_the_device_and_the_cpu():
    """The wired GPU fast path (CuPy SpMM + tanh) against torch.sparse on the same device
    and against the CPU step: outputs, input and weight gradients."""
    fused, plain, cpu = (
        _kernel_step("cuda", True),
        _kernel_step("cuda", False),
        _kernel_step("cpu", False),
    )
    for a, b, c in zip(fused, plain, cpu, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(a, c, rtol=1e-4, atol=1e-4)
