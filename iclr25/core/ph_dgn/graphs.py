"""Graphs as ``edge_index`` tensors, sparse aggregation, and the transfer topologies.

Convention: ``edge_index`` is (2, E) long, row 0 the source v, row 1 the destination u; a
message flows v → u, so the aggregation matrix A (n, n) has A[u, v] = weight and
``A @ X`` sums, at every node u, over its in-neighbours N(u) = {v : (v, u) ∈ E}.

:class:`Aggregation` holds A and Aᵀ as cached CSR matrices: the forward product is A @ X
and its backward Aᵀ @ G with the cached transpose (torch's own sparse backward re-sorts a
transposed copy on every call). ``transposed()`` swaps the two, which is what the second
sum of ∇H needs. :func:`aggregate_index_add` is the plain gather + ``index_add_`` reference.

Topologies follow the official graph-transfer generator (gravins/SWAN): ``line`` has
``distance`` nodes (source 0, target n − 1: distance − 1 hops); ``ring`` has 2·distance
nodes with the target opposite the source; ``crossed-ring`` adds chords i ↔ n−1−i and
i ↔ n+1−i to the ring (reflections across the source–target axis, so the hop
count stays ``distance``). Edges are undirected (both directions listed), no self-loops.
"""

from __future__ import annotations

import warnings

import torch

from iclr25.errors import UsageError

TOPOLOGIES = ("line", "ring", "crossed-ring")
AGGREGATIONS = ("sum", "gcn")


