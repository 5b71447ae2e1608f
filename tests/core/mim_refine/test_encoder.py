"""Model folders of mim-refine: timm and Hugging Face round trips, one-pass extraction."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from iclr25.core.mim_refine.encoder import (
    check_pooling,
    extract_block_per_pass,
    extract_blocks,
    load_encoder,
    save_encoder,
    to_pixels,
)
from iclr25.errors import InputError, UsageError
from iclr25.testing import assert_close

torch.set_num_threads(1)
IMAGES = np.random.default_rng(0).integers(0, 256, size=(5, 16, 16, 3), dtype=np.uint8)


def timm_folder(path, class_token=True):
    import timm
    import timm.models

    args = dict(img_size=16, patch_size=8, embed_dim=16, depth=3, num_heads=2, num_classes=0)
    if not class_token:
        args.update(class_token=False, global_pool="avg")
    vit = timm.create_model("vit_tiny_patch16_224", pretrained=False, **args)
    vit.pretrained_cfg = {**vit.pretrained_cfg, "input_size": (3, 16, 16)}
    timm.models.save_for_hf(vit, path, model_args=args)
    return vit


def hf_folder(path, kind):
    import transformers

    common = dict(hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                  intermediate_size=32, image_size=16, patch_size=8)  # fmt: skip
    if kind == "vit":
        model = transformers.ViTModel(transformers.ViTConfig(**common), add_pooling_layer=False)
    elif kind == "dinov2":
        model = transformers.Dinov2Model(transformers.Dinov2Config(**common))
    else:
        cfg = transformers.ViTMAEConfig(
            **common, decoder_hidden_size=8, decoder_num_hidden_layers=1,
            decoder_num_attention_heads=2, decoder_intermediate_size=16,
        )  # fmt: skip
        model = transformers.ViTMAEModel(cfg)
    model.save_pretrained(path)
    return model


def test_timm_round_trip_gives_the_same_features_and_one_pass_equals_per_block(tmp_path):
    vit = timm_folder(tmp_path / "m")
    enc = load_encoder(tmp_path / "m")
    assert enc.describe()["depth"] == 3 and enc.source == "timm" and enc.has_cls
    feats = extract_blocks(enc, IMAGES, "cls")  # (L, N, D)
    with torch.no_grad():
        ref = vit.forward_intermediates(
            to_pixels(IMAGES, enc), norm=False, output_fmt="NLC",
            return_prefix_tokens=True, intermediates_only=True,
        )  # fmt: skip
    for b in range(3):
        assert_close(feats[b], ref[b][1][:, 0], atol=1e-5, what=f"block {b}")
        assert_close(feats[b], extract_block_per_pass(enc, IMAGES, "cls", b), atol=1e-6)
    save_encoder(enc, tmp_path / "again")
    again = load_encoder(tmp_path / "again")
    assert_close(extract_blocks(again, IMAGES, "mean"), extract_blocks(enc, IMAGES, "mean"))


@pytest.mark.parametrize("kind", ["vit", "dinov2", "vit_mae"])
def test_hf_round_trip_matches_hidden_states(tmp_path, kind):
    model = hf_folder(tmp_path / "m", kind)
    enc = load_encoder(tmp_path / "m")
    assert enc.source == "hf" and enc.hf_type == kind and enc.depth == 3
    feats = extract_blocks(enc, IMAGES, "cls")
    if kind in ("vit", "dinov2"):
        with torch.no_grad():
            hidden = model(pixel_values=to_pixels(IMAGES, enc), output_hidden_states=True)
        for b in range(3):
            assert_close(feats[b], hidden.hidden_states[b + 1][:, 0], atol=1e-5)
    else:  # mask ratio 0: all patches are kept, so mean pooling sees 4 patches
        assert enc.module.config.mask_ratio == 0.0
        assert_close(extract_blocks(enc, IMAGES, "cls"), feats, atol=1e-5)  # patch order only
    save_encoder(enc, tmp_path / "again")
    assert json.loads((tmp_path / "again" / "config.json").read_text())["model_type"] == kind
    again = load_encoder(tmp_path / "again")
    assert_close(extract_blocks(again, IMAGES, "cls"), feats, atol=1e-5)


def test_unsupported_folders_and_pooling_without_cls_are_rejected(tmp_path):
    with pytest.raises(InputError, match="timm save_for_hf folder"):
        load_encoder(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(InputError, match="unsupported layout"):
        load_encoder(tmp_path)
    timm_folder(tmp_path / "nocls", class_token=False)
    enc = load_encoder(tmp_path / "nocls")
    with pytest.raises(UsageError, match="no CLS token"):
        check_pooling(enc, "cls")
    assert extract_blocks(enc, IMAGES, "mean").shape == (3, 5, 16)
