"""Shards of queries as tasks of the execution layer (``iclr25.parallel.run_tasks``).

A task is a module-level function of (configuration, seed). The configuration carries
what a worker needs to redo the shard exactly: the model's :class:`ModelConfig` (the
worker loads the model once per process and keeps it), the fingerprint of the model's
files (so a changed model never reuses a cached result), the encoded task (token ids,
small) and the search settings. The parent process scores nothing itself beyond
planning; the same shards run in-process (``--workers 1``), in local processes or on
Dask, so the results are the same JSON whatever the backend.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from iclr25.core.icl_order.models import LoadedModel, ModelConfig, load_model, resolve_source
from iclr25.core.icl_order.prompts import EncodedTask
from iclr25.core.icl_order.search import (
    SearchConfig,
    Shard,
    evaluations_per_query,
    search_shard,
)
from iclr25.parallel import Execution, Outcome, Task, run_tasks

_LOADED: dict[ModelConfig, LoadedModel] = {}  # per process: a worker loads a model once


def model_fingerprint(cfg: ModelConfig) -> str:
    """A hash of the model folder's file names, sizes and modification times."""
    source = Path(resolve_source(cfg))
    if not source.is_dir():  # a hub id that transformers will download
        return str(source)
    h = hashlib.sha256()
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        stat = path.stat()
        h.update(f"{path.relative_to(source)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def remember(cfg: ModelConfig, lm: LoadedModel) -> None:
    """Let in-process tasks use the model the command already loaded."""
    _LOADED[cfg] = lm


def loaded(cfg: ModelConfig) -> LoadedModel:
    if cfg not in _LOADED:
        _LOADED[cfg] = load_model(cfg)
    return _LOADED[cfg]


@dataclass(frozen=True)
class SearchTask:
    model: ModelConfig
    fingerprint: str
    encoded: EncodedTask
    search: SearchConfig
    methods: tuple[str, ...]
    shard: Shard


def search_task(config: SearchTask, seed: int) -> dict:
    """One shard of a search, every method (``search.search_shard``)."""
    del seed  # the shard's plan seed fixes every random draw
    lm = loaded(config.model)
    return search_shard(lm, config.encoded, config.search, config.methods, config.shard)


def _needed(encoded: EncodedTask, shard: Shard) -> EncodedTask:
    """Only the shard's queries and candidates: a small task to ship and hash."""
    return encoded.restricted([*shard.queries, *(c for cands in shard.candidates for c in cands)])


def shard_runner(
    model: ModelConfig,
    encoded: EncodedTask,
    cfg: SearchConfig,
    execution: Execution,
    command: str,
    on_progress: Callable[[float], None] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
):
    """A ``search_report.ShardRunner`` that runs the shards through ``run_tasks``;
    ``on_progress`` is advanced in model evaluations (the mean of a shard's per task)."""
    fingerprint = model_fingerprint(model)

    def run(shards: list[Shard], methods: tuple[str, ...]) -> list[dict]:
        per_query = sum(evaluations_per_query(cfg, m) for m in methods)
        per_task = per_query * sum(len(s.queries) for s in shards) / max(1, len(shards))
        on_done = None if on_progress is None else (lambda n: on_progress(n * per_task))
        tasks = [
            Task(
                search_task,
                SearchTask(model, fingerprint, _needed(encoded, shard), cfg, methods, shard),
                shard.plan_seed,
                label=f"search seed {shard.seed_index} queries {shard.queries[0]}..",
            )
            for shard in shards
        ]
        outcome = run_tasks(tasks, execution, command=command, on_done=on_done)
        if on_outcome is not None:
            on_outcome(outcome)
        return outcome.results

    return run
