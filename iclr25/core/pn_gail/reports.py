"""The result dictionaries of `demos`, `confidence` and `train`, and saving policies."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from iclr25.core.pn_gail.confidence import quality
from iclr25.core.pn_gail.demos import Demos


def demos_summary(demos: Demos) -> dict:
    return {
        "source": demos.source,
        "pairs": len(demos),
        "labeled": int(demos.labeled.sum()),
        "labeled_mean_confidence": float(np.nanmean(demos.confidence)),
        "demonstrators": demos.demonstrators or _by_confidence(demos),
    }


def _by_confidence(demos: Demos) -> list[dict]:
    """A file without demonstrator records: groups of equal true confidence, if known."""
    if demos.true_confidence is None:
        return []
    values, counts = np.unique(demos.true_confidence, return_counts=True)
    if len(values) > 20:
        return []
    return [
        {"level": None, "return_mean": None, "confidence": float(v), "pairs": int(c)}
        for v, c in zip(values, counts, strict=True)
    ]


def confidence_summary(demos: Demos, r: np.ndarray, classifier: str) -> dict:
    results = {
        "classifier": classifier,
        "pairs": len(demos),
        "labeled": int(demos.labeled.sum()),
        "mae_unlabeled": None,
        "correlation": None,
        "per_demonstrator": [],
    }
    truth = demos.true_confidence
    if truth is None:
        return results
    results.update(quality(r, truth, demos.labeled))
    groups = (
        demos.demonstrator
        if demos.demonstrator is not None
        else np.unique(truth, return_inverse=True)[1]
    )
    unlabeled = ~demos.labeled
    for g in np.unique(groups):
        mask = (groups == g) & unlabeled
        record = demos.demonstrators[int(g)] if demos.demonstrators else {}
        results["per_demonstrator"].append(
            {
                "demonstrator": int(g),
                "level": record.get("level"),
                "true_confidence": float(truth[groups == g].mean()),
                "predicted_mean": float(r[mask].mean()) if mask.any() else None,
                "unlabeled_pairs": int(mask.sum()),
            }
        )
    return results


def train_summary(results: dict, demos: Demos, r: np.ndarray, env: str, save) -> dict:
    out = {"env": env, **results}
    if demos.true_confidence is not None:
        out["confidence"] = quality(r, demos.true_confidence, demos.labeled)
    if save is not None:
        out["saved_to"] = str(save)
    return out


def saver(path: Path):
    """A function writing a trained policy to ``path`` atomically: an SB3 model's zip, or
    a BC network's state dict (torch.save, also a zip)."""
    path = Path(path)

    def save(model) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".zip", dir=path.parent)
        os.close(fd)
        try:
            if hasattr(model, "save"):
                model.save(tmp)
            else:
                import torch

                torch.save(model.state_dict(), tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    return save
