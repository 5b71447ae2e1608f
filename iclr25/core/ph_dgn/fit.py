"""Training any registry model on a user's graphs (``fit``) and applying it (``predict``).

Node level: the model's own readout gives one output per node. Graph level (as the
official graph-property code): the node states h (the model's ``hidden``) are pooled per
graph as [Σ h ‖ max h ‖ mean h] (3·h) and an MLP (Linear → LeakyReLU → Linear) maps them
to the output; the model's node readout is then unused and dropped.

Regression: MSE on targets standardised with the training mean and sd (the metric is
reported in the original units); baseline: predicting the training mean. Classification:
cross-entropy over the classes seen in training; metric accuracy; baseline: the majority
class. Split: the data's own ``split`` if given, else graphs are shuffled with the seed
and cut by ``--split`` fractions; a single graph at node level is split by node. The
reported ``value`` is the test metric at the epoch with the best validation metric.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from iclr25.core.ph_dgn.dataset import GraphData, check_memory
from iclr25.core.ph_dgn.models import (
    ModelSpec,
    build,
    check_models,
    check_phdgn_options,
    graph_aggregations,
    n_params,
)
from iclr25.core.ph_dgn.phdgn import DAMPENING, FORCING
from iclr25.errors import InputError, UsageError

LEVELS, TASKS = ("node", "graph"), ("regression", "classification")
FORMAT = "iclr25-ph-dgn-model/1"


@dataclass(frozen=True)
class FitConfig:
    model: str = "phdgn-c"
    level: str = "node"
    task: str = "regression"
    split: tuple[float, float, float] = (0.8, 0.1, 0.1)
    width: int = 16
    depth: int = 4  # L: layers / shared steps
    eps: float = 0.2
    lr: float = 3e-3
    epochs: int = 300
    eval_every: int = 10  # epochs between validation checks (model selection, history)
    dampening: str = "param"  # phdgn only: param, param+, mlp, dgn (α = 1)
    forcing: str = "dgn-tanh"  # phdgn only: dgn-tanh, mlp-sin (β = 1)
    aggregation: str = "sum"  # PH-DGN models only: Φ per half (models.parse_aggregation)
    readout: str = "pq"  # PH-DGN models only: p, q or pq

    def __post_init__(self) -> None:
        check_models([self.model])
        if self.level not in LEVELS:
            raise UsageError(f"unknown --level {self.level!r}", "use node or graph")
        if self.task not in TASKS:
            raise UsageError(f"unknown --task {self.task!r}", "use regression or classification")
        if len(self.split) != 3 or min(self.split) < 0 or not 0.99 < sum(self.split) < 1.01:
            raise UsageError(
                f"--split {self.split}", "three fractions summing to 1, e.g. 0.8,0.1,0.1"
            )
        for name, value in (("--width", self.width), ("--depth", self.depth),
                            ("--epochs", self.epochs)):  # fmt: skip
            if value < 1:
                raise UsageError(f"{name} {value} must be at least 1", f"pass {name} ≥ 1")
        if not self.eps > 0:
            raise UsageError(f"--eps {self.eps} must be positive", "e.g. --eps 0.2")
        if not self.lr > 0:
            raise UsageError(f"--lr {self.lr} must be positive", "e.g. --lr 3e-3")
        for name, value, allowed in (("--dampening", self.dampening, DAMPENING[1:]),
                                     ("--forcing", self.forcing, FORCING[1:])):  # fmt: skip
            if value not in allowed:
                raise UsageError(f"unknown {name} {value!r}", f"use one of: {', '.join(allowed)}")
        check_phdgn_options(self.aggregation, self.readout)


class GraphLevel(nn.Module):
    """A node model's hidden states → [sum ‖ max ‖ mean] per graph → MLP  (G, out)."""

    def __init__(self, node_model: nn.Module, out_dim: int):
        super().__init__()
        hidden = node_model.readout.in_features
        node_model.readout = nn.Identity()  # the node readout is unused at graph level
        self.node_model = node_model
        self.head = nn.Sequential(
            nn.Linear(3 * hidden, hidden), nn.LeakyReLU(), nn.Linear(hidden, out_dim)
        )
        self.aggregations_per_step = node_model.aggregations_per_step

    def forward(self, x, aggs, batch: torch.Tensor, n_graphs: int) -> torch.Tensor:
        h = self.node_model.hidden(x, aggs)  # (N, h)
        return self.head(pool(h, batch, n_graphs))  # (G, out)


