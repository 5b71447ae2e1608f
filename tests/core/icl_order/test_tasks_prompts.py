"""Templates, task files, label words and segment-wise prompt ids."""

from __future__ import annotations

import json

import pytest

from iclr25.core.icl_order import synthetic
from iclr25.core.icl_order.prompts import encode_task, label_tokens, special_prefix
from iclr25.core.icl_order.tasks import (
    Task,
    Template,
    builtin_task,
    load_task_file,
    parse_label_words,
    resolve_task,
)
from iclr25.errors import InputError, UsageError


@pytest.mark.parametrize(
    "text, match",
    [
        ("Input: {text}\n", r"\{label\} exactly once"),
        ("Label: {label}\n", r"\{text\} exactly once"),
        ("{label} {text}", "before"),
        ("{text} {text} {label}", r"\{text\} exactly once"),
    ],
)
def test_bad_templates(text, match):
    with pytest.raises(UsageError, match=match):
        Template(text)


def test_template_pieces_known_answer():
    t = Template.from_cli("Review: {text}\\nSentiment: {label}\\n")
    assert t.demonstration("good", "positive") == "Review: good\nSentiment: positive\n"
    assert t.query("good") == "Review: good\nSentiment:"  # trailing space moves to the label
    assert t.label_continuation("positive") == " positive"


def test_vocabulary_is_fixed():
    words = synthetic.content_words()
    assert len(words) == synthetic.N_CATEGORIES
    assert all(len(w) == synthetic.WORDS_PER_CATEGORY for w in words)
    # known answer: the first words of the fixed syllable walk
    assert words[0][:3] == ["bani", "bebu", "bepe"]
    assert len(synthetic.vocabulary()) == 137


def test_builtin_task_is_seeded_and_balanced():
    a, b = builtin_task("symbolic", seed=3), builtin_task("symbolic", seed=3)
    assert a == b
    assert len(a) == 512 and len(a.label_words) == 4
    assert set(a.label_words) <= set(synthetic.SYMBOL_LABELS)
    assert a.chance < 0.35
    assert len(builtin_task("symbolic-binary").label_words) == 2
    assert set(builtin_task("categories").label_words) <= set(synthetic.NATURAL_LABELS)


def test_jsonl_and_csv_files(tmp_path):
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"text": "great", "label": 1}\n\n{"text": "awful", "label": 0}\n')
    task = load_task_file(jsonl, label_words=parse_label_words("0=bad,1=good"))
    assert task.texts == ("great", "awful") and task.label_words == ("good", "bad")
    assert task.labels == (0, 1)
    csv_file = tmp_path / "t.csv"
    csv_file.write_text("sentence,y\nhello,a\nbye,b\n")
    task = load_task_file(csv_file, text_column="sentence", label_column="y")
    assert task.label_words == ("a", "b")


@pytest.mark.parametrize(
    "content, match",
    [
        ('{"text": "a", "label": "x"}\n{"text": "b"\n', "line 2 is not valid JSON"),
        ('{"text": "a", "label": "x"}\n{"text": "b"}\n', "line 2 has no 'label'"),
        ("[1, 2]\n", "line 1 is not a JSON object"),
        ("", "no examples"),
        ('{"text": "a", "label": "x"}\n{"text": "b", "label": "x"}\n', "only one label"),
    ],
)
def test_malformed_jsonl_names_file_and_line(tmp_path, content, match):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=match) as info:
        load_task_file(path)
    assert str(path) in info.value.what


