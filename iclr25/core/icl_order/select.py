"""From a demonstration pool and unlabelled inputs to chosen, ordered prompts.

What a user of the paper wants at the end: for each new input, which k demonstrations
of their labelled pool to show, in which order. Per input (Pham et al., ICLR 2025, Sec.
4, with the self-adaptive criterion of Wu et al., ACL 2023):

1. pre-select n candidates from the pool (``similar``: top-n cosine similarity of the
   model's last-token embeddings of the bare inputs, as self-adaptive ICL's TopK
   selection; ``random``: n at random);
2. rank organisations of k candidates by the entropy of the model's label distribution
   after the prompt and keep the lowest: ``cluster`` scores the n(n-1) (first, last)
   pairs (the paper's Cluster-based Search), ``exhaustive`` all P(n, k) ordered
   k-subsets, ``sample`` the best of n(n-1) random ones (``search.py``);
3. write the prompt: the chosen demonstrations in the template, in order, then the
   input cut before its label — text ready to send to any LLM — with the model's
   prediction and label distribution under that prompt.

The inputs are appended to the pool as extra examples (label unused) so the search code
scores them exactly as it scores held-out queries; shards of inputs go through the
execution layer like a search's.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.core.icl_order.cluster_search import DEFAULT_MIDDLE
from iclr25.core.icl_order.search import SearchConfig, Shard, select_candidates
from iclr25.core.icl_order.tasks import Task
from iclr25.errors import InputError, UsageError
from iclr25.parallel import derive_seed

SELECT_METHODS = ("cluster", "exhaustive", "sample")
SELECT_SELECTIONS = ("similar", "random")


@dataclass(frozen=True)
class SelectConfig:
    k: int = 4  # demonstrations per prompt
    n_candidates: int = 8  # pre-selected per input (at most the pool's size)
    method: str = "cluster"
    selection: str = "similar"  # as self-adaptive ICL's TopK pre-selection
    middle: str = DEFAULT_MIDDLE
    prefix_cache: bool = True
    shard_queries: int = 10  # inputs per parallel task
    max_evaluations: int = 2_000_000

    def search_config(self, inputs: int) -> SearchConfig:
        return SearchConfig(
            method=self.method,
            k=self.k,
            n_candidates=self.n_candidates,
            queries=inputs,
            seeds=1,
            selection=self.selection,
            middle=self.middle,
            prefix_cache=self.prefix_cache,
            shard_queries=self.shard_queries,
            max_evaluations=self.max_evaluations,
        )


def validate(cfg: SelectConfig, pool_size: int | None = None) -> None:
    if cfg.method not in SELECT_METHODS:
        raise UsageError(f"unknown --method {cfg.method!r}", f"use {', '.join(SELECT_METHODS)}")
    if cfg.selection not in SELECT_SELECTIONS:
        raise UsageError(
            f"unknown --selection {cfg.selection!r}", f"use {', '.join(SELECT_SELECTIONS)}"
        )
    if cfg.k < 1 or cfg.n_candidates < 1:
        raise UsageError("--k and --candidates must be positive", "use 1 or more")
    if cfg.k > cfg.n_candidates:
        raise UsageError(
            f"--k {cfg.k} is larger than --candidates {cfg.n_candidates}", "choose k <= n"
        )
    if pool_size is not None and cfg.k > pool_size:
        raise UsageError(
            f"--k {cfg.k} is larger than the pool's {pool_size} demonstrations",
            "lower --k or add demonstrations to the --demos file",
        )


# -- the inputs file -------------------------------------------------------------------
def _jsonl_inputs(path: Path, column: str) -> list[str]:
    texts = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}: line {line_no} is not valid JSON ({exc.msg})",
                "write one JSON object per line",
            ) from None
        if not isinstance(obj, dict) or str(obj.get(column, "")).strip() == "":
            found = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
            raise InputError(
                f"{path}: line {line_no} has no {column!r} field (found {found})",
                f"add a {column} field to every line or pass --text-column",
            )
        texts.append(str(obj[column]).strip())
    return texts


def _csv_inputs(path: Path, column: str) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return []
        if column not in reader.fieldnames:
            raise InputError(
                f"{path}: the header has no {column!r} column (found {reader.fieldnames})",
                "rename the column or pass --text-column",
            )
        return [str(row[column]).strip() for row in reader if str(row[column] or "").strip()]


def read_inputs(path: Path, column: str = "text") -> list[str]:
    """Unlabelled inputs: ``.jsonl`` (objects with ``column``), ``.csv`` (a ``column``
    column) or ``.txt`` (one input per line)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"inputs file {path} does not exist", "check the path given to --inputs")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        texts = _jsonl_inputs(path, column)
    elif suffix == ".csv":
        texts = _csv_inputs(path, column)
    elif suffix == ".txt":
        texts = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
        texts = [t for t in texts if t]
    else:
        raise InputError(f"inputs file {path} is not .jsonl, .csv or .txt", "convert it")
    if not texts:
        raise InputError(f"inputs file {path} has no inputs", "add one input per line")
    return texts


def with_inputs(pool: Task, inputs: list[str]) -> Task:
    """The pool with the inputs appended (label 0, never read): indices P..P+I-1."""
    return Task(
        name=pool.name,
        texts=pool.texts + tuple(inputs),
        labels=pool.labels + (0,) * len(inputs),
        label_words=pool.label_words,
        template=pool.template,
    )


def plan_inputs(lm, encoded, cfg: SelectConfig, pool_size: int, inputs: int, seed: int):
    """Shards of input indices with their pre-selected candidates."""
    plan_seed = derive_seed(seed, "select")
    rng = np.random.default_rng([plan_seed, 1])
    pool = list(range(pool_size))
    queries = list(range(pool_size, pool_size + inputs))
    candidates, _ = select_candidates(
        lm, encoded, cfg.selection, queries, pool, min(cfg.n_candidates, pool_size), rng
    )
    return [
        Shard(
            0,
            plan_seed,
            tuple(queries[start : start + cfg.shard_queries]),
            tuple(map(tuple, candidates[start : start + cfg.shard_queries])),
            False,
        )
        for start in range(0, inputs, cfg.shard_queries)
    ]


def prompt_record(task: Task, record: dict, method: str) -> dict:
    """The JSONL line of one input: its ordered demonstrations, prompt and prediction."""
    order = record["order"]
    text = task.texts[record["query"]]
    words = task.label_words
    return {
        "input": text,
        "demonstrations": [{"text": task.texts[i], "label": words[task.labels[i]]} for i in order],
        "prompt": "".join(task.demonstration(i) for i in order) + task.query(record["query"]),
        "prediction": words[record["predicted"]],
        "probabilities": dict(zip(words, record["probabilities"], strict=True)),
        "entropy": record["entropy"],
        "method": method,
    }
