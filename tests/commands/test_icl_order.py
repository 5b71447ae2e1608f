"""`iclr25 icl-order` through the real console script: JSON keys, artifacts, errors."""

from __future__ import annotations

import itertools
import json

import pytest

ONE_THREAD = {"OMP_NUM_THREADS": "1"}  # the test machine is shared; spinning threads stall
SMALL = ("--k", "3", "--candidates", "4", "--queries", "4")


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    """A user's model folders: tiny random GPT-2, Llama, Qwen2 and Mistral, each saved
    with save_pretrained next to its own BPE tokenizer (built offline)."""
    from iclr25.core.icl_order.tiny_models import ARCHITECTURES, build_tiny_model

    root = tmp_path_factory.mktemp("my-llms")
    return {arch: build_tiny_model(arch, root / arch) for arch in ARCHITECTURES}


@pytest.fixture(scope="module")
def user_model(tiny_dirs):
    return tiny_dirs["llama"]


@pytest.fixture(scope="module")
def reviews_file(tmp_path_factory):
    """A user's task file: labelled reviews, labels 0/1."""
    from iclr25.core.icl_order.tiny_models import REVIEWS

    path = tmp_path_factory.mktemp("task") / "reviews.jsonl"
    rows = [{"text": t, "label": int(w == "positive")} for t, w in REVIEWS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


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


def _silhouettes_of_unbatched_embeddings(lm, encoded, draw_examples, k):
    """Per-position silhouettes averaged over the draws, embeddings one prompt at a time."""
    import numpy as np

    from iclr25.core.icl_order.clustering import position_metrics
    from iclr25.core.icl_order.embeddings import embed_orderings

    orders = np.array(list(itertools.permutations(range(k))))
    per_draw = [
        position_metrics(
            embed_orderings(lm, encoded, d["demonstrations"], d["query"], orders), orders
        )["silhouette"]
        for d in draw_examples
    ]
    return np.mean(per_draw, axis=0)


def _check_picks_against_naive(records, lm, encoded, n_orders):
    """Each chosen organisation's entropy and prediction equal a naive, unbatched forward."""
    from iclr25.core.icl_order.scoring import entropy, score_naive

    for q in records:
        scores = score_naive(lm, encoded, [tuple(q["order"])], [q["query"]])[0, 0]  # (L,)
        assert q["entropy"] == pytest.approx(float(entropy(scores)), abs=1e-4)
        assert q["predicted"] == int(scores.argmax())
        assert 1 <= q["exhaustive_rank"] <= n_orders and q["regret_nats"] >= 0


def test_bare_analysis_on_a_user_model(cli, user_model, tmp_path):
    """Bare `icl-order --model` (a Llama with a BOS-adding SentencePiece-style tokenizer)
    runs cluster and search; both equal in-process references taken one prompt at a time."""
    from iclr25.core.icl_order.models import ModelConfig, load_model
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.tasks import builtin_task

    out = tmp_path / "analysis"
    args = ("--model", user_model, "--quick", "--draws", "2", *SMALL, "--batch-size", "5")
    result = cli("icl-order", *args, "--json", "--quiet", "--out", out, env=ONE_THREAD)
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
    assert set(r["search"]["rank_vs_exhaustive"]) == {"cluster", "random"}
    assert r["model"] == str(user_model) and r["task"] == "symbolic"
    assert doc["timings"]["scoring_s"] > 0 and "load_s" in doc["timings"]
    from iclr25.commands.icl_order import DEMO

    assert "fewer evaluations" in DEMO[0].headline(doc)
    lm = load_model(ModelConfig(model=str(user_model), batch_size=1))
    encoded = encode_task(lm.tokenizer, builtin_task("symbolic", seed=0))
    assert encoded.prefix == [lm.tokenizer.bos_token_id]
    want = _silhouettes_of_unbatched_embeddings(lm, encoded, r["draw_examples"], 3)
    assert r["by_position"]["silhouette"] == pytest.approx(want, abs=1e-4)
    records = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert len(records) == 4 and {"predicted_label", "gold_label"} <= set(records[0])
    _check_picks_against_naive(records, lm, encoded, 24)
    assert {"projection.png", "positions.png", "search.png"} <= {p.name for p in out.iterdir()}


def _reference(model_dir, task_file, label_words):
    """The model (batch size 1) and task loaded in-process, as the CLI loads them."""
    from iclr25.core.icl_order.models import ModelConfig, load_model
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.tasks import parse_label_words, resolve_task

    lm = load_model(ModelConfig(model=str(model_dir), batch_size=1))
    task = resolve_task(str(task_file), label_words=parse_label_words(label_words))
    return lm, encode_task(lm.tokenizer, task)


# one family per test in `make test`; all of them are compared in-process in
# tests/core/icl_order/test_architectures.py, and through the CLI with -m slow
SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    "arch",
    ["gpt2", *(pytest.param(a, marks=SLOW) for a in ("llama", "qwen2", "mistral"))],
)
def test_search_on_real_architectures_equals_unbatched_naive_scoring(
    cli, tiny_dirs, reviews_file, arch
):
    """`search --model` on a family's folder, prefix-cached with odd batches; every chosen
    organisation's entropy equals a naive, unbatched forward of its prompt, and cluster's
    pick ranks among the exhaustive ones. 'dismal' is several BPE pieces."""
    words = "1=positive,0=dismal"
    args = ("--k", "3", "--candidates", "4", "--queries", "3", "--batch-size", "3")
    result = cli(
        "icl-order", "search", "--model", tiny_dirs[arch], "--task", reviews_file,
        "--label-words", words, *args, "--compare", "exhaustive", "--json", "--quiet",
        env=ONE_THREAD,
    )  # fmt: skip
    assert result.returncode == 0, result
    r = result.json()["results"]
    assert r["label_words"] == ["positive", "dismal"] and r["label_tokens"][1] > 1
    assert r["template"] == "Input: {text}\nLabel: {label}\n"  # the default for files
    lm, encoded = _reference(tiny_dirs[arch], reviews_file, words)
    _check_picks_against_naive(r["per_query"], lm, encoded, 24)
    rank = r["rank_vs_exhaustive"]["cluster"]
    assert rank["organisations_per_query"] == 24 and 0 <= rank["mean_percentile"] < 1


