"""`iclr25 mufu` through the real console script."""

from __future__ import annotations

import json

import pytest

from iclr25.testing import error_line
from tests.core.mufu.conftest import make_seq2seq, make_world_model

HYPS = ["the cat sat on the mat", "kedeñu mépa", "", "a b c"]
REFS = ["the cat is on the mat", "kedeču mäpa", "abc", "abc"]


@pytest.fixture(scope="module")
def world_model(tmp_path_factory):
    return make_world_model(tmp_path_factory.mktemp("world-model"))


@pytest.fixture
def text_files(tmp_path):
    hyp, ref, base = tmp_path / "hyp.txt", tmp_path / "ref.txt", tmp_path / "base.txt"
    hyp.write_text("\n".join(HYPS) + "\n")
    ref.write_text("\n".join(REFS) + "\n")
    base.write_text("\n".join(["the cat", "kedeñu", "ab", "c"]) + "\n")
    return hyp, ref, base


@pytest.fixture
def data_tsv(tmp_path):
    path = tmp_path / "data.tsv"
    rows = [
        ["source", "target", "draft", "cand.sam", "cand.ser"],
        ["ROFF FSTEU", "fu fa", "fu", "cu ca", "łu ła"],
        ["INPN", "baré", "ba", "bara", "bará"],
        ["TGBLGV", "déwa", "dé", "mäłä", "dáśa"],
    ]
    path.write_text("".join("\t".join(r) + "\n" for r in rows))
    return path


def test_score_equals_sacrebleu_with_paired_bootstrap(cli, text_files):
    from sacrebleu.metrics import CHRF

    hyp, ref, base = text_files
    result = cli(
        "mufu",
        "score",
        "--hyp",
        hyp,
        "--ref",
        ref,
        "--baseline",
        base,
        "--bootstrap",
        "200",
        "--json",
        "--quiet",
    )
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["chrf"] == CHRF().corpus_score(HYPS, [REFS]).score
    assert res["chrf_pp"] == CHRF(word_order=2).corpus_score(HYPS, [REFS]).score
    assert res["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0")
    assert res["n"] == 4 and len(res["per_sentence"]) == 4
    boot = res["bootstrap"]
    assert boot["n_samples"] == 200 and boot["seed"] == 12345
    assert boot["ci95"][0] <= boot["mean"] <= boot["ci95"][1] and 0 < boot["p_value"] <= 1


def test_score_line_count_mismatch_is_exit_2(cli, text_files, tmp_path):
    hyp, _, _ = text_files
    short = tmp_path / "short.txt"
    short.write_text("one line\n")
    result = cli("mufu", "score", "--hyp", hyp, "--ref", short)
    assert result.returncode == 2
    assert "has 4 lines but" in error_line(result.stderr) and "short.txt has 1" in result.stderr


