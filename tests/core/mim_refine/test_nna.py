"""NNA loss, FIFO queue, heads on hooked blocks, layer-wise lrs of the refinement."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr25.core.mim_refine.encoder import BlockTaps, Encoder
from iclr25.core.mim_refine.nna import FifoQueue, nna_logits, nna_loss, top_candidates
from iclr25.core.mim_refine.refine import (
    RefineConfig,
    check_refine_config,
    layer_lrs,
    parse_heads,
    refine,
)
from iclr25.errors import UsageError
from iclr25.testing import assert_close

torch.set_num_threads(1)


def unit(*shape, seed=0):
    return F.normalize(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)), dim=-1)


def test_nna_row_loss_matches_a_loop_over_rows():
    z, nn_z, p = unit(6, 8, seed=1), unit(6, 8, seed=2), unit(6, 8, seed=3)
    tau = 0.2
    rows = []
    for i in range(6):
        pos = math.exp(float(nn_z[i] @ p[i]) / tau)
        neg = sum(math.exp(float(z[i] @ p[k]) / tau) for k in range(6) if k != i)
        rows.append(-math.log(pos / (pos + neg)))
    assert_close(nna_loss(z, nn_z, p, tau), sum(rows) / 6, rtol=1e-5)


def test_nna_equals_infonce_when_the_queue_holds_the_anchors():
    z, p = unit(5, 4, seed=4), unit(5, 4, seed=5)
    queue = FifoQueue(8, 4)
    queue.push(z, torch.arange(100, 105))  # other image ids: not masked
    nn_z = queue.neighbours(z, torch.arange(5), topk=1, gen=torch.Generator().manual_seed(0))
    assert_close(nn_z, z, atol=1e-7)
    infonce = F.cross_entropy(z @ p.T / 0.3, torch.arange(5))
    assert_close(nna_loss(z, nn_z, p, 0.3), infonce, rtol=1e-6)


def test_nna_and_nnclr_differ_only_off_the_diagonal():
    z, nn_z, p = unit(5, 4, seed=6), unit(5, 4, seed=7), unit(5, 4, seed=8)
    a, b = nna_logits(z, nn_z, p, 0.2, "nna"), nna_logits(z, nn_z, p, 0.2, "nnclr")
    assert_close(torch.diagonal(a), torch.diagonal(b), rtol=1e-6)
    off = ~torch.eye(5, dtype=torch.bool)
    assert (a[off] - b[off]).abs().min() > 1e-4
    assert_close(a[off], (z @ p.T / 0.2)[off], rtol=1e-6)


def test_fifo_queue_wraps_and_never_returns_the_same_image():
    queue = FifoQueue(5, 2)
    queue.push(torch.ones(3, 2), torch.tensor([0, 1, 2]))
    queue.push(2 * torch.ones(3, 2), torch.tensor([3, 4, 5]))
    assert queue.ptr == 1 and queue.filled == 5
    assert queue.ids.tolist() == [5, 1, 2, 3, 4]  # slot 0 overwritten by the wrap
    assert queue.entries[0].tolist() == [2.0, 2.0]
    # the anchor's own image sits in the queue with similarity 1: it must be masked
    z = unit(4, 3, seed=9)
    queue = FifoQueue(8, 3)
    queue.push(torch.cat([z, unit(4, 3, seed=10)]), torch.tensor([0, 1, 2, 3, 10, 11, 12, 13]))
    for seed in range(5):
        got = queue.neighbours(z, torch.arange(4), topk=3, gen=torch.Generator().manual_seed(seed))
        assert ((got @ z.T).diagonal() < 1 - 1e-6).all()


def _masked_queue_sims(seed=0, batch=37, size=300, dim=16):
    """A filled queue, a batch of anchors (some of whose images are in the queue) and the
    masked similarity matrix of the look-up (float32, distinct values)."""
    z = unit(batch, dim, seed=seed)
    queue = FifoQueue(size, dim)
    queue.push(unit(size, dim, seed=seed + 1), torch.arange(size) % 250)  # ids repeat
    ids = torch.arange(batch) * 7  # several anchors share an image with queue entries
    sims = (z @ queue.entries.T).masked_fill(ids[:, None] == queue.ids[None, :], -1.0)
    return z, ids, queue, sims


def _reference_candidates(sims: torch.Tensor, topk: int) -> np.ndarray:
    """Stable sort by (−score, index) in float64, the kernel's order."""
    s = sims.double().numpy()
    order = np.lexsort((np.broadcast_to(np.arange(s.shape[1]), s.shape), -s), axis=-1)
    return order[:, :topk]


def test_top_candidates_cpu_is_torch_topk_and_matches_the_reference():
    _, _, _, sims = _masked_queue_sims()
    for topk in (1, 5, 20, 40):
        got = top_candidates(sims, topk)
        assert torch.equal(got, torch.topk(sims, topk, dim=1).indices)  # CPU path unchanged
        assert (np.sort(got.numpy(), 1) == np.sort(_reference_candidates(sims, topk), 1)).all()


