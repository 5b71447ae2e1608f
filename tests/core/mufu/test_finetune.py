"""Finetuning: equal budgets, best checkpoint, LoRA merged back, errors."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.mufu.finetune import Budget, FinetuneConfig, assert_equal_budgets, finetune
from iclr25.core.mufu.models import load
from iclr25.core.mufu.prompts import PromptSpec, render
from iclr25.core.mufu.world import SOURCE, TARGET, World
from iclr25.core.mufu.world_tokenizer import display_names
from iclr25.errors import RunFailure


def _rows(n: int, seed: int = 0) -> list[dict]:
    w = World()
    out = []
    for s in w.sample_many(np.random.default_rng(seed), n):
        row = {
            "source": w.render(s, SOURCE),
            "target": w.render(s, TARGET),
            "draft": w.render(s, "sam"),
        }
        row.update({f"cand.{a}": w.render(s, a) for a in ("sam", "ser", "dov")})
        out.append(row)
    return out


def _prompts(rows, fmt):
    spec = PromptSpec(
        fmt, TARGET, ("sam", "ser", "dov") if fmt == "mufu" else (), names=display_names()
    )
    return [render(r, spec) for r in rows]


def test_plain_and_mufu_share_the_budget(tiny_world_model):
    rows, valid = _rows(20), _rows(4, seed=1)
    cfg = FinetuneConfig(epochs=2, batch_size=8, lr=1e-3, max_new_tokens=8)
    results = {}
    for fmt in ("plain", "mufu"):
        loaded = load(tiny_world_model, kinds=("causal",))
        results[fmt] = finetune(
            loaded,
            _prompts(rows, fmt),
            [r["target"] for r in rows],
            _prompts(valid, fmt),
            [r["target"] for r in valid],
            cfg,
        )
    budgets = {fmt: r.budget for fmt, r in results.items()}
    assert_equal_budgets(budgets)
    assert budgets["plain"] == Budget(examples=20, epochs=2, batch_size=8, steps=6, lr=1e-3)
    # the same answers carry loss; mufu prompts are longer
    assert results["plain"].answer_tokens == results["mufu"].answer_tokens
    assert results["mufu"].train_tokens > results["plain"].train_tokens
    for r in results.values():
        assert [h["epoch"] for h in r.history] == [0, 1, 2]
        chrfs = [h["valid_chrf"] for h in r.history[1:]]
        assert r.best_valid_chrf == max(chrfs) and r.best_epoch == 1 + chrfs.index(max(chrfs))


def test_unequal_budgets_are_a_run_failure():
    a = Budget(10, 2, 4, 6, 1e-3)
    with pytest.raises(RunFailure, match="different budgets"):
        assert_equal_budgets({"plain": a, "mufu": Budget(10, 3, 4, 9, 1e-3)})


def test_training_lowers_the_loss(tiny_world_model):
    rows = _rows(16)
    cfg = FinetuneConfig(epochs=4, batch_size=8, lr=3e-3, max_new_tokens=4, validate_before=False)
    loaded = load(tiny_world_model, kinds=("causal",))
    r = finetune(loaded, _prompts(rows, "plain"), [x["target"] for x in rows], [], [], cfg)
    losses = [h["loss"] for h in r.history]
    assert losses[-1] < losses[0]
    assert r.best_epoch == 4  # no validation: the last epoch


def test_lora_trains_adapters_and_merges_them(tiny_world_model):
    import torch

    rows = _rows(8)
    cfg = FinetuneConfig(
        epochs=1,
        batch_size=4,
        lr=1e-2,
        lora=True,
        lora_r=4,
        max_new_tokens=4,
        validate_before=False,
    )
    before = load(tiny_world_model, kinds=("causal",)).model.state_dict()
    loaded = load(tiny_world_model, kinds=("causal",))
    r = finetune(loaded, _prompts(rows, "plain"), [x["target"] for x in rows], [], [], cfg)
    after = r.model.state_dict()
    assert type(r.model).__name__ == "GPT2LMHeadModel"  # merged: a plain model again
    assert set(after) == set(before)
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert changed and all("attn" in k for k in changed)  # only the adapted projections moved
    assert r.budget.steps == 2