def pool(h: torch.Tensor, batch: torch.Tensor, n_graphs: int) -> torch.Tensor:
    """[Σ ‖ max ‖ mean] of node states per graph: (N, h) → (G, 3h); no graph is empty."""
    index = batch[:, None].expand_as(h)
    total = torch.zeros(n_graphs, h.shape[1], dtype=h.dtype).index_add_(0, batch, h)
    biggest = torch.zeros(n_graphs, h.shape[1], dtype=h.dtype).scatter_reduce(
        0, index, h, "amax", include_self=False
    )
    count = torch.bincount(batch, minlength=n_graphs).clamp(min=1).to(h.dtype)[:, None]
    return torch.cat([total, biggest, total / count], 1)


# ---------------------------------------------------------------------------------------
# Targets and splits
# ---------------------------------------------------------------------------------------
def encode_targets(y: np.ndarray, cfg: FitConfig, classes=None, stats=None) -> torch.Tensor:
    """y as a tensor: class indices (classification) or standardised values."""
    if cfg.task == "classification":
        lookup = {c: i for i, c in enumerate(classes)}
        return torch.tensor([lookup[c] for c in y.tolist()], dtype=torch.long)
    mean, sd = stats
    return torch.tensor((y.astype(np.float64) - mean) / sd, dtype=torch.float32)


def split_rows(data: GraphData, cfg: FitConfig, seed: int) -> list[torch.Tensor]:
    """Indices into ``data.rows`` of train, val and test (module docstring)."""
    row_graph = data.batch[data.rows] if data.level == "node" else data.rows  # (rows,)
    if data.split is not None:
        codes = torch.tensor(data.split)[row_graph]
    elif data.n_graphs >= 3:
        codes = _cut(data.n_graphs, cfg.split, seed)[row_graph]
    elif data.level == "node":
        codes = _cut(len(data.rows), cfg.split, seed)  # one graph: split its nodes
    else:
        raise InputError(f"{data.n_graphs} graph(s) at graph level", "give at least 3 graphs")
    parts = [torch.nonzero(codes == k).flatten() for k in range(3)]
    for name, part in zip(("train", "validation"), parts, strict=False):
        if part.numel() == 0:
            raise InputError(f"the {name} split is empty", "give more graphs or change --split")
    return parts


def _cut(count: int, fractions, seed: int) -> torch.Tensor:
    order = torch.randperm(count, generator=torch.Generator().manual_seed(seed))
    n_train = max(1, round(fractions[0] * count))
    n_val = max(1, round(fractions[1] * count)) if count > 1 else 0
    codes = torch.full((count,), 2)
    codes[order[:n_train]] = 0
    codes[order[n_train : n_train + n_val]] = 1
    return codes


# ---------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------
class Fitted:
    """A trained model with what ``predict`` needs to reproduce its input and outputs."""

    def __init__(self, model, cfg: FitConfig, in_dim: int, classes, stats):
        self.model, self.cfg, self.in_dim = model, cfg, in_dim
        self.classes, self.stats = classes, stats

    def outputs(self, data: GraphData, aggs: dict | None = None) -> torch.Tensor:
        """Raw outputs per scored row: (rows, classes) logits or (rows,) standardised.
        Differentiable; ``aggs`` (the graph's aggregations) are built when not given."""
        if aggs is None:
            aggs = graph_aggregations(data.edge_index, data.n_nodes, weight=data.edge_weight)
        if self.cfg.level == "graph":
            out = self.model(data.x, aggs, data.batch, data.n_graphs)
        else:
            out = self.model(data.x, aggs)[data.rows]
        return out if self.cfg.task == "classification" else out[:, 0]

    def predict(self, data: GraphData) -> list:
        with torch.no_grad():
            out = self.outputs(data)
        if self.cfg.task == "classification":
            return [self.classes[i] for i in out.argmax(1).tolist()]
        mean, sd = self.stats
        return (out.double() * sd + mean).tolist()