@pytest.mark.gpu
def test_queue_lookup_on_cuda_uses_the_kernel_and_matches_the_reference():
    from iclr25.gpu import get_cupy

    assert get_cupy() is not None  # the kernel path, not the torch.topk fallback
    z, ids, queue, sims = _masked_queue_sims(seed=3)
    for topk in (1, 7, 20, 32):
        got = top_candidates(sims.cuda(), topk)
        assert got.is_cuda and got.dtype == torch.int64
        assert (got.cpu().numpy() == _reference_candidates(sims, topk)).all()  # ordered
    # the whole look-up: a queue on the device picks the same entries as the CPU queue
    cuda_queue = FifoQueue(len(queue.entries), queue.entries.shape[1], device="cuda")
    cuda_queue.push(queue.entries.cuda(), queue.ids)
    for seed in range(3):
        cpu = queue.neighbours(z, ids, 20, torch.Generator().manual_seed(seed))
        gpu = cuda_queue.neighbours(z.cuda(), ids, 20, torch.Generator().manual_seed(seed))
        assert_close(gpu.cpu(), cpu, atol=1e-6)


def tiny_encoder(depth=4, dim=16):
    import timm

    vit = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, img_size=16, patch_size=8, embed_dim=dim,
        depth=depth, num_heads=2, num_classes=0,
    )  # fmt: skip
    return Encoder(vit, list(vit.blocks), "timm", "", dim, 1, True, 16, (0.5,) * 3, (0.25,) * 3)


def test_taps_hand_heads_the_block_outputs_without_final_norm():
    enc = tiny_encoder()
    x = torch.randn(3, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    taps = BlockTaps(enc, [1, 3], "cls")
    with torch.no_grad():
        enc.run(x)
        vit = enc.module
        tokens = vit.norm_pre(vit._pos_embed(vit.patch_embed(x)))  # (B, 1 + N, D)
        outs = []
        for blk in vit.blocks:
            tokens = blk(tokens)
            outs.append(tokens)
    taps.remove()
    assert_close(taps.pooled[1], outs[1][:, 0], atol=1e-6)
    assert_close(taps.pooled[3], outs[3][:, 0], atol=1e-6)
    assert (vit.norm(outs[3])[:, 0] - taps.pooled[3]).abs().max() > 1e-3  # really no norm


def test_layer_lrs_follow_base_times_decay_to_the_l_plus_1_minus_b():
    enc = tiny_encoder(depth=4)
    groups = layer_lrs(enc, 1e-3, 0.65)
    assert [g["block"] for g in groups] == [0, 1, 2, 3, 4]
    for g in groups:
        assert g["lr"] == pytest.approx(1e-3 * 0.65 ** (4 + 1 - g["block"]))
    n_params = sum(len(g["params"]) for g in groups)
    assert n_params == len(list(enc.module.parameters()))


def test_heads_and_config_checks():
    assert parse_heads("auto", 8) == (6, 7, 8) and parse_heads("auto", 24) == tuple(range(17, 25))
    assert parse_heads("4,2", 8) == (2, 4)
    for bad, what in (("0,3", "1..8"), ("9", "1..8"), ("3,3", "repeats"), ("a", "1..8")):
        with pytest.raises(UsageError, match=what):
            parse_heads(bad, 8)
    with pytest.raises(UsageError, match="4 × --batch-size"):
        check_refine_config(RefineConfig((1,), batch_size=64, queue=255))


def test_refinement_is_seeded_and_trains_only_what_it_should():
    enc_a, enc_b = tiny_encoder(), tiny_encoder()
    enc_b.module.load_state_dict(enc_a.module.state_dict())
    before = {k: v.clone() for k, v in enc_a.module.state_dict().items()}
    images = torch.randint(0, 256, (40, 16, 16, 3), dtype=torch.uint8)
    cfg = RefineConfig((2, 4), head_steps=2, steps=2, batch_size=8, queue=32, topk=3,
                       head_hidden=16, head_out=8)  # fmt: skip
    a = refine(enc_a, images, cfg, seed=3)
    b = refine(enc_b, images, cfg, seed=3)
    assert a == b and len(a["loss_curve"]) == 4
    after = enc_a.module.state_dict()
    assert not torch.equal(after["blocks.1.attn.qkv.weight"], before["blocks.1.attn.qkv.weight"])
    # the final norm is on no head's path: untouched
    assert torch.equal(after["norm.weight"], before["norm.weight"])


@pytest.mark.gpu
def test_refinement_on_cuda_follows_the_cpu_run_and_returns_the_encoder_to_cpu():
    enc_cpu, enc_gpu = tiny_encoder(), tiny_encoder()
    enc_gpu.module.load_state_dict(enc_cpu.module.state_dict())
    images = torch.randint(0, 256, (40, 16, 16, 3), dtype=torch.uint8)
    cfg = RefineConfig((2, 4), head_steps=1, steps=1, batch_size=8, queue=32, topk=3,
                       head_hidden=16, head_out=8)  # fmt: skip
    cpu = refine(enc_cpu, images, cfg, seed=3)
    gpu = refine(enc_gpu, images, RefineConfig(**{**cfg.__dict__, "device": "cuda"}), seed=3)
    # same batches, views, heads and picks: the first loss agrees to float tolerance
    assert gpu["loss_curve"][0] == pytest.approx(cpu["loss_curve"][0], rel=1e-4)
    assert all(p.device.type == "cpu" for p in enc_gpu.module.parameters())
