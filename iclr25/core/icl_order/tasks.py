"""Classification tasks for in-context learning: built-in synthetic ones and user files.

A :class:`Task` is a pool of labelled examples, its label words (the tokens the model is
asked to produce) and a prompt :class:`Template` such as
``"Input: {text}\\nLabel: {label}\\n"``. A demonstration is the template filled with an
example; the query is the template cut just before ``{label}``.

Built-in tasks (the embedded model was trained on this world, see ``synthetic.py``; texts
are one invented word, the template ``"{text} {label}\\n"`` of the model's training;
symbols ``foo, bar, baz, ...`` are drawn with the seed, so the mapping can only be read
from the demonstrations):

* ``symbolic-noisy`` (default): 4 categories, 4 symbols, and 30 % of the demonstrations
  show another of the 4 labels (conflicting demonstrations, as in crowd-labelled data);
  a held-out query is scored against its true category (``Task.answers``), as one
  evaluates a model prompted with noisy data on clean test labels — the setting where
  the order of demonstrations changes predictions (``sensitivity.py`` measures it; the
  embedded model was trained with such noise and no hint of which position to trust);
* ``symbolic``: the same without noise (chance 25 %), the easy setting;
* ``symbolic-binary``: 2 categories, 2 symbols (chance 50 %);
* ``categories``: 4 categories with their natural names (``animal``, ...), answerable
  from the weights alone — the control where demonstrations matter little.

User tasks: JSONL (one object per line) or CSV with a header, columns ``text`` and
``label`` by default. Label values are the label words unless ``label_words`` maps them
(``{"0": "negative", "1": "positive"}``). Without a template, a file is prompted as
``"Input: {text}\nLabel: {label}\n"`` — or, for the embedded model, in its training
format ``"{text} {label}\n"``, the only one it learned in context.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iclr25.core.icl_order import synthetic
from iclr25.errors import InputError, UsageError

DEFAULT_TEMPLATE = "Input: {text}\nLabel: {label}\n"  # user task files with a user's model
# built-in tasks, and any task given to the embedded model, use the embedded model's
# training format: the label right after the text (a tiny model learns in-context copying
# across one token far faster than across four; in any other format it stays at chance)
BUILTIN_TEMPLATE = "{text} {label}\n"
BUILTIN_FILLERS = (1.0,)  # built-in texts are one invented word, as in training
BUILTIN_POOL_SIZE = 512  # examples per built-in task (a fresh, seeded pool)


@dataclass(frozen=True)
class BuiltinSpec:
    n_classes: int
    symbolic: bool  # labels are symbols drawn per pool (else the categories' names)
    noise: float = 0.0  # share of demonstrations whose label is replaced by another label


BUILTIN_SPECS = {
    "symbolic-noisy": BuiltinSpec(4, True, 0.3),  # the default: order matters here
    "symbolic": BuiltinSpec(4, True),
    "symbolic-binary": BuiltinSpec(2, True),
    "categories": BuiltinSpec(4, False),
}
BUILTIN_TASKS = tuple(BUILTIN_SPECS)
DEFAULT_TASK = BUILTIN_TASKS[0]


@dataclass(frozen=True)
class Template:
    """A prompt template with exactly one ``{text}`` followed by one ``{label}``."""

    text: str = DEFAULT_TEMPLATE

    def __post_init__(self) -> None:
        t = self.text
        for field_name in ("{text}", "{label}"):
            if t.count(field_name) != 1:
                raise UsageError(
                    f"--template {t!r} must contain {field_name} exactly once",
                    'use e.g. --template "Input: {text}\\nLabel: {label}\\n"',
                )
        if t.index("{text}") > t.index("{label}"):
            raise UsageError(
                f"--template {t!r} puts {{label}} before {{text}}",
                "the label must come after the text, as the model predicts it",
            )

    @classmethod
    def from_cli(cls, text: str) -> Template:
        """Turn the escapes a shell leaves in place (``\\n``, ``\\t``) into characters."""
        return cls(text.replace("\\n", "\n").replace("\\t", "\t"))

    def demonstration(self, text: str, label: str) -> str:
        return self.text.replace("{text}", text).replace("{label}", label)

    def query(self, text: str) -> str:
        """The template up to ``{label}``, without trailing spaces (BPE tokenizers put
        the space into the label token, e.g. GPT-2's ``' positive'``)."""
        head = self.text[: self.text.index("{label}")].replace("{text}", text)
        return head.rstrip(" ")

    def label_continuation(self, label: str) -> str:
        head = self.text[: self.text.index("{label}")]
        return head[len(head.rstrip(" ")) :] + label


@dataclass(frozen=True)
class Task:
    name: str
    texts: tuple[str, ...]
    labels: tuple[int, ...]  # index into label_words
    label_words: tuple[str, ...]
    template: Template = field(default_factory=Template)
    # the true label of each example when it is a query (None: ``labels``); differs from
    # ``labels`` only where a demonstration shows a noisy label
    answers: tuple[int, ...] | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def demonstration(self, index: int) -> str:
        return self.template.demonstration(self.texts[index], self.label_words[self.labels[index]])

    def query(self, index: int) -> str:
        return self.template.query(self.texts[index])

    def answer(self, index: int) -> int:
        return (self.answers or self.labels)[index]

    @property
    def chance(self) -> float:
        """Accuracy of always answering the most frequent true label."""
        counts = np.bincount(self.answers or self.labels, minlength=len(self.label_words))
        return float(counts.max() / counts.sum())


#: random stream of each built-in pool (fixed, so adding a task changes no other pool)
_STREAMS = {"symbolic": 0, "symbolic-binary": 1, "categories": 2, "symbolic-noisy": 3}


def builtin_task(name: str, seed: int = 0, template: Template | None = None) -> Task:
    """A seeded pool of ``BUILTIN_POOL_SIZE`` examples of a built-in task."""
    if name not in BUILTIN_TASKS:
        raise UsageError(
            f"unknown task {name!r}", f"use one of {', '.join(BUILTIN_TASKS)} or a file"
        )
    spec = BUILTIN_SPECS[name]
    rng = np.random.default_rng([seed, _STREAMS[name]])
    examples = synthetic.sample_episode(
        rng, BUILTIN_POOL_SIZE, spec.n_classes, spec.symbolic, filler_probs=BUILTIN_FILLERS
    )
    true = [e.label for e in examples]
    shown = true
    if spec.noise > 0:  # the same label set as the clean examples, in appearance order
        shown = synthetic.add_label_noise(rng, true, spec.noise)
    # label words in a fixed order: sorted, so the mapping is visible in the output
    words = tuple(sorted(set(shown)))
    return Task(
        name=name,
        texts=tuple(e.text for e in examples),
        labels=tuple(words.index(label) for label in shown),
        label_words=words,
        template=template or Template(BUILTIN_TEMPLATE),
        answers=tuple(words.index(label) for label in true) if spec.noise > 0 else None,
    )


# -- user files --------------------------------------------------------------------------
def _read_jsonl(path: Path, text_col: str, label_col: str) -> list[tuple[str, str]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{path}: line {line_no} is not valid JSON ({exc.msg})",
                    "write one JSON object per line",
                ) from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}: line {line_no} is not a JSON object", "write {...}")
            rows.append(_row(obj, path, line_no, text_col, label_col))
    return rows