def make_model(cfg: FitConfig, in_dim: int, out_dim: int) -> nn.Module:
    spec = ModelSpec(cfg.model, in_dim, out_dim, cfg.width, cfg.depth, cfg.eps,
                     dampening=cfg.dampening, forcing=cfg.forcing,
                     aggregation=cfg.aggregation, readout=cfg.readout)  # fmt: skip
    model = build(spec)
    return GraphLevel(model, out_dim) if cfg.level == "graph" else model


def fit(data: GraphData, cfg: FitConfig, seed: int) -> tuple[Fitted, dict]:
    """Train on ``data`` (labels required) and score on its test split."""
    if data.y is None:
        raise InputError("the data have no target", "pass --target COLUMN")
    if data.level != cfg.level:
        raise UsageError(
            f"--level {cfg.level} but the data are {data.level} level",
            f"pass --level {data.level}, or give targets per {cfg.level}",
        )
    check_memory(data.n_nodes, data.edge_index.shape[1],
                 2 * cfg.width * (cfg.depth + 1) * 8, "training")  # fmt: skip
    parts = split_rows(data, cfg, seed)
    train_y = data.y[parts[0].numpy()]
    classes, stats = None, None
    if cfg.task == "classification":
        classes = sorted(set(train_y.tolist()))
        if len(classes) < 2:
            raise InputError(
                f"the training split has one class ({classes[0]!r})",
                "classification needs ≥ 2 classes, or use --task regression",
            )
    else:
        stats = (float(train_y.mean()), float(train_y.std()) or 1.0)
    torch.manual_seed(seed)
    out_dim = len(classes) if classes else 1
    fitted = Fitted(make_model(cfg, data.x.shape[1], out_dim), cfg, data.x.shape[1], classes, stats)
    if classes:  # validation/test rows of a class unseen in training cannot be scored
        parts = [parts[0]] + [
            p[torch.tensor(np.isin(data.y[p.numpy()], classes))] for p in parts[1:]
        ]
    labelled = torch.cat(parts)
    y_all = torch.zeros(len(data.rows), dtype=torch.long if classes else torch.float32)
    y_all[labelled] = encode_targets(data.y[labelled.numpy()], cfg, classes, stats)
    history = _train(fitted, data, y_all, parts, cfg)
    return fitted, _score(fitted, data, y_all, parts, history)


def _loss(cfg, out, y):
    if cfg.task == "classification":
        return nn.functional.cross_entropy(out, y)
    return torch.mean((out - y) ** 2)