def test_csv_without_column_and_missing_files(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("text,target\nx,1\n")
    with pytest.raises(InputError, match="no 'label' column") as info:
        load_task_file(path)
    assert "--label-column" in info.value.fix
    with pytest.raises(InputError, match="does not exist"):
        load_task_file(tmp_path / "missing.jsonl")
    other = tmp_path / "t.txt"
    other.write_text("x")
    with pytest.raises(InputError, match="neither"):
        load_task_file(other)
    with pytest.raises(UsageError, match="unknown task"):
        resolve_task("sentiment")
    with pytest.raises(UsageError, match="VALUE=WORD"):
        parse_label_words("negative")


def test_unmapped_label_values(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "a", "label": "0"}\n{"text": "b", "label": "2"}\n')
    with pytest.raises(InputError, match=r"labels \['2'\]"):
        load_task_file(path, label_words={"0": "no"})


def test_special_prefix_and_prompt_ids(lm, task, encoded):
    vocab = lm.tokenizer.get_vocab()
    assert special_prefix(lm.tokenizer) == [vocab[synthetic.BOS]]
    # known answer: the built-in template "{text} {label}\n" is <word> <label> \n
    for i in range(5):
        tokens = lm.tokenizer.convert_ids_to_tokens(encoded.demos[i])
        assert tokens == [task.texts[i], task.label_words[task.labels[i]], "\n"]
        assert lm.tokenizer.convert_ids_to_tokens(encoded.queries[i]) == [task.texts[i]]
    ids = encoded.prompt((3, 1), 7)
    assert ids == encoded.prefix + encoded.demos[3] + encoded.demos[1] + encoded.queries[7]


def _task(words):
    return Task("t", ("bani", "dozu"), (0, 1), tuple(words))


def test_label_words_must_be_known_and_distinct(lm):
    vocab = lm.tokenizer.get_vocab()
    assert label_tokens(lm.tokenizer, _task(["foo", "bar"])) == [[vocab["foo"]], [vocab["bar"]]]
    # a label word of two words is two tokens, scored by their mean log-probability
    assert label_tokens(lm.tokenizer, _task(["foo bar", "baz"])) == [
        [vocab["foo"], vocab["bar"]],
        [vocab["baz"]],
    ]
    with pytest.raises(InputError, match="'positive' is not in the tokenizer's vocabulary") as e:
        label_tokens(lm.tokenizer, _task(["foo", "positive"]))
    assert "--label-words" in e.value.fix and "--model" in e.value.fix
    with pytest.raises(InputError, match="do not map to distinct tokens"):
        label_tokens(lm.tokenizer, _task(["foo", "foo "]))


def test_label_merging_with_the_query_is_named(lm):
    """With no separator before {label}, 'bani' + 'foo' is one word ('banifoo', unknown):
    the query's own tokens would change, so the template is refused, saying why."""
    merged = Task("t", ("bani", "dozu"), (0, 1), ("foo", "bar"), Template("{text}{label}\n"))
    with pytest.raises(InputError, match="merges with the end of the query") as info:
        label_tokens(lm.tokenizer, merged)
    assert "--template" in info.value.fix


def test_encode_task_round_trip(lm, task):
    encoded = encode_task(lm.tokenizer, task)
    assert len(encoded.demos) == len(task) and encoded.labels == list(task.labels)
    words = lm.tokenizer.convert_ids_to_tokens([t[0] for t in encoded.label_tokens])
    assert tuple(words) == task.label_words


def test_file_task_round_trips_through_json(tmp_path):
    path = tmp_path / "t.jsonl"
    rows = [{"text": f"t{i}", "label": "ab"[i % 2]} for i in range(6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = resolve_task(str(path))
    assert len(task) == 6 and task.chance == 0.5


def test_noisy_task_shows_noisy_labels_and_scores_true_ones(lm):
    """symbolic-noisy: the demonstrations show a wrong label on ~30 % of the examples,
    the same texts as the clean categories; a query's gold label is its true category,
    also in a restricted (shipped) copy of the encoded task."""
    import numpy as np

    noisy = builtin_task("symbolic-noisy", seed=0)
    assert noisy.answers is not None and len(noisy.answers) == len(noisy)
    wrong = np.mean([s != a for s, a in zip(noisy.labels, noisy.answers, strict=True)])
    assert abs(wrong - 0.3) < 0.06  # binomial sd over 512 examples: 0.02
    # the true labels follow the categories: one label per content word
    by_word = {}
    for text, answer in zip(noisy.texts, noisy.answers, strict=True):
        by_word.setdefault(text, set()).add(answer)
    assert all(len(v) == 1 for v in by_word.values())
    i = next(i for i in range(len(noisy)) if noisy.labels[i] != noisy.answers[i])
    assert noisy.demonstration(i).endswith(noisy.label_words[noisy.labels[i]] + "\n")
    assert noisy.answer(i) == noisy.answers[i] != noisy.labels[i]
    encoded = encode_task(lm.tokenizer, noisy)
    assert encoded.answer(i) == noisy.answers[i] and encoded.labels[i] == noisy.labels[i]
    assert encoded.restricted([i, 0]).answer(i) == noisy.answers[i]
    clean = builtin_task("symbolic", seed=0)
    assert clean.answers is None and clean.answer(5) == clean.labels[5]
