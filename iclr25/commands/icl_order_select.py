"""The body of `iclr25 icl-order select`: plan the inputs' shards, run them through the
execution layer, write ``prompts.jsonl`` and the results (rendering in icl_order_views)."""

from __future__ import annotations

import json

from iclr25.runner import Run


def run_select(run: Run, cfg, execution, loaded) -> None:
    from iclr25.commands import icl_order_views as views
    from iclr25.commands.icl_order_options import shard_runner
    from iclr25.core.icl_order.prompts import check_length
    from iclr25.core.icl_order.search import check_budget
    from iclr25.core.icl_order.select import plan_inputs, prompt_record, validate

    lm, task, encoded, pool_size, texts, context, model_cfg = loaded
    validate(cfg, pool_size)
    n = min(cfg.n_candidates, pool_size)
    if n < cfg.n_candidates:
        run.warn(f"the pool has {pool_size} demonstrations: --candidates lowered to {n}")
    from dataclasses import replace

    cfg = replace(cfg, n_candidates=n)
    search_cfg = cfg.search_config(len(texts))
    check_length(encoded, cfg.k, getattr(lm.model.config, "max_position_embeddings", None))
    run.log(f"select: {check_budget(lm, encoded, search_cfg, (cfg.method,)).describe(len(texts))}")
    shards = plan_inputs(lm, encoded, cfg, pool_size, len(texts), run.seed)
    total = sum(len(s.queries) for s in shards) * _per_query(search_cfg)
    with run.timer("scoring_s"), run.progress(f"{cfg.method} search", total) as advance:
        runner = shard_runner(
            run, search_cfg, execution, model_cfg, encoded, "icl-order select", advance
        )
        outputs = runner(shards, (cfg.method,))
    records = [r for out in outputs for r in out["records"][cfg.method]]
    prompts = [prompt_record(task, r, cfg.method) for r in records]
    if run.wants_artifacts:
        from iclr25 import atomic

        lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in prompts)
        atomic.write_text(run.artifact_path("prompts.jsonl"), lines)
    else:
        run.log("pass --out DIR to write prompts.jsonl")
    results = {
        **context,
        "method": cfg.method,
        "k": cfg.k,
        "candidates": n,
        "inputs": len(texts),
        "pool": pool_size,
        "selection": cfg.selection,
        "middle": cfg.middle,
        "prompts": prompts,
    }
    run.finish(results, {"model": model_cfg, "select": cfg}, views.render_select)


def _per_query(cfg) -> int:
    from iclr25.core.icl_order.search import evaluations_per_query

    return evaluations_per_query(cfg)
