"""Nearest-Neighbour Alignment (NNA): the ID heads, FIFO queue and loss of MIM-Refiner.

Alkin et al., ICLR 2025 (arXiv 2402.10093), Sec. 3; repository ml-jku/MIM-Refiner
src/losses/ssl/nnclr_loss.py, src/modules/ssl/nnclr_queue.py, src/models/ssl/nnclr_head.py.

Symbols → code, for a head j on block b:
- ``h``  = h_b(x), the pooled block output;  ``z`` = normalize(g_j(h)) (projector, detached);
- ``p``  = normalize(q_j(g_j(h))) (predictor; the only branch with gradient);
- ``NN(z_i, Q)``: a queue entry drawn uniformly from the top-k cosine neighbours of z_i in
  Q, after masking entries of the same image (similarity −1);
- NNA row i:  −log e^{NN(z_i)·p_i/τ} / (e^{NN(z_i)·p_i/τ} + Σ_{k≠i} e^{z_i·p_k/τ});
  ``nnclr`` (Dwibedi et al. 2021) swaps z_i → NN(z_i) in every logit of the row.
The loss is averaged over rows and over both ordered view pairs (x', x'') and (x'', x').
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

OBJECTIVES = ("nna", "nnclr")


def mlp(dims: list[int], last_bn: bool = True) -> nn.Sequential:
    """Linear–BN–GELU layers, the last one Linear–BN (the repository's head layout)."""
    layers: list[nn.Module] = []
    for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        layers.append(nn.Linear(d_in, d_out))
        last = i == len(dims) - 2
        if not last or last_bn:
            layers.append(nn.BatchNorm1d(d_out))
        if not last:
            layers.append(nn.GELU())
    for layer in layers:
        if isinstance(layer, nn.Linear):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


class NNAHead(nn.Module):
    """Projector g (d → hidden → hidden → out) and predictor q (out → 2·hidden → out).

    The repository's "micro" preset is 256/512/128; defaults here scale it to a 64-wide toy.
    """

    def __init__(self, dim: int, hidden: int = 256, out: int = 128) -> None:
        super().__init__()
        self.projector = mlp([dim, hidden, hidden, out])
        self.predictor = mlp([out, 2 * hidden, out])

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        proj = self.projector(h)  # (B, out)
        pred = self.predictor(proj)  # (B, out)
        return F.normalize(proj.detach(), dim=1), F.normalize(pred, dim=1)


def top_candidates(sims: torch.Tensor, topk: int) -> torch.Tensor:
    """(B, topk) column indices of the ``topk`` largest entries of each row of ``sims``.

    CPU (and CUDA without CuPy, or topk > 32): ``torch.topk``. CUDA with CuPy: the
    ``topk_cosine`` selection kernel reads the torch tensor in place through DLPack
    (:func:`iclr25.gpu.kernels.topk_cosine.topk_rows_cuda`; ties → smaller index)."""
    if sims.is_cuda:
        from iclr25.gpu import get_cupy
        from iclr25.gpu.kernels.topk_cosine import MAX_K, topk_rows_cuda

        if get_cupy() is not None and topk <= MAX_K:
            _, idx = topk_rows_cuda(sims.detach().float().contiguous(), topk)
            return torch.from_dlpack(idx).long()  # (B, topk), on the same device
    return torch.topk(sims, topk, dim=1).indices


class FifoQueue:
    """Q: ``size`` unit projections with the image index of each (−1 = empty), kept on
    ``device`` (the look-up runs where the queue lives)."""

    def __init__(self, size: int, dim: int, device: str | torch.device = "cpu") -> None:
        self.entries = torch.zeros(size, dim, device=device)
        self.ids = torch.full((size,), -1, dtype=torch.int64, device=device)
        self.ptr = 0
        self.filled = 0

    def push(self, z: torch.Tensor, ids: torch.Tensor) -> None:
        """Write rows FIFO, wrapping around the end."""
        n, size = len(z), len(self.entries)
        slots = (self.ptr + torch.arange(n, device=self.entries.device)) % size
        self.entries[slots] = z.detach().float().to(self.entries.device)
        self.ids[slots] = ids.to(self.ids.device)
        self.ptr = int((self.ptr + n) % size)
        self.filled = min(size, self.filled + n)

    def neighbours(self, z: torch.Tensor, ids: torch.Tensor, topk: int, gen: torch.Generator):
        """NN(z_i, Q): one of the top-k entries (same image masked), uniformly at random."""
        sims = z @ self.entries.T  # (B, size)
        same = ids.to(self.ids.device)[:, None] == self.ids[None, :]
        sims = sims.masked_fill(same | (self.ids[None, :] < 0), -1.0)
        top = top_candidates(sims, topk)  # (B, topk)
        pick = torch.randint(0, topk, (len(z),), generator=gen).to(top.device)
        return self.entries[top[torch.arange(len(z), device=top.device), pick]]  # (B, out)


def nna_logits(z: torch.Tensor, nn_z: torch.Tensor, p: torch.Tensor, tau: float, objective: str):
    """(B, B) logits of one ordered view pair; the target of row i is column i."""
    if objective == "nnclr":
        return nn_z @ p.T / tau
    logits = z @ p.T / tau  # negatives: the anchor's own projection
    positive = (nn_z * p).sum(1) / tau  # (B,) the swapped positive
    return logits - torch.diag(torch.diagonal(logits)) + torch.diag(positive)


def nna_loss(z, nn_z, p, tau: float, objective: str = "nna") -> torch.Tensor:
    logits = nna_logits(z, nn_z, p, tau, objective)
    return F.cross_entropy(logits, torch.arange(len(z), device=logits.device))


def head_loss(
    head: NNAHead,
    queue: FifoQueue,
    h1: torch.Tensor,
    h2: torch.Tensor,
    ids: torch.Tensor,
    cfg,
    topk: int,
    gen: torch.Generator,
) -> torch.Tensor:
    """Both ordered view pairs of one head; then view 1's projections enter the queue."""
    z1, p1 = head(h1)
    z2, p2 = head(h2)
    nn1 = queue.neighbours(z1, ids, topk, gen)
    nn2 = queue.neighbours(z2, ids, topk, gen)
    loss = 0.5 * (
        nna_loss(z1, nn1, p2, cfg.tau, cfg.objective)
        + nna_loss(z2, nn2, p1, cfg.tau, cfg.objective)
    )
    queue.push(z1, ids)
    return loss
