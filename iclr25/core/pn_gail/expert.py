"""The bundled Pendulum expert: an SB3 SAC actor's mean, run in numpy.

``iclr25/data/pn_gail/pendulum_sac_expert.safetensors`` holds the actor of a SAC agent
trained by ``scripts/train_pn_gail_expert.py`` (deterministic; its sha256 is in
docs/pn-gail.md). The deterministic action is the squashed mean,

    a = 2 · tanh(W₃ · relu(W₂ · relu(W₁ s + b₁) + b₂) + b₃)      (Pendulum's torque is ±2)

so demonstrations need neither torch nor stable-baselines3.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.errors import InputError

EXPERT_FILE = "pendulum_sac_expert.safetensors"
LAYERS = ("latent_pi.0", "latent_pi.2", "mu")  # SB3 SAC actor: 2 hidden ReLU layers, mean


@dataclass(frozen=True)
class NumpyExpert:
    """Deterministic policy (E, ds) float obs -> (E, da) actions in [low, high]."""

    weights: tuple[tuple[np.ndarray, np.ndarray], ...]  # (W (out, in), b (out,)) per layer
    action_low: float
    action_high: float
    metadata: dict

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        h = np.asarray(obs, dtype=np.float32)
        for W, b in self.weights[:-1]:
            h = np.maximum(h @ W.T + b, 0.0)  # (E, hidden)
        W, b = self.weights[-1]
        squashed = np.tanh(h @ W.T + b)  # (E, da) in (−1, 1)
        return self.action_low + 0.5 * (squashed + 1.0) * (self.action_high - self.action_low)


def bundled_expert_path() -> Path:
    from iclr25.paths import package_file

    return package_file("iclr25.data", "pn_gail", EXPERT_FILE)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_expert(path: Path | None = None) -> NumpyExpert:
    """The expert at ``path`` (default: the bundled one)."""
    from safetensors import safe_open

    path = Path(path) if path is not None else bundled_expert_path()
    if not path.is_file():
        raise InputError(
            f"expert weights not found at {path}",
            "reinstall iclr25 or run scripts/train_pn_gail_expert.py",
        )
    with safe_open(str(path), framework="np") as fh:
        metadata = dict(fh.metadata() or {})
        tensors = {k: fh.get_tensor(k) for k in fh.keys()}  # noqa: SIM118 - safe_open API
    try:
        weights = tuple((tensors[f"{n}.weight"], tensors[f"{n}.bias"]) for n in LAYERS)
    except KeyError as exc:
        raise InputError(f"{path} is not an SB3 SAC actor ({exc} missing)") from None
    low = float(metadata.get("action_low", -2.0))
    high = float(metadata.get("action_high", 2.0))
    return NumpyExpert(weights, low, high, metadata)
