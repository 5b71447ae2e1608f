"""Pretraining: grouped steps equal whole-batch steps; a resumed run equals a straight one."""

from __future__ import annotations

from dataclasses import replace

import torch

from iclr25.core.mufu import pretrain as pt

TINY = replace(
    pt.PretrainConfig(),
    steps=4,
    warmup=1,
    plain_batch=6,
    mufu_batch=3,
    mufu_share=0.5,
    n_layer=1,
    n_embd=16,
    n_head=2,
)


def test_resumed_run_equals_an_uninterrupted_run(tmp_path):
    straight = pt.pretrain(TINY)

    class Stop(Exception):
        pass

    def stop_after_step_2(step, loss):
        if step == 2:
            raise Stop

    ckpt = tmp_path / "state.pt"
    try:
        pt.pretrain(TINY, stop_after_step_2, checkpoint=ckpt, checkpoint_every=2)
    except Stop:
        pass
    assert ckpt.exists()
    resumed = pt.pretrain(TINY, checkpoint=ckpt, checkpoint_every=2)
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert resumed.log["history"] == [
        {**h, "cpu_s": r["cpu_s"]}
        for h, r in zip(straight.log["history"], resumed.log["history"], strict=True)
    ]


def test_the_learning_curve_probe_leaves_training_unchanged():
    """The probe (chrF during training) is logged every N steps and changes no weight."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[3] / "scripts"))
    from train_mufu_model import evaluate

    sentences = []

    def probe(model, tokenizer, world):
        if not sentences:
            sentences.extend(pt.probe_sentences(world, 2, exclude=pt.eval_sentences(world, 3)))
        assert not model.training
        return evaluate(model, tokenizer, world, 2, sentences)

    plain = pt.pretrain(TINY)
    probed = pt.pretrain(TINY, probe=probe, probe_every=2)
    a, b = plain.model.state_dict(), probed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    curve = [h for h in probed.log["history"] if "probe" in h]
    assert [h["step"] for h in curve] == [2, 4]
    assert set(curve[0]["probe"]) == {"tel", *pt.HIGH_RESOURCE}
    assert [h for h in probed.log["history"] if "loss" in h] == [
        {**h, "cpu_s": p["cpu_s"]}
        for h, p in zip(
            plain.log["history"],
            [h for h in probed.log["history"] if "loss" in h],
            strict=True,
        )
    ]


def test_grouped_gradient_equals_the_whole_batch_gradient():
    from iclr25.core.mufu import sft
    from iclr25.core.mufu.world import World
    from iclr25.core.mufu.world_tokenizer import build_tokenizer

    world = World(TINY.world)
    tok = build_tokenizer(world)
    stream = pt.ExampleStream(world, TINY)
    pairs = [stream.mufu() for _ in range(3)] + [stream.plain() for _ in range(4)]
    enc = sft.encode(tok, [p for p, _ in pairs], [a for _, a in pairs])
    grads = []
    for groups in (1, 3):
        model = pt.build_model(TINY, len(tok), tok)
        loss = pt._accumulate(model, enc, tok.pad_token_id, groups)
        grads.append((loss, [p.grad.clone() for p in model.parameters()]))
    assert abs(grads[0][0] - grads[1][0]) < 1e-5
    for g1, g3 in zip(grads[0][1], grads[1][1], strict=True):
        torch.testing.assert_close(g1, g3, rtol=1e-4, atol=1e-6)


def test_shipped_weights_are_the_ones_its_training_log_describes():
    """The bundled model's sha256 is the one its log (and the docs' copy) records."""
    import hashlib
    import json
    from pathlib import Path

    from iclr25.core.mufu.models import bundled_path

    folder = bundled_path()
    log = json.loads((folder / "training_log.json").read_text())
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert log["sha256"] == digest
    copy = Path(__file__).parents[3] / "experiments" / "results" / "mufu-base-model.json"
    assert json.loads(copy.read_text()) == log
    assert log["requirement_met"] == (
        log["high_resource_min_chrf"] >= 80.0 and log["target_gap_met"]
    )


def test_a_flatter_training_zipf_keeps_tel_to_its_pool_and_the_lexicon():
    """``train_zipf_s`` draws the high-resource sentences with a flatter Zipf (more distinct
    lemmas, the same word forms); ``tel`` still gets only its pool, never a mufu prompt."""
    from iclr25.core.mufu.world import TARGET, World

    cfg = replace(pt.PretrainConfig(), target_share=0.3)
    flat_cfg = replace(cfg, train_zipf_s=0.0)
    world = World(cfg.world)
    pool = {world.render(s, TARGET) for s in pt.target_pool(world, cfg.target_pool)}
    lexicon = {w for lang in world.languages.values() for w in lang.lexicon}
    distinct = []
    for config in (cfg, flat_cfg):
        stream = pt.ExampleStream(world, config)
        plain = [stream.plain() for _ in range(400)]
        tel = [a for p, a in plain if p.endswith("Tel:")]
        assert tel and all(a in pool for a in tel)
        assert all(not stream.mufu()[0].endswith("Tel:") for _ in range(20))
        words = [w for p, a in plain if not p.endswith("Tel:") for w in a.split()]
        assert set(words) <= lexicon
        distinct.append(len(set(words)))
    assert distinct[1] > 1.5 * distinct[0]
