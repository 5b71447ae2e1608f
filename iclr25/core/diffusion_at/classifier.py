"""A small digit classifier whose features give a Fréchet distance for 8×8 digits.

The Inception network of FID (Heusel et al. 2017) does not apply to 8×8 grey digits, so
the Fréchet distance and precision/recall of ``metrics.py`` are computed in the 64-d
penultimate layer of this CNN, trained by the project on scikit-learn's digits:

    conv3×3(1→16) → SiLU → conv3×3 stride 2 (16→32) → SiLU → flatten (512)
    → linear(512→64) → SiLU  [features]  → linear(64→10)  [logits]

Training (:func:`train_digit_classifier`) is deterministic: a fixed permutation splits the
1797 digits into 1500 for training and 297 held out; Adam (lr 3e-3), 40 epochs of
minibatches of 100, light Gaussian input noise (std 0.1) so that the features also
behave on imperfect generated digits. ``scripts/train_digit_classifier.py`` runs it and
writes the shipped weights ``iclr25/data/diffusion_at/digit_classifier.safetensors``
(with the held-out accuracy in its metadata); :func:`load_digit_classifier` reads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from iclr25.distributed_torch import DataParallel
from iclr25.paths import package_file

WEIGHTS = ("iclr25.data", "diffusion_at", "digit_classifier.safetensors")
N_TRAIN = 1500
BATCH = 100  # minibatch (the global one under torchrun)


class DigitClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.SiLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.SiLU(),
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64),
            nn.SiLU(),
        )
        self.head = nn.Linear(64, 10)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)  # (B, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))  # (B, 10)


def digits_split(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x_train, y_train, x_test, y_test): digits in [-1, 1] as (N, 1, 8, 8), fixed split."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = torch.from_numpy(digits.images.astype(np.float32) / 16.0 * 2 - 1)[:, None]  # (N,1,8,8)
    y = torch.from_numpy(digits.target.astype(np.int64))
    order = torch.from_numpy(np.random.default_rng(seed).permutation(len(y)))
    train, test = order[:N_TRAIN], order[N_TRAIN:]
    return x[train], y[train], x[test], y[test]


def train_digit_classifier(
    seed: int = 0,
    epochs: int = 40,
    parallel: DataParallel | None = None,
    on_loss: Callable[[float], None] | None = None,
) -> tuple[DigitClassifier, float]:
    """Train deterministically on CPU; returns (model, held-out accuracy).

    ``parallel`` (torchrun): every rank draws the same minibatch and noise and computes the
    loss on its rows, so the run is the one-process run, split (the global minibatch stays
    100). ``on_loss`` receives each step's minibatch mean loss (under torchrun, on every
    rank, the whole minibatch's)."""
    x_train, y_train, x_test, y_test = digits_split(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = DigitClassifier()
    if parallel is not None:
        parallel.attach(model)
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(epochs):
        order = torch.randperm(len(y_train), generator=gen)
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            noisy = x_train[idx] + 0.1 * torch.randn(x_train[idx].shape, generator=gen)
            if parallel is None:
                loss = nn.functional.cross_entropy(model(noisy), y_train[idx])
                share = loss
            else:  # this rank's rows; the scaled loss's DDP gradient is the batch mean's
                rows = parallel.rows(len(idx))
                loss = nn.functional.cross_entropy(parallel.module(noisy[rows]), y_train[idx][rows])
                share = parallel.scale(loss, rows.stop - rows.start, len(idx))
            optimizer.zero_grad()
            share.backward()
            optimizer.step()
            if on_loss is not None:
                on_loss(_batch_mean(loss, parallel, len(idx)))
    return model.eval(), accuracy(model, x_test, y_test)


def _batch_mean(loss: torch.Tensor, parallel: DataParallel | None, n: int) -> float:
    if parallel is None:
        return float(loss.detach())
    rows = parallel.rows(n)
    return parallel.mean(loss, rows.stop - rows.start, n)


@torch.no_grad()
def accuracy(model: DigitClassifier, x: torch.Tensor, y: torch.Tensor) -> float:
    return float((model(x).argmax(dim=1) == y).float().mean())


def save_digit_classifier(model: DigitClassifier, path: Path, held_out_accuracy: float) -> None:
    from safetensors.torch import save

    from iclr25 import atomic

    meta = {"held_out_accuracy": json.dumps(held_out_accuracy), "n_train": str(N_TRAIN)}
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    atomic.write_bytes(path, save(tensors, metadata=meta))


def load_digit_classifier() -> DigitClassifier:
    """The shipped, project-trained classifier (eval mode, CPU)."""
    from safetensors.torch import load_file

    model = DigitClassifier()
    model.load_state_dict(load_file(str(package_file(*WEIGHTS[:2], WEIGHTS[2]))))
    return model.eval()


@torch.no_grad()
def digit_features(x: torch.Tensor, model: DigitClassifier | None = None) -> np.ndarray:
    """(N, 1, 8, 8) digits in [-1, 1] → (N, 64) float64 features."""
    model = model or load_digit_classifier()
    chunks = [model.features(x[i : i + 2048].float().cpu()) for i in range(0, len(x), 2048)]
    return torch.cat(chunks).double().numpy() if chunks else np.zeros((0, 64))
