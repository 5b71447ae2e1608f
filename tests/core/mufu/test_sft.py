"""Loss on the translation only: prompt tokens get no gradient from the loss."""

from __future__ import annotations

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from iclr25.core.mufu import sft


def test_prompt_positions_get_no_loss_gradient(tiny_world_model):
    tok = AutoTokenizer.from_pretrained(tiny_world_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_world_model)
    prompts = [
        "Translate into Tel.\nSrc: ROFF\nTel:",
        "Translate into Tel.\nSrc: ROFF FSTEU TGBLGV\nTel:",
    ]
    answers = ["fu fa", "fu"]
    enc = sft.encode(tok, prompts, answers)
    ids, mask, labels = sft.collate(enc, [0, 1], tok.pad_token_id)
    out = model(input_ids=ids, attention_mask=mask, labels=labels)
    out.logits.retain_grad()
    out.loss.backward()
    grad = out.logits.grad.abs().sum(-1)  # (B, T): gradient reaching each position's logits
    for b, p in enumerate(enc.prompt_lengths):
        n = len(enc.input_ids[b])
        # logits at t predict token t+1: positions p-1 .. n-2 predict the answer and eos
        assert torch.all(grad[b, : p - 1] == 0), "a prompt token was trained on"
        assert torch.all(grad[b, p - 1 : n - 1] > 0), "an answer token got no loss"
        assert torch.all(grad[b, n - 1 :] == 0), "eos or padding predicted something"
    assert enc.answer_tokens() == sum(
        len(tok(" " + a, add_special_tokens=False)["input_ids"]) + 1 for a in answers
    )


def test_labels_mask_prompt_and_padding(tiny_world_model):
    tok = AutoTokenizer.from_pretrained(tiny_world_model)
    enc = sft.encode(tok, ["Translate into Tel.\nSrc: ROFF\nTel:"], ["fu fa"])
    ids, mask, labels = sft.collate(enc, [0], tok.pad_token_id)
    p = enc.prompt_lengths[0]
    assert (labels[0, :p] == sft.IGNORE).all() and (labels[0, p:] == ids[0, p:]).all()
    assert tok.decode(ids[0, p:-1]) == "fu fa" and ids[0, -1] == tok.eos_token_id


def _batch(tok):
    prompts = [
        "Translate into Tel.\nSrc: ROFF\nTel:",
        "Translate into Tel.\nSrc: ROFF FSTEU TGBLGV\nTel:",
        "Translate into Sam.\nSrc: FSTEU\nSam:",
    ]
    return sft.encode(tok, prompts, ["fu fa", "fu", "ka ka ka"])


def test_answer_only_output_layer_equals_the_models_own_loss(tiny_world_model):
    """Reference: the fast loss (output layer on answer positions only) = HF's loss."""
    tok = AutoTokenizer.from_pretrained(tiny_world_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_world_model)
    enc = _batch(tok)
    ids, mask, labels = sft.collate(enc, [0, 1, 2], tok.pad_token_id)
    reference = model(input_ids=ids, attention_mask=mask, labels=labels).loss
    fast = sft.loss(model, ids, mask, labels)
    torch.testing.assert_close(fast, reference, rtol=1e-5, atol=1e-6)
    total = sft.loss(model, ids, mask, labels, reduction="sum")
    torch.testing.assert_close(total, reference * enc.answer_tokens(), rtol=1e-5, atol=1e-5)


def test_length_groups_partition_the_batch_sorted_by_length(tiny_world_model):
    tok = AutoTokenizer.from_pretrained(tiny_world_model)
    enc = _batch(tok)
    groups = sft.length_groups(enc, [0, 1, 2], 2)
    assert sorted(i for g in groups for i in g) == [0, 1, 2] and len(groups) == 2
    lengths = [len(enc.input_ids[i]) for g in groups for i in g]
    assert lengths == sorted(lengths)
    assert sft.length_groups(enc, [2, 0], 5) == [[0], [2]]  # never an empty group