def _metric(fitted: Fitted, out: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy, or MSE in the target's own units."""
    if fitted.cfg.task == "classification":
        return (out.argmax(1) == y).double().mean().item()
    sd = fitted.stats[1]
    return (torch.mean((out.double() - y.double()) ** 2) * sd**2).item()


def _train(fitted: Fitted, data, y_all, parts, cfg) -> list[dict]:
    model, train, val = fitted.model, parts[0], parts[1]
    better = (lambda a, b: a > b) if cfg.task == "classification" else (lambda a, b: a < b)
    aggs = graph_aggregations(data.edge_index, data.n_nodes, weight=data.edge_weight)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    best, history = None, []
    for epoch in range(1, cfg.epochs + 1):
        opt.zero_grad()
        loss = _loss(cfg, fitted.outputs(data, aggs)[train], y_all[train])
        if not torch.isfinite(loss):
            break  # diverged: keep the best state so far
        loss.backward()
        opt.step()
        if epoch % cfg.eval_every == 0 or epoch == cfg.epochs:
            with torch.no_grad():
                value = _metric(fitted, fitted.outputs(data, aggs)[val], y_all[val])
            history.append({"epoch": epoch, "train_loss": loss.item(), "val_metric": value})
            if best is None or better(value, best[0]):
                best = (value, epoch, copy.deepcopy(model.state_dict()))
    if best is not None:
        model.load_state_dict(best[2])
    return history


def _score(fitted: Fitted, data, y_all, parts, history) -> dict:
    cfg, (train, val, test) = fitted.cfg, parts
    scored = test if test.numel() else val
    with torch.no_grad():
        out = fitted.outputs(data)
    if cfg.task == "classification":
        majority = torch.bincount(y_all[train]).argmax()
        baseline = (y_all[scored] == majority).double().mean().item()
        metric = "accuracy"
    else:
        baseline = (torch.mean(y_all[scored].double() ** 2) * fitted.stats[1] ** 2).item()
        metric = "mse"
    return {
        "metric": metric,
        "value": _metric(fitted, out[scored], y_all[scored]),
        "baseline_value": baseline,
        "scored_split": "test" if test.numel() else "validation (the test split is empty)",
        "n_graphs": data.n_graphs,
        "n_nodes": data.n_nodes,
        "n_train": int(train.numel()), "n_val": int(val.numel()), "n_test": int(test.numel()),
        "params": n_params(fitted.model),
        "history": history,
    }  # fmt: skip


# ---------------------------------------------------------------------------------------
# Saving and loading (safetensors weights + a JSON sidecar)
# ---------------------------------------------------------------------------------------
def sidecar(path: Path) -> Path:
    return path.with_suffix(path.suffix + ".json")


def save(fitted: Fitted, path: Path) -> None:
    from safetensors.torch import save as st_save

    from iclr25 import atomic

    meta = {"format": FORMAT, "config": asdict(fitted.cfg), "in_dim": fitted.in_dim,
            "classes": fitted.classes, "stats": fitted.stats}  # fmt: skip
    state = {k: v.detach().contiguous() for k, v in fitted.model.state_dict().items()}
    atomic.write_bytes(path, st_save(state, metadata={"format": FORMAT}))
    atomic.write_json(sidecar(path), meta)


def load(path: Path) -> Fitted:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    side = sidecar(path)
    if not path.is_file() or not side.is_file():
        raise InputError(
            f"--load {path}: no model (and {side.name})", "train one with `fit --save`"
        )
    try:
        meta = json.loads(side.read_text())
        state = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise InputError(
            f"--load {path}: unreadable ({exc})", "retrain with `fit --save`"
        ) from None
    if meta.get("format") != FORMAT:
        raise InputError(f"--load {path}: not a ph-dgn model", "train one with `ph-dgn fit`")
    cfg = FitConfig(**{**meta["config"], "split": tuple(meta["config"]["split"])})
    classes = meta["classes"]
    model = make_model(cfg, meta["in_dim"], len(classes) if classes else 1)
    model.load_state_dict(state)
    stats = tuple(meta["stats"]) if meta["stats"] else None
    return Fitted(model, cfg, meta["in_dim"], classes, stats)


def predict(fitted: Fitted, data: GraphData) -> dict:
    """Predictions for every scored row of ``data``; the metric too when it has labels."""
    cfg = fitted.cfg
    if data.x.shape[1] != fitted.in_dim:
        raise InputError(
            f"the data have {data.x.shape[1]} features, the model was trained on {fitted.in_dim}",
            "give the same feature columns as in training",
        )
    if cfg.level == "graph" and data.level == "node":
        if data.y is not None and len(data.y) != data.n_graphs:
            raise InputError(
                "the model is graph level, the targets node level", "use graph targets"
            )
        data.level, data.rows = "graph", torch.arange(data.n_graphs)
    elif cfg.level == "node" and data.level == "graph":
        raise InputError("the model is node level, the data have graph targets", "use node targets")
    predictions = fitted.predict(data)
    out = {"n_graphs": data.n_graphs, "n_nodes": data.n_nodes, "predictions": predictions}
    if data.y is not None:
        if cfg.task == "classification":
            out["metric"] = "accuracy"
            out["value"] = float(np.mean(np.array(predictions) == data.y.astype(str)))
        else:
            out["metric"] = "mse"
            out["value"] = float(np.mean((np.array(predictions) - data.y) ** 2))
    return out