def _read_csv(path: Path, text_col: str, label_col: str) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return []
        for col, flag in ((text_col, "--text-column"), (label_col, "--label-column")):
            if col not in reader.fieldnames:
                raise InputError(
                    f"{path}: the header has no {col!r} column (it has {reader.fieldnames})",
                    f"rename the column or pass {flag}",
                )
        return [
            _row(row, path, line_no, text_col, label_col)
            for line_no, row in enumerate(reader, start=2)
        ]


def _row(obj: dict, path: Path, line_no: int, text_col: str, label_col: str) -> tuple[str, str]:
    for col, flag in ((text_col, "--text-column"), (label_col, "--label-column")):
        value = obj.get(col)
        if value is None or str(value).strip() == "":
            raise InputError(
                f"{path}: line {line_no} has no {col!r} value",
                f"add a {col} field to every line or pass {flag}",
            )
    return str(obj[text_col]).strip(), str(obj[label_col]).strip()


def load_task_file(
    path: Path,
    template: Template | None = None,
    label_words: dict[str, str] | None = None,
    text_column: str = "text",
    label_column: str = "label",
) -> Task:
    """A user task from ``.jsonl``/``.json`` (one object a line) or ``.csv``/``.tsv``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"task file {path} does not exist", "check the path given to --task")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        rows = _read_jsonl(path, text_column, label_column)
    elif suffix == ".csv":
        rows = _read_csv(path, text_column, label_column)
    else:
        raise InputError(
            f"task file {path} is neither .jsonl nor .csv", "convert it to JSONL or CSV"
        )
    if not rows:
        raise InputError(f"task file {path} has no examples", "add lines with text and label")
    values = list(dict.fromkeys(label for _, label in rows))  # first-appearance order
    mapping = label_words or {v: v for v in values}
    missing = [v for v in values if v not in mapping]
    if missing:
        raise InputError(
            f"{path}: labels {missing[:5]} have no label word in --label-words",
            "map every label value, e.g. --label-words '0=negative,1=positive'",
        )
    words = tuple(dict.fromkeys(mapping[v] for v in values))
    if len(words) < 2:
        raise InputError(
            f"{path}: only one label ({words[0]!r})", "a task needs two labels or more"
        )
    return Task(
        name=path.name,
        texts=tuple(t for t, _ in rows),
        labels=tuple(words.index(mapping[label]) for _, label in rows),
        label_words=words,
        template=template or Template(),
    )


def parse_label_words(spec: str | None) -> dict[str, str] | None:
    """``"0=negative,1=positive"`` -> {"0": "negative", "1": "positive"}."""
    if not spec:
        return None
    mapping = {}
    for item in spec.split(","):
        if "=" not in item:
            raise UsageError(
                f"--label-words item {item!r} is not VALUE=WORD",
                "write e.g. --label-words '0=negative,1=positive'",
            )
        value, word = (part.strip() for part in item.split("=", 1))
        mapping[value] = word
    return mapping


def is_builtin(name: str) -> bool:
    return name in BUILTIN_TASKS


def resolve_task(
    spec: str | None,
    seed: int = 0,
    template: Template | None = None,
    label_words: dict[str, str] | None = None,
    text_column: str = "text",
    label_column: str = "label",
    embedded_model: bool = False,
) -> Task:
    """``--task``: a built-in name, or a file path; None = :data:`DEFAULT_TASK`. Without a
    ``template``, a file for the ``embedded_model`` gets its training format."""
    spec = spec or DEFAULT_TASK
    if spec in BUILTIN_TASKS:
        return builtin_task(spec, seed, template)
    if template is None and embedded_model:
        template = Template(BUILTIN_TEMPLATE)
    path = Path(spec).expanduser()
    if not path.exists() and "/" not in spec and "." not in spec:
        raise UsageError(
            f"unknown task {spec!r}", f"use one of {', '.join(BUILTIN_TASKS)} or a file"
        )
    return load_task_file(path, template, label_words, text_column, label_column)
