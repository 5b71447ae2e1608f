"""`iclr25 icl-order` through the real console script: JSON keys, artifacts, errors."""

from __future__ import annotations

import json

import pytest

ONE_THREAD = {"OMP_NUM_THREADS": "1"}  # the test machine is shared; spinning threads stall
SMALL = ("--k", "3", "--candidates", "4", "--queries", "4")


@pytest.fixture(scope="module")
def user_model(tmp_path_factory):
    """A user's model folder: a tiny random Llama saved with save_pretrained."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from iclr25.core.icl_order.models import embedded_model_path

    path = tmp_path_factory.mktemp("my-llm")
    tokenizer = AutoTokenizer.from_pretrained(embedded_model_path(), local_files_only=True)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer.get_vocab()),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_bare_analysis_on_a_user_model(cli, user_model):
    args = ("--model", user_model, "--quick", "--draws", "2", *SMALL, "--json", "--quiet")
    result = cli("icl-order", *args, env=ONE_THREAD)
    assert result.returncode == 0, result
    doc = result.json()
    assert doc["command"] == "icl-order"
    r = doc["results"]
    for metric in ("silhouette", "purity", "distance_ratio"):
        assert set(r[metric]) == {"first", "last", "middle"}
    comparison = r["search"]["comparison"]
    assert set(comparison) == {"cluster", "exhaustive", "random"}
    assert comparison["cluster"]["evaluations"] == 4 * 4 * 3
    assert comparison["exhaustive"]["evaluations"] == 4 * 24
    assert r["search"]["evaluations_saved_vs_exhaustive"] == pytest.approx(0.5)
    assert r["model"] == str(user_model) and r["task"] == "symbolic"
    assert doc["timings"]["scoring_s"] > 0 and "load_s" in doc["timings"]
    from iclr25.commands.icl_order import DEMO

    assert "fewer evaluations" in DEMO[0].headline(doc)


def test_cluster_json_plots_and_no_overwrite(cli, tmp_path):
    out = tmp_path / "run"
    args = ("icl-order", "cluster", "--k", "3", "--draws", "2", "--json", "--quiet", "--out", out)
    result = cli(*args, env=ONE_THREAD)
    assert result.returncode == 0, result
    r = result.json()["results"]
    assert r["orderings_per_draw"] == 6 and r["draws"] == 2
    assert set(r["silhouette"]) == {"first", "last", "middle"}
    assert len(r["by_position"]["purity"]) == 3
    assert (out / "projection.png").stat().st_size > 1000 and (out / "positions.png").exists()
    before = (out / "result.json").read_bytes()
    again = cli(*args, env=ONE_THREAD)
    assert again.returncode == 2 and "--overwrite" in again.stderr
    assert (out / "result.json").read_bytes() == before


def test_search_json_and_per_query_artifact(cli, tmp_path):
    out = tmp_path / "s"
    result = cli(
        "icl-order",
        "search",
        *SMALL,
        "--compare",
        "exhaustive",
        "--json",
        "--quiet",
        "--out",
        out,
        env=ONE_THREAD,
    )
    assert result.returncode == 0, result
    doc = result.json()
    r = doc["results"]
    assert r["method"] == "cluster" and r["evaluations"] == 4 * 12
    assert 0 <= r["accuracy"] <= 1 and "accuracy_difference_vs_exhaustive" in r
    assert {"scoring_s", "scoring_exhaustive_s", "time_saved_vs_exhaustive"} <= set(doc["timings"])
    lines = (out / "per_query.jsonl").read_text().splitlines()
    assert len(lines) == 4 and {"order", "predicted_label", "gold_label"} <= set(
        json.loads(lines[0])
    )
    assert (out / "search.png").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (("--model", "/no/such/model"), "does not exist"),
        (("cluster", "--template", "Text: {text}\\n"), "{label} exactly once"),
        (("search", "--k", "9", "--candidates", "8"), "larger than --candidates"),
        (("cluster", "--k", "8"), "pass --sample"),
    ],
)
def test_bad_input_exits_2_with_a_fix(cli, args, message):
    result = cli("icl-order", *args, env=ONE_THREAD)
    assert result.returncode == 2, result
    assert message in result.stderr and "—" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_task_files_fail_before_loading_the_model(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a", "label": "x"}\n{"text": \n')
    result = cli("icl-order", "search", "--task", bad, env=ONE_THREAD)
    assert result.returncode == 2 and "line 2" in result.stderr
    assert str(bad) in result.stderr
    result = cli("icl-order", "cluster", "--task", tmp_path / "missing.csv", env=ONE_THREAD)
    assert result.returncode == 2 and "does not exist" in result.stderr
