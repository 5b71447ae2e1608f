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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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
        (("--model", "no-org/no-model"), "searched"),
        (("sensitivity", "--draws", "1"), "--draws 1 is below 2"),
        (("search", "--method", "cluster@nope"), "cluster@"),
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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_bare_analysis_on_a_user_model(cli, user_model, tmp_path):
    """Bare `icl-order --model` (a Llama with a BOS-adding SentencePiece-style tokenizer)
    runs cluster, sensitivity and search with its controls; both equal in-process
    references taken one prompt at a time. Its random weights are at chance: warned."""
    from iclr25.core.icl_order.models import ModelConfig, load_model
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.tasks import DEFAULT_TASK, builtin_task

    out = tmp_path / "analysis"
    args = ("--model", user_model, "--quick", "--draws", "2", *SMALL, "--seeds", "1")
    result = cli("icl-order", *args, "--batch-size", "5", "--json", "--out", out, env=ONE_THREAD)
    assert result.returncode == 0, result
    doc = result.json()
    assert doc["command"] == "icl-order"
    r = doc["results"]
    for metric in ("silhouette", "purity", "distance_ratio"):
        assert set(r[metric]) == {"first", "last", "middle"}
    assert set(r["sensitivity"]["flip_rate"]) == {"value", "interval"}
    assert r["order_verdict"]
    comparison = r["search"]["comparison"]
    assert set(comparison) == {"cluster", "exhaustive", "sample", "random"}
    assert comparison["cluster"]["evaluations"] == 4 * 4 * 3
    assert comparison["exhaustive"]["evaluations"] == 4 * 24
    assert r["search"]["evaluations_saved_vs_exhaustive"] == pytest.approx(0.5)
    assert set(r["search"]["rank_vs_exhaustive"]) == {"cluster", "sample", "random"}
    assert r["model"] == str(user_model) and r["task"] == DEFAULT_TASK
    assert doc["timings"]["scoring_s"] > 0 and "load_s" in doc["timings"]
    assert any("at chance" in w and "say nothing about order" in w for w in doc["warnings"])
    assert "Warning: the model is at chance" in result.stderr  # on stderr even with --json
    from iclr25.commands.icl_order import DEMO

    assert "fewer evaluations" in DEMO[0].headline(doc)
    lm = load_model(ModelConfig(model=str(user_model), batch_size=1))
    encoded = encode_task(lm.tokenizer, builtin_task(DEFAULT_TASK, seed=0))
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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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
    args = ("--k", "3", "--candidates", "4", "--queries", "3", "--seeds", "1", "--batch-size", "3")
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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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
    args = ("--k", "4", "--candidates", "5", "--queries", "12", "--seeds", "1")
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
    assert r["comparison"]["sample"]["evaluations"] == 12 * 20  # the same budget as cluster
    assert "accuracy_difference_vs_exhaustive" in r and "rank_vs_exhaustive" in r
    assert [c["verdict"] in ("met", "not met") for c in r["pass_conditions"]] == [True] * 3
    assert "cluster vs sample" in r["verdict"]
    assert {"scoring_s", "scoring_exhaustive_s", "time_saved_vs_exhaustive"} <= set(doc["timings"])
    lines = (out / "per_query.jsonl").read_text().splitlines()
    assert len(lines) == 12 and {
        "order",
        "predicted_label",
        "gold_label",
        "exhaustive_rank",
    } <= set(json.loads(lines[0]))
    assert (out / "search.png").exists()


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_model_by_hub_id_from_a_local_cache(cli, user_model, tmp_path):
    """`--model org/name` finds the model in HF_HUB_CACHE's layout (snapshot named by
    refs/main), offline and without --allow-download; JSON names the id."""
    import shutil

    repo = tmp_path / "hub" / "models--tiny-org--tiny-llama"
    shutil.copytree(user_model, repo / "snapshots" / "abc123")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123\n")
    env = {**ONE_THREAD, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    args = ("--model", "tiny-org/tiny-llama", "--k", "3", "--draws", "2", "--queries", "4")
    result = cli("icl-order", "sensitivity", *args, "--json", "--quiet", env=env)
    assert result.returncode == 0, result
    r = result.json()["results"]
    assert r["model"] == "tiny-org/tiny-llama" and r["orderings_per_draw"] == 6
    missing = cli("icl-order", "sensitivity", "--model", "tiny-org/absent", env=env)
    assert missing.returncode == 2 and str(tmp_path / "hub") in missing.stderr


@pytest.mark.slow  # > 10 s: run by `make test-slow`
@pytest.mark.timeout(900)  # spawns two workers that import torch and load the model
def test_search_results_do_not_depend_on_workers(cli):
    """The same shards in-process and in two spawned workers: identical `results`."""
    args = ("--k", "3", "--candidates", "4", "--queries", "6", "--seeds", "2", "--no-cache")
    docs = [
        cli("icl-order", "search", *args, "--workers", w, "--json", "--quiet", env=ONE_THREAD)
        for w in ("1", "2")
    ]
    assert all(d.returncode == 0 for d in docs), docs
    one, two = (d.json() for d in docs)
    assert one["results"] == two["results"]
    assert two["environment"]["execution"]["backend"] == "processes:2"
    assert one["environment"]["execution"]["tasks"] == 2  # one shard per seed


@pytest.fixture(scope="module")
def pool_files(tmp_path_factory):
    """A labelled pool and unlabelled inputs in the embedded model's world."""
    import numpy as np

    from iclr25.core.icl_order import synthetic

    examples = synthetic.sample_episode(np.random.default_rng(1), 36, 3, True, filler_probs=(1,))
    root = tmp_path_factory.mktemp("select")
    pool, inputs = root / "pool.jsonl", root / "inputs.jsonl"
    pool.write_text(
        "".join(json.dumps({"text": e.text, "label": e.label}) + "\n" for e in examples[:30])
    )
    inputs.write_text(
        "".join(json.dumps({"text": e.text, "id": i}) + "\n" for i, e in enumerate(examples[30:]))
    )
    return pool, inputs, examples


@pytest.mark.slow  # > 10 s: run by `make test-slow`
@pytest.mark.timeout(900)  # three runs, one with two spawned workers
def test_select_writes_ordered_prompts(cli, pool_files, tmp_path):
    """`select` writes prompts.jsonl in the documented schema; each prompt is the chosen
    demonstrations in order in the template, then the input; exhaustive search's pick
    has an entropy no higher than cluster's, and 2 workers give the same prompts."""
    pool, inputs, examples = pool_files
    base = ("icl-order", "select", "--demos", pool, "--inputs", inputs, "--k", "3")
    base += ("--candidates", "5", "--json", "--quiet")
    runs = {
        "cluster": cli(*base, "--out", tmp_path / "c", env=ONE_THREAD),
        "exhaustive": cli(*base, "--method", "exhaustive", env=ONE_THREAD),
        "workers": cli(*base, "--workers", "2", "--no-cache", env=ONE_THREAD),
    }
    assert all(r.returncode == 0 for r in runs.values()), runs
    lines = [json.loads(x) for x in (tmp_path / "c" / "prompts.jsonl").read_text().splitlines()]
    assert [x["input"] for x in lines] == [e.text for e in examples[30:]]
    labels = {e.text: e.label for e in examples[:30]}
    for x in lines:
        assert set(x) >= {"input", "demonstrations", "prompt", "prediction", "probabilities"}
        demos = x["demonstrations"]
        assert len(demos) == 3 and all(labels[d["text"]] == d["label"] for d in demos)
        assert x["prompt"] == "".join(f"{d['text']} {d['label']}\n" for d in demos) + x["input"]
        assert x["prediction"] in x["probabilities"]
        assert sum(x["probabilities"].values()) == pytest.approx(1.0)
        assert max(x["probabilities"], key=x["probabilities"].get) == x["prediction"]
    cluster = runs["cluster"].json()["results"]
    assert cluster["prompts"] == lines and cluster["inputs"] == 6 and cluster["pool"] == 30
    exhaustive = runs["exhaustive"].json()["results"]["prompts"]
    for c, e in zip(lines, exhaustive, strict=True):
        assert e["entropy"] <= c["entropy"] + 1e-5
    assert runs["workers"].json()["results"]["prompts"] == lines


@pytest.mark.slow  # > 10 s: run by `make test-slow`
@pytest.mark.parametrize(
    "case, message",
    [
        ("no_text", "found ['id', 'sentence']"),
        ("empty_pool", "has no examples"),
        ("k_too_large", "larger than the pool's 4 demonstrations"),
        ("unmapped_label", "have no label word in --label-words"),
    ],
)
def test_select_bad_input_exits_2(cli, pool_files, tmp_path, case, message):
    pool, inputs, _ = pool_files
    args = ["--demos", pool, "--inputs", inputs]
    if case == "no_text":
        bad = tmp_path / "in.jsonl"
        bad.write_text('{"sentence": "bako", "id": 1}\n')
        args[3] = bad
    elif case == "empty_pool":
        args[1] = tmp_path / "empty.jsonl"
        args[1].write_text("")
    elif case == "k_too_large":
        lines = pool.read_text().splitlines(keepends=True)
        first = json.loads(lines[0])["label"]
        other = next(x for x in lines if json.loads(x)["label"] != first)  # two labels
        small = tmp_path / "small.jsonl"
        small.write_text("".join([*lines[:3], other]))
        args[1] = small
        args += ["--k", "5", "--candidates", "6"]
    else:
        args += ["--label-words", "foo=foo"]
    result = cli("icl-order", "select", *args, "--out", tmp_path / "o", env=ONE_THREAD)
    assert result.returncode == 2, result
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()
