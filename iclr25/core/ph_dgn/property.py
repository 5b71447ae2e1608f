"""Graph property prediction (A-DGN / PH-DGN benchmark): diameter, SSSP, eccentricity.

Data from :mod:`.property_data`; targets divided by the training maximum. Every model is
trained at the same width, depth, epochs and optimiser (Adam, full batch, MSE), one
configuration each; node tasks use the model's node readout, ``diameter`` the graph-level
readout (sum ‖ max ‖ mean pooling + MLP, :class:`.fit.GraphLevel`). Metric, as the
official code: log10 of the MSE, for node tasks the per-graph mean of node errors
averaged over graphs; reported at the epoch with the best validation log10 MSE.
No pass condition: ``log10_mse`` per model (mean over seeds, 95 % interval) is reported
as measured, beside the train-mean predictor's.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass

import torch

from iclr25.core.ph_dgn.fit import FitConfig, make_model
from iclr25.core.ph_dgn.models import (
    MODELS,
    check_models,
    graph_aggregations,
    n_params,
    phdgn_extras,
)
from iclr25.core.ph_dgn.property_data import TASKS, make_split, normalise
from iclr25.core.ph_dgn.transfer import _one_thread, ci95
from iclr25.errors import UsageError
from iclr25.parallel import Task, derive_seed


@dataclass(frozen=True)
class PropertyConfig:
    task: str = "sssp"
    models: tuple[str, ...] = MODELS
    width: int = 16
    depth: int = 10  # L (the official grid: 1, 5, 10, 20, 30)
    eps: float = 0.2
    lr: float = 3e-3
    epochs: int = 300
    graphs: tuple[int, int, int] = (500, 100, 100)
    seeds: int = 3
    eval_every: int = 10
    aggregation: str = "sum"  # PH-DGN models only: Φ per half (models.parse_aggregation)
    readout: str = "pq"  # PH-DGN models only: p, q or pq

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise UsageError(f"unknown --task {self.task!r}", f"use one of: {', '.join(TASKS)}")
        check_models(list(self.models))
        if len(self.graphs) != 3 or min(self.graphs) < 1:
            raise UsageError(f"--graphs {self.graphs}", "three positive counts, e.g. 500,100,100")
        if self.seeds < 1:
            raise UsageError(f"--seeds {self.seeds}", "pass --seeds ≥ 1")
        FitConfig(
            self.models[0],
            width=self.width,
            depth=self.depth,
            eps=self.eps,
            lr=self.lr,
            epochs=self.epochs,
            aggregation=self.aggregation,
            readout=self.readout,
        )  # fmt: skip  (the same option checks as fit)


def log10_mse(pred: torch.Tensor, y: torch.Tensor, batch: torch.Tensor | None, g: int):
    """log10 MSE; with ``batch`` the per-graph mean of node errors, averaged over graphs."""
    err = (pred - y) ** 2
    if batch is not None:
        per_graph = torch.zeros(g).index_add_(0, batch, err)
        err = per_graph / torch.bincount(batch, minlength=g).clamp(min=1)
    return math.log10(max(err.mean().item(), 1e-30))


def train_cell(config: dict, seed: int) -> dict:
    """One model × seed on the seed's data (the task function)."""
    with _one_thread():
        splits = [make_split(config["task"], size, config["data_seed"] + i)
                  for i, size in enumerate(config["graphs"])]  # fmt: skip
        normalise(splits)
        for s in splits:
            s["aggs"] = graph_aggregations(s["edge_index"], s["x"].shape[0])
            s["g"] = int(s["batch"].max()) + 1
        level = splits[0]["level"]
        cfg = FitConfig(config["model"], level, "regression", width=config["width"],
                        depth=config["depth"], eps=config["eps"], lr=config["lr"],
                        epochs=config["epochs"], aggregation=config.get("aggregation", "sum"),
                        readout=config.get("readout", "pq"))  # fmt: skip
        torch.manual_seed(seed)
        model = make_model(cfg, 2, 1)
        best = _fit(model, splits, level, config)
        model.load_state_dict(best["state"])
        train_mean = splits[0]["y"].mean()
        test = splits[2]
        node_batch = test["batch"] if level == "node" else None
        return {
            "val_log10_mse": best["val"],
            "test_log10_mse": _score(model, test, level),
            "mean_predictor_log10_mse": log10_mse(
                torch.full_like(test["y"], train_mean.item()), test["y"], node_batch, test["g"]
            ),
            "best_epoch": best["epoch"],
            "params": n_params(model),
        }


def _forward(model, split, level):
    if level == "graph":
        return model(split["x"], split["aggs"], split["batch"], split["g"])[:, 0]
    return model(split["x"], split["aggs"])[:, 0]


def _score(model, split, level) -> float:
    with torch.no_grad():
        pred = _forward(model, split, level)
    return log10_mse(pred, split["y"], split["batch"] if level == "node" else None, split["g"])


def _fit(model, splits, level, config) -> dict:
    train, val = splits[0], splits[1]
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"])
    best = {
        "val": _score(model, val, level),
        "epoch": 0,
        "state": copy.deepcopy(model.state_dict()),
    }
    for epoch in range(1, config["epochs"] + 1):
        opt.zero_grad()
        loss = torch.mean((_forward(model, train, level) - train["y"]) ** 2)
        if not torch.isfinite(loss):
            break
        loss.backward()
        opt.step()
        if epoch % config["eval_every"] == 0 or epoch == config["epochs"]:
            value = _score(model, val, level)
            if value < best["val"]:
                best = {"val": value, "epoch": epoch, "state": copy.deepcopy(model.state_dict())}
    return best


def tasks(cfg: PropertyConfig, run_seed: int) -> list[Task]:
    out = []
    for s in range(cfg.seeds):
        data_seed = derive_seed(run_seed, "property-data", cfg.task, s) % 2**31
        for model in cfg.models:
            conf = {"model": model, "task": cfg.task, "data_seed": data_seed,
                    "graphs": list(cfg.graphs),
                    **{k: asdict(cfg)[k] for k in ("width", "depth", "eps", "lr", "epochs",
                                                   "eval_every")},
                    **phdgn_extras(cfg.aggregation, cfg.readout)}  # fmt: skip
            seed = derive_seed(run_seed, "property-model", cfg.task, model, s)
            out.append(Task(train_cell, conf, seed, label=f"{model} seed {s}"))
    return out


def summarise(cfg: PropertyConfig, task_list: list[Task], outcomes: list[dict]) -> dict:
    by_model: dict[str, list[dict]] = {}
    for task, res in zip(task_list, outcomes, strict=True):
        by_model.setdefault(task.config["model"], []).append(res)
    log10 = {}
    for model, runs in by_model.items():
        values = [r["test_log10_mse"] for r in runs]
        log10[model] = {
            "mean": sum(values) / len(values),
            "ci95": ci95(values),
            "per_seed": values,
            "val_mean": sum(r["val_log10_mse"] for r in runs) / len(runs),
            "params": runs[0]["params"],
        }
    first = next(iter(by_model.values()))
    return {
        "task": cfg.task,
        "level": TASKS[cfg.task],
        "log10_mse": log10,
        "mean_predictor_log10_mse": sum(r["mean_predictor_log10_mse"] for r in first) / len(first),
        "seeds": cfg.seeds,
    }
