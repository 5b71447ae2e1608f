"""``hf:PATH`` encoders on tiny randomly initialised models saved in a temp folder:
vision-only CLIP and DINOv2, and a full CLIP with a character-level tokenizer whose text
tower drives the zero-shot tags. Nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from iclr25.core.style_check.check import CheckConfig
from iclr25.core.style_check.checking import CheckRequest, run_check
from iclr25.core.style_check.deepmatch import DeepMatchConfig
from iclr25.core.style_check.encoders import load_encoder
from iclr25.core.style_check.index import IndexConfig, index_references
from iclr25.core.style_check.pipeline import run_explain
from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus
from iclr25.core.style_check.tagmatch import TagMatchConfig
from iclr25.errors import InputError

TINY = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4)


def _byte_chars() -> list[str]:
    """GPT-2 / CLIP byte-to-unicode table (printable stand-ins for the 256 bytes)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    extra = [b for b in range(256) if b not in keep]
    return [chr(b) for b in keep] + [chr(256 + i) for i in range(len(extra))]


def save_tiny_clip(folder: Path) -> Path:
    import torch
    from transformers import CLIPConfig, CLIPModel, CLIPTokenizer

    chars = _byte_chars()
    vocab = {c: i for i, c in enumerate(chars + [c + "</w>" for c in chars])}
    vocab["<|startoftext|>"], vocab["<|endoftext|>"] = len(vocab), len(vocab) + 1
    text = dict(
        TINY,
        vocab_size=len(vocab),
        max_position_embeddings=77,
        bos_token_id=vocab["<|startoftext|>"],
        eos_token_id=vocab["<|endoftext|>"],
        pad_token_id=vocab["<|endoftext|>"],
    )
    config = CLIPConfig(
        text_config=text, vision_config=dict(TINY, image_size=32, patch_size=8), projection_dim=16
    )
    torch.manual_seed(0)
    CLIPModel(config).save_pretrained(folder)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    CLIPTokenizer(
        vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt")
    ).save_pretrained(folder)
    return folder


def save_tiny_vision(folder: Path, kind: str) -> Path:
    import torch
    from transformers import CLIPVisionConfig, CLIPVisionModel, Dinov2Config, Dinov2Model

    torch.manual_seed(1)
    if kind == "dinov2":
        Dinov2Model(Dinov2Config(**TINY, image_size=32, patch_size=8)).save_pretrained(folder)
    else:
        CLIPVisionModel(CLIPVisionConfig(**TINY, image_size=32, patch_size=8)).save_pretrained(
            folder
        )
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {
        "clip": save_tiny_clip(root / "clip"),
        "clip_vision": save_tiny_vision(root / "clip_vision", "clip_vision"),
        "dinov2": save_tiny_vision(root / "dinov2", "dinov2"),
    }


@pytest.mark.parametrize(
    "name,dim,zero_shot", [("clip", 16, True), ("clip_vision", 32, False), ("dinov2", 32, False)]
)
def test_tiny_models_embed_deterministically(models, name, dim, zero_shot):
    encoder = load_encoder(f"hf:{models[name]}")
    images = [Image.new("RGB", (50, 40), (200, 10, 10)), Image.new("RGB", (20, 64), (0, 90, 200))]
    a, b = encoder.encode(images), encoder.encode(images)
    assert a.shape == (2, dim) and encoder.dim == dim and encoder.zero_shot is zero_shot
    assert np.array_equal(a, b) and not np.allclose(a[0], a[1])
    assert encoder.identity.startswith(f"hf/{encoder.model_type}/")


def test_identity_tracks_the_weights(models, tmp_path):
    other = save_tiny_vision(tmp_path / "other", "dinov2")
    import torch
    from transformers import Dinov2Model

    model = Dinov2Model.from_pretrained(other)
    with torch.no_grad():
        model.layernorm.weight.add_(1.0)  # same config and folder name, other weights
    model.save_pretrained(other)
    assert load_encoder(f"hf:{other}").identity != load_encoder(f"hf:{models['dinov2']}").identity


def test_bad_model_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no config.json"):
        load_encoder(f"hf:{tmp_path}")
    (tmp_path / "config.json").write_text('{"model_type": "no-such-model"}')
    with pytest.raises(InputError, match="cannot load a vision model"):
        load_encoder(f"hf:{tmp_path}")


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_clip_index_explain_check_with_zero_shot_tags(models, tmp_path):
    refs, gen = tmp_path / "refs", tmp_path / "gen"
    write_corpus(refs, SyntheticConfig(n_artists=3, per_artist=6, size=48))
    write_corpus(gen, SyntheticConfig(n_artists=3, per_artist=2, works_seed=5, size=48))
    db = tmp_path / "clip.sqlite"
    result = index_references(refs, db, IndexConfig(encoder=f"hf:{models['clip']}", batch_size=4))
    assert result["encoder"]["dim"] == 16 and result["n_works"] == 18
    explained = run_explain(db, TagMatchConfig(folds=3), "both", seed=0, device="cpu")
    assert explained["tag_source"] == "both"
    categories = {t.split(":")[0] for r in explained["artists"] for t in r["signature"]}
    assert explained["vocabulary_size"] > 100 and categories  # attribute + vocabulary tags
    request = CheckRequest(gen, db, tag_source="zero-shot")
    checked = run_check(request, CheckConfig(), DeepMatchConfig(folds=3), 0, "cpu")
    assert checked["tag_source"] == "zero-shot" and checked["n_images"] == 6
    assert checked["encoders"] == ["hf:clip", "ssl-cnn"]  # the DB's encoder, then the SSL-CNN
    mediums = [t for t in checked["images"][0]["tags"] if t.startswith("medium:")]
    assert len(mediums) == 1  # one term per vocabulary category
    with pytest.raises(InputError, match="built with encoder hf:"):
        index_references(refs, db, IndexConfig(encoder="stats"))


def test_vision_only_encoder_refuses_zero_shot_tags(models, tmp_path):
    from iclr25.errors import UsageError

    refs = tmp_path / "refs"
    write_corpus(refs, SyntheticConfig(n_artists=2, per_artist=5, size=40))
    db = tmp_path / "dino.sqlite"
    index_references(refs, db, IndexConfig(encoder=f"hf:{models['dinov2']}"))
    with pytest.raises(UsageError, match="text tower"):
        run_explain(db, TagMatchConfig(folds=2), "zero-shot", seed=0, device="cpu")
    res = run_explain(db, TagMatchConfig(folds=2), "auto", seed=0, device="cpu")
    assert res["tag_source"] == "attributes"  # vision-only: tags from the style statistics