def test_prompt_formats_and_errors(cli, data_tsv, world_model, tmp_path):
    result = cli(
        "mufu",
        "prompt",
        "--data",
        data_tsv,
        "--model",
        world_model,
        "--aux-langs",
        "ser,sam",
        "--json",
        "--quiet",
    )
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["n"] == 3 and res["prompt"]["aux_langs"] == ["ser", "sam"]
    assert res["prompts"][0].splitlines()[2:5] == ["Ser: łu ła", "Sam: cu ca", "Tel draft: fu"]
    shuffled = cli(
        "mufu",
        "prompt",
        "--data",
        data_tsv,
        "--aux-langs",
        "sam",
        "--shuffle-aux",
        "--json",
        "--quiet",
    ).json()["results"]
    own = [p.splitlines()[2] for p in res["prompts"]]
    assert all(
        s.splitlines()[2] not in (o.replace("Ser", "sam"),)
        for s, o in zip(shuffled["prompts"], own, strict=True)
    )
    assert sorted(p.splitlines()[2] for p in shuffled["prompts"]) == [
        "sam: bara",
        "sam: cu ca",
        "sam: mäłä",
    ]
    assert [p.splitlines()[2] for p in shuffled["prompts"]] != [
        "sam: cu ca",
        "sam: bara",
        "sam: mäłä",
    ]
    missing = cli("mufu", "prompt", "--data", data_tsv, "--aux-langs", "sam,dov")
    assert missing.returncode == 2 and "column 'cand.dov' is missing" in error_line(missing.stderr)
    one = tmp_path / "one.tsv"
    one.write_text("source\tcand.sam\tdraft\nA\tb\tc\n")
    lonely = cli("mufu", "prompt", "--data", one, "--aux-langs", "sam", "--shuffle-aux")
    assert lonely.returncode == 2 and "at least 2 sentences" in error_line(lonely.stderr)
    target_aux = cli(
        "mufu", "prompt", "--data", data_tsv, "--target-lang", "sam", "--aux-langs", "sam"
    )
    assert target_aux.returncode == 2 and "among the auxiliary" in error_line(target_aux.stderr)
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    assert "is empty" in error_line(cli("mufu", "prompt", "--data", empty).stderr)


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_candidates_from_a_causal_teacher(cli, data_tsv, world_model, tmp_path):
    out = tmp_path / "cands.jsonl"
    result = cli(
        "mufu",
        "candidates",
        "--data",
        data_tsv,
        "--teacher",
        world_model,
        "--aux-langs",
        "auto",
        "--k",
        "3",
        "--save",
        out,
        "--max-new-tokens",
        "6",
        "--json",
        "--quiet",
    )
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["aux_langs"] == ["sam", "ser", "dov"] and res["distances"]["sam"] == 0.25
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and {"draft", "cand.sam", "cand.ser", "cand.dov", "target"} <= set(
        rows[0]
    )
    again = cli(
        "mufu",
        "candidates",
        "--data",
        data_tsv,
        "--teacher",
        world_model,
        "--aux-langs",
        "sam",
        "--save",
        out,
    )
    assert again.returncode == 2 and "--overwrite" in error_line(again.stderr)
    assert len(out.read_text().splitlines()) == 3  # untouched


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_candidates_from_a_seq2seq_teacher(cli, data_tsv, tmp_path):
    seq = make_seq2seq(tmp_path / "bart")
    s2s = cli(
        "mufu",
        "candidates",
        "--data",
        data_tsv,
        "--teacher",
        seq,
        "--target-lang",
        "tel",
        "--aux-langs",
        "sam,ser",
        "--max-new-tokens",
        "4",
        "--json",
        "--quiet",
    )
    assert s2s.returncode == 0, s2s
    srows = s2s.json()["results"]["rows"]
    assert len(srows) == 3 and {"draft", "cand.sam", "cand.ser"} <= set(srows[0])


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_finetune_lora_then_translate(cli, data_tsv, world_model, tmp_path):
    saved = tmp_path / "student"
    result = cli(
        "mufu",
        "finetune",
        "--data",
        data_tsv,
        "--valid",
        data_tsv,
        "--model",
        world_model,
        "--aux-langs",
        "sam,ser",
        "--epochs",
        "1",
        "--lora",
        "--lora-r",
        "2",
        "--max-new-tokens",
        "4",
        "--save",
        saved,
        "--json",
        "--quiet",
    )
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["budget"] == {"examples": 3, "epochs": 1, "batch_size": 16, "steps": 1, "lr": 0.001}
    assert res["lora"] is True and (saved / "model.safetensors").exists()
    assert json.loads((saved / "mufu_prompt.json").read_text())["aux_langs"] == ["sam", "ser"]
    tr = cli(
        "mufu",
        "translate",
        "--data",
        data_tsv,
        "--model",
        saved,
        "--max-new-tokens",
        "4",
        "--json",
        "--quiet",
    )
    assert tr.returncode == 0, tr
    t = tr.json()["results"]
    assert t["prompt"]["format"] == "mufu" and t["prompt"]["aux_langs"] == ["sam", "ser"]
    assert t["n"] == 3 and len(t["per_sentence"]) == 3 and 0 <= t["chrf"] <= 100
    again = cli(
        "mufu",
        "finetune",
        "--data",
        data_tsv,
        "--model",
        world_model,
        "--format",
        "plain",
        "--epochs",
        "1",
        "--save",
        saved,
    )
    assert again.returncode == 2 and "--overwrite" in error_line(
        again.stderr
    )  # checked before loading


def test_missing_model_is_exit_2(cli, data_tsv, tmp_path):
    missing = cli("mufu", "translate", "--data", data_tsv, "--model", tmp_path / "nope")
    assert missing.returncode == 2 and "does not exist" in error_line(missing.stderr)


def test_bundled_model_not_built_is_an_input_error_with_the_fix(tmp_path, monkeypatch):
    """An installation without the embedded model (the CLI maps InputError to exit 2)."""
    from iclr25.core.mufu import experiment, models
    from iclr25.errors import InputError

    monkeypatch.setattr(models, "bundled_path", lambda: tmp_path)
    monkeypatch.setattr(experiment, "bundled_path", lambda: tmp_path)
    with pytest.raises(InputError, match="not built") as err:
        models.resolve("bundled")
    assert "train_mufu_model.py" in err.value.fix
    with pytest.raises(InputError, match="not built") as err:
        experiment.base_model(experiment.ExperimentConfig(seeds=2))
    assert "train_mufu_model.py" in err.value.fix


def test_demo_headlines_say_whether_the_difference_is_significant():
    from iclr25.commands.mufu_views import headline

    boot = {"ci95": [60.0, 70.0], "p_value": 0.2, "n_samples": 1000, "seed": 12345, "mean": 65.0}
    doc = {
        "results": {
            "chrf": 65.0,
            "chrf_pp": 63.0,
            "n": 50,
            "bootstrap": boot,
            "baseline_chrf": 64.0,
        }
    }
    assert headline(doc) == (
        "chrF 65.0 (95% [60.0, 70.0]) vs baseline 64.0: +1.0, p = 0.200 (no significant difference)"
    )
    boot["p_value"] = 0.001
    assert headline(doc).endswith("(significant at 0.05)")