def spmm(a_csr: torch.Tensor, x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """A @ X for a CSR A (n, m) and a dense X (m, d), no autograd; into ``out`` if given
    (a contiguous (n, d) tensor whose contents are ignored).

    On CPU with 32-bit indices this calls ``out.addmm_(A, X, beta=0)``: MKL's sparse
    product straight into the result (β = 0: ``out`` is only written). ``torch.sparse.mm``
    first fills a zero result and, for 64-bit indices, copies both index arrays to 32 bits
    on every call; the direct call measured about 1.5× faster at n = 10⁴–10⁵, width 64,
    with the same values (tests/core/ph_dgn/test_phdgn.py). The in-place form matters:
    ``torch.addmm(out, A, X, out=out)`` copies ``out`` onto itself first (the sparse
    kernel tells input from output by argument, not by storage), a full pass per call.
    """
    if not x.shape[0] or not a_csr.shape[0]:
        y = x.new_zeros(a_csr.shape[0], x.shape[1])
    elif x.device.type != "cpu" or a_csr.crow_indices().dtype != torch.int32:
        y = torch.sparse.mm(a_csr, x)
    else:
        if out is None:
            out = torch.empty(a_csr.shape[0], x.shape[1], dtype=x.dtype)
        return out.addmm_(a_csr, x, beta=0)
    return y if out is None else out.copy_(y)


class _SpMM(torch.autograd.Function):
    """Y = A @ X with dL/dX = Aᵀ @ dL/dY, A and Aᵀ given as CSR (no gradient to A)."""

    @staticmethod
    def forward(ctx, a_csr, a_t_csr, x):
        ctx.a_t_csr = a_t_csr
        return spmm(a_csr, x)

    @staticmethod
    def backward(ctx, grad_out):
        return None, None, _SpMM.apply(ctx.a_t_csr, None, grad_out)


class Aggregation:
    """The sparse matrix A (n, n) of one graph (or a block-diagonal batch of graphs)."""

    def __init__(self, rows: torch.Tensor, cols: torch.Tensor, weight: torch.Tensor, n: int):
        self.n = n
        self.rows, self.cols, self.weight = rows, cols, weight
        self.csr = _csr(rows, cols, weight, n)
        self.csr_t = _csr(cols, rows, weight, n)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """A @ x, x (n, d) -> (n, d)."""
        if self.csr.dtype != x.dtype:
            self.csr, self.csr_t = self.csr.to(x.dtype), self.csr_t.to(x.dtype)
        return _SpMM.apply(self.csr, self.csr_t, x)

    def add_into(self, out: torch.Tensor, x: torch.Tensor) -> None:
        """out += A @ x in place, no autograd (the sparse product accumulates into ``out``)."""
        if self.csr.dtype != x.dtype:
            self.csr, self.csr_t = self.csr.to(x.dtype), self.csr_t.to(x.dtype)
        if x.device.type == "cpu" and x.shape[0] and out.is_contiguous():
            out.addmm_(self.csr, x)  # in place: no self-copy of ``out`` (see spmm)
        else:
            out.add_(spmm(self.csr, x))

    def to(self, device) -> Aggregation:
        """The same A on ``device`` (CSR indices and values moved; rows/cols stay)."""
        out = Aggregation.__new__(Aggregation)
        out.n, out.rows, out.cols, out.weight = self.n, self.rows, self.cols, self.weight
        out.csr, out.csr_t = self.csr.to(device), self.csr_t.to(device)
        return out

    def transposed(self) -> Aggregation:
        """Aᵀ: the sum over out-neighbours {v : (u, v) ∈ E} at every node u."""
        out = Aggregation.__new__(Aggregation)
        out.n, out.rows, out.cols, out.weight = self.n, self.cols, self.rows, self.weight
        out.csr, out.csr_t = self.csr_t, self.csr
        return out

    def dense(self) -> torch.Tensor:
        a = torch.zeros(self.n, self.n, dtype=self.weight.dtype)
        a.index_put_((self.rows, self.cols), self.weight, accumulate=True)
        return a


def _csr(rows, cols, weight, n):
    """CSR of A[rows, cols] = weight (duplicates summed); 32-bit indices when they fit."""
    index = torch.stack([rows, cols])  # (2, E)
    coo = torch.sparse_coo_tensor(index, weight, (n, n), check_invariants=True).coalesce()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
        csr = coo.to_sparse_csr()
        if max(n, csr.values().numel()) < 2**31:
            csr = torch.sparse_csr_tensor(
                csr.crow_indices().to(torch.int32),
                csr.col_indices().to(torch.int32),
                csr.values(),
                (n, n),
                check_invariants=False,  # built from a coalesced COO just above
            )
    return csr


def aggregation(
    edge_index: torch.Tensor, n: int, mode: str = "sum", dtype=None, weight=None
) -> Aggregation:
    """A for ``mode`` ``sum`` (A[u, v] = w per edge v → u, w = 1 without ``weight``) or
    ``gcn`` (self-loops of weight 1 added, A[u, v] = w/√(deg(u)·deg(v)) with deg the
    weighted in-degree including the self-loop, as PyG's ``gcn_norm``)."""
    dtype = dtype or torch.get_default_dtype()
    src, dst = edge_index[0].long(), edge_index[1].long()
    w = torch.ones(src.numel(), dtype=dtype) if weight is None else weight.to(dtype)
    if mode == "sum":
        return Aggregation(dst, src, w, n)
    if mode != "gcn":
        raise UsageError(f"unknown aggregation {mode!r}", f"use one of: {', '.join(AGGREGATIONS)}")
    loops = torch.arange(n)
    src, dst = torch.cat([src, loops]), torch.cat([dst, loops])
    w = torch.cat([w, torch.ones(n, dtype=dtype)])
    deg = torch.zeros(n, dtype=dtype).index_add_(0, dst, w)
    inv_sqrt = deg.pow(-0.5)
    return Aggregation(dst, src, w * inv_sqrt[src] * inv_sqrt[dst], n)


def aggregate_index_add(edge_index: torch.Tensor, x: torch.Tensor, weight=None) -> torch.Tensor:
    """Reference A @ x by gather + ``index_add_`` (messages x_v added at u for v → u)."""
    src, dst = edge_index[0].long(), edge_index[1].long()
    msg = x[src] if weight is None else x[src] * weight[:, None]  # (E, d)
    return torch.zeros_like(x).index_add_(0, dst, msg)


def undirected(pairs: list[tuple[int, int]]) -> torch.Tensor:
    """(2, 2·len(pairs)) edge_index listing each pair in both directions."""
    if not pairs:
        return torch.zeros(2, 0, dtype=torch.long)
    a = torch.tensor(pairs, dtype=torch.long).T  # (2, P)
    return torch.cat([a, a.flip(0)], dim=1)


def topology(name: str, distance: int) -> tuple[torch.Tensor, int, int, int]:
    """(edge_index, n_nodes, source, target) of one transfer graph (module docstring)."""
    if distance < 2:
        raise UsageError(f"distance {distance} is below 2", "use a distance of at least 2")
    if name == "line":
        n = distance
        return undirected([(i, i + 1) for i in range(n - 1)]), n, 0, n - 1
    if name not in TOPOLOGIES:
        raise UsageError(f"unknown topology {name!r}", f"use one of: {', '.join(TOPOLOGIES)}")
    n = 2 * distance
    pairs = {tuple(sorted((i, (i + 1) % n))) for i in range(n)}
    if name == "crossed-ring":
        for i in range(n):
            for j in ((n - 1 - i) % n, (n + 1 - i) % n):
                if i != j:
                    pairs.add(tuple(sorted((i, j))))
    return undirected(sorted(pairs)), n, 0, distance


def hops(edge_index: torch.Tensor, n: int, source: int, target: int) -> int:
    """Shortest-path hop count from ``source`` to ``target`` (BFS; -1 if unreachable)."""
    nbrs: list[list[int]] = [[] for _ in range(n)]
    for v, u in edge_index.T.tolist():
        nbrs[v].append(u)
    dist, frontier = {source: 0}, [source]
    while frontier:
        nxt = []
        for v in frontier:
            for u in nbrs[v]:
                if u not in dist:
                    dist[u] = dist[v] + 1
                    nxt.append(u)
        frontier = nxt
    return dist.get(target, -1)


def batch(edge_index: torch.Tensor, n: int, copies: int) -> torch.Tensor:
    """Block-diagonal edge_index of ``copies`` disjoint copies of one n-node graph."""
    offsets = (torch.arange(copies) * n).repeat_interleave(edge_index.shape[1])  # (copies·E,)
    return edge_index.repeat(1, copies) + offsets