@pytest.mark.parametrize("arch", ["gpt2", pytest.param("qwen2", marks=SLOW)])
def test_cluster_on_real_architectures_equals_unbatched_embeddings(
    cli, tiny_dirs, reviews_file, arch
):
    """`cluster --model`: the per-position silhouettes equal those of embeddings taken
    one prompt at a time in-process (byte-level BPE, no BOS)."""
    args = ("--k", "3", "--draws", "2", "--batch-size", "4", "--label-words", "0=no,1=yes")
    result = cli(
        "icl-order", "cluster", "--model", tiny_dirs[arch], "--task", reviews_file, *args,
        "--json", "--quiet", env=ONE_THREAD,
    )  # fmt: skip
    assert result.returncode == 0, result
    r = result.json()["results"]
    assert r["orderings_per_draw"] == 6 and len(r["draw_examples"]) == 2
    lm, encoded = _reference(tiny_dirs[arch], reviews_file, "0=no,1=yes")
    want = _silhouettes_of_unbatched_embeddings(lm, encoded, r["draw_examples"], 3)
    assert r["by_position"]["silhouette"] == pytest.approx(want, abs=1e-4)


def test_embedded_model_prompts_a_user_file_in_its_training_format(cli, tmp_path):
    """The embedded model learned in context only in '{text} {label}\\n'; a user file
    without --template gets that format (in 'Input: ...\\nLabel: ...' it stayed at
    chance: 0.43 accuracy on two labels before this default), with a warning saying so,
    and a warning naming the share of words its 137-word vocabulary does not know. Also
    the JSON keys and the artifacts of `search --compare exhaustive --out`."""
    import numpy as np

    from iclr25.core.icl_order import synthetic

    rng = np.random.default_rng(0)
    examples = synthetic.sample_episode(rng, 60, 2, True, filler_probs=(1.0,))
    rows = [{"text": e.text, "label": e.label} for e in examples]
    rows[5]["text"] = "zorblax"  # not in the vocabulary
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "s"
    args = ("--k", "4", "--candidates", "5", "--queries", "12", "--compare", "exhaustive")
    result = cli(
        "icl-order", "search", "--task", path, *args, "--json", "--quiet", "--out", out,
        env=ONE_THREAD,
    )  # fmt: skip
    assert result.returncode == 0, result
    doc = result.json()
    r = doc["results"]
    assert r["template"] == "{text} {label}\n"
    assert r["accuracy"] >= 0.8, r["accuracy"]  # chance 0.5
    warnings = " ".join(doc["warnings"])
    assert "training format" in warnings and "--template" in warnings
    assert "unknown" in warnings and "--model" in warnings
    assert r["method"] == "cluster" and r["evaluations"] == 12 * 20
    assert r["comparison"]["exhaustive"]["evaluations"] == 12 * 120
    assert "accuracy_difference_vs_exhaustive" in r and "rank_vs_exhaustive" in r
    assert {"scoring_s", "scoring_exhaustive_s", "time_saved_vs_exhaustive"} <= set(doc["timings"])
    lines = (out / "per_query.jsonl").read_text().splitlines()
    assert len(lines) == 12 and {
        "order",
        "predicted_label",
        "gold_label",
        "exhaustive_rank",
    } <= set(json.loads(lines[0]))
    assert (out / "search.png").exists()
