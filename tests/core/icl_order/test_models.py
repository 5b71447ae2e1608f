"""Model loading and batched forwards (left padding, attention masks, position ids)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iclr25.core.icl_order.models import (
    ModelConfig,
    cache_to_tensors,
    forward_last,
    left_pad,
    load_model,
    tensors_to_cache,
)
from iclr25.errors import InputError, UsageError
from iclr25.testing import assert_close

SEQUENCES = [[2, 11, 3, 40, 4], [2, 11, 3, 33, 41, 4, 12, 3], [2], [2, 14, 3, 50, 4, 15, 3]]


def test_left_pad_known_answer():
    ids, mask, pos = left_pad([[5, 6, 7], [8]], pad_id=0, device="cpu")
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert pos.tolist() == [[0, 1, 2], [0, 0, 0]]


@pytest.mark.parametrize("which", ["lm", "llama"])
@pytest.mark.parametrize("layer", [-1, 1, 0])
def test_batched_forward_equals_single_forwards(request, which, layer):
    model = request.getfixturevalue(which)
    batch_logits, batch_hidden = forward_last(model, SEQUENCES, layer=layer)
    for row, seq in enumerate(SEQUENCES):
        logits, hidden = forward_last(model, [seq], layer=layer)
        assert_close(batch_logits[row], logits[0], rtol=1e-4, atol=1e-4, what=f"logits row {row}")
        assert_close(batch_hidden[row], hidden[0], rtol=1e-4, atol=1e-4, what=f"hidden row {row}")


def test_single_forward_equals_plain_model_call(lm):
    import torch

    seq = SEQUENCES[1]
    with torch.no_grad():
        out = lm.model(torch.tensor([seq]), output_hidden_states=True)
    logits, hidden = forward_last(lm, [seq], layer=-1)
    assert_close(logits[0], out.logits[0, -1], rtol=1e-5, atol=1e-5)
    assert_close(hidden[0], out.hidden_states[-1][0, -1], rtol=1e-5, atol=1e-5)


def test_cache_round_trip(lm):
    import torch

    seq = torch.tensor([SEQUENCES[1]])
    with torch.no_grad():
        out = lm.model(seq[:, :5], use_cache=True)
        cache = out.get("cache") or out.get("past_key_values")
        rebuilt = tensors_to_cache([(k.clone(), v.clone()) for k, v in cache_to_tensors(cache)])
        tail = lm.model(seq[:, 5:], **{lm.cache_keyword: rebuilt}).logits
        full = lm.model(seq).logits
    assert_close(tail[0], full[0, 5:], rtol=1e-4, atol=1e-4)


def test_embedded_model_is_a_small_gpt2(lm):
    assert lm.model.config.model_type == "gpt2"
    assert sum(p.numel() for p in lm.model.parameters()) < 2_000_000
    assert lm.tokenizer.padding_side == "left"
    assert lm.cache_keyword in ("cache", "past_key_values")


def test_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_model(ModelConfig(model=str(tmp_path / "nope")))


def test_hub_id_not_in_the_cache_names_the_folders_searched(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    with pytest.raises(InputError, match="local Hugging Face cache") as info:
        load_model(ModelConfig(model="someone/some-model"))
    assert str(tmp_path / "hub") in info.value.what and str(tmp_path / "home" / "hub") in (
        info.value.what
    )
    assert "--allow-download" in info.value.fix


def _fake_cache(root, model_id, source, ref=True):
    """``source`` (a save_pretrained folder) copied into HF_HUB_CACHE's layout."""
    import shutil

    repo = root / ("models--" + model_id.replace("/", "--"))
    snapshot = repo / "snapshots" / "0123456789abcdef"
    shutil.copytree(source, snapshot)
    if ref:
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text("0123456789abcdef")
    return snapshot


@pytest.mark.parametrize("variable", ["HF_HUB_CACHE", "HF_HOME"])
def test_hub_id_loads_offline_from_a_local_cache(tmp_path, monkeypatch, llama_dir, variable):
    """`--model org/name` resolves to the cached snapshot: no network, no --allow-download
    (HF_HUB_OFFLINE=1 makes any attempt to reach the hub fail)."""
    root = tmp_path / "cache"
    hub = root if variable == "HF_HUB_CACHE" else root / "hub"
    snapshot = _fake_cache(hub, "tiny-org/tiny-llama", llama_dir, ref=variable == "HF_HOME")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv(variable, str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = load_model(ModelConfig(model="tiny-org/tiny-llama"))
    assert lm.name == "tiny-org/tiny-llama"
    assert lm.model.config.model_type == "llama"
    from iclr25.core.icl_order.hub_cache import find_cached_model

    assert find_cached_model("tiny-org/tiny-llama") == snapshot


def test_hub_cache_prefers_the_snapshot_refs_main_names(tmp_path, llama_dir):
    from iclr25.core.icl_order.hub_cache import find_cached_model, looks_like_hub_id

    named = _fake_cache(tmp_path, "gpt2", llama_dir)
    other = named.parent / "ffffffffffffffff"
    other.mkdir()
    (other / "config.json").write_text("{}")  # newer, but not the one refs/main names
    assert find_cached_model("gpt2", [tmp_path / "absent", tmp_path]) == named
    assert find_cached_model("org/absent", [tmp_path]) is None
    assert looks_like_hub_id("gpt2") and looks_like_hub_id("Qwen/Qwen2.5-0.5B")
    assert not any(map(looks_like_hub_id, ("./m", "/abs/m", "a/b/c", "org/", "~/m")))


def test_folder_without_config_and_a_file(tmp_path):
    with pytest.raises(InputError, match="no config.json"):
        load_model(ModelConfig(model=str(tmp_path)))
    file = tmp_path / "weights.bin"
    file.write_bytes(b"x")
    with pytest.raises(InputError, match="is a file"):
        load_model(ModelConfig(model=str(file)))


def test_non_causal_model_is_named(tmp_path, llama_dir):
    from transformers import ViTConfig

    ViTConfig(
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        image_size=8,
        patch_size=4,
    ).save_pretrained(tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((llama_dir / name).read_bytes())
    with pytest.raises(InputError, match="not a causal LM"):
        load_model(ModelConfig(model=str(tmp_path)))


def test_bad_config_json(tmp_path, llama_dir):
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((llama_dir / name).read_bytes())
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "no-such-model"}))
    with pytest.raises(InputError, match="config could not be read"):
        load_model(ModelConfig(model=str(tmp_path)))


def test_bad_dtype_and_batch_size():
    with pytest.raises(UsageError, match="--dtype"):
        load_model(ModelConfig(dtype="float8"))
    with pytest.raises(UsageError, match="--batch-size"):
        load_model(ModelConfig(batch_size=0))


def test_batch_size_does_not_change_results(lm):
    from dataclasses import replace

    small = replace(lm, batch_size=1)
    a, _ = forward_last(lm, SEQUENCES, layer=None)
    rows = [forward_last(small, [s], layer=None)[0][0].numpy() for s in SEQUENCES]
    assert_close(a.numpy(), np.stack(rows), rtol=1e-4, atol=1e-4)
