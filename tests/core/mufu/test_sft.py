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
