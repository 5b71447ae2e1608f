"""The models whose robust risk is computed: linear/logistic (θ = (w, b)) and ReLU MLPs,
with their JSON file format (``fit --save``, ``risk/certify --load``).

The file stores everything needed to score new data the way the model was trained:
feature names, the target, the label values for classification, the standardisation (if
``--standardize`` was used: costs are then measured in standardised units), the loss and
the parameters. Writes are atomic and never replace an existing file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iclr25 import atomic
from iclr25.core.dro_bound.losses import Loss, get_loss, signed_scalar
from iclr25.errors import InputError, UsageError

FORMAT = "iclr25-dro-model"
FORMAT_VERSION = 1


@dataclass
class Standardization:
    mean: np.ndarray  # (d,)
    scale: np.ndarray  # (d,)

    def apply(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.scale


@dataclass
class ModelInfo:
    """What the model was trained on (copied into the saved file)."""

    features: list[str]
    target: str
    label_values: list | None = None  # classification: original values of (−1, +1)
    standardization: Standardization | None = None
    training: dict = field(default_factory=dict)


@dataclass
class LinearModel:
    """f_θ(x) = wᵀx + b; ``kind`` is "logistic" (margin losses) or "linear" (residual)."""

    kind: str
    loss: Loss
    coef: np.ndarray  # (d,) w
    intercept: float  # b (never part of the transport cost)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=np.float64) @ self.coef + self.intercept

    def scalars(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Margins y·f(x) or residuals y − f(x): (n,)."""
        return signed_scalar(self.loss, self.predict(x), y)

    def losses(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.loss.value(self.scalars(x, y))

    def torch_loss_fn(self, dtype, device):
        import torch

        w = torch.as_tensor(self.coef, dtype=dtype, device=device)
        b = float(self.intercept)
        margin = self.loss.kind == "margin"

        def loss_fn(x, y):
            f = x @ w + b
            return self.loss.torch_value(y * f if margin else y - f)

        return loss_fn


@dataclass
class MLPModel:
    """A ReLU network x -> scalar; layers are (W (out, in), b (out,)) numpy pairs."""

    kind: str  # "mlp"
    loss: Loss
    layers: list[tuple[np.ndarray, np.ndarray]]

    @property
    def hidden(self) -> list[int]:
        return [w.shape[0] for w, _ in self.layers[:-1]]

    def module(self, dtype=None, device="cpu"):
        import torch

        mods: list = []
        for i, (w, b) in enumerate(self.layers):  # built in float64: no rounding of θ
            lin = torch.nn.Linear(w.shape[1], w.shape[0], dtype=torch.float64)
            with torch.no_grad():
                lin.weight.copy_(torch.as_tensor(w))
                lin.bias.copy_(torch.as_tensor(b))
            mods.append(lin)
            if i < len(self.layers) - 1:
                mods.append(torch.nn.ReLU())
        net = torch.nn.Sequential(*mods)
        return net.to(device=device, dtype=dtype or torch.float64)

    @classmethod
    def from_module(cls, module, loss: Loss) -> MLPModel:
        import torch

        layers = [
            (m.weight.detach().cpu().double().numpy(), m.bias.detach().cpu().double().numpy())
            for m in module
            if isinstance(m, torch.nn.Linear)
        ]
        return cls("mlp", loss, layers)

    def predict(self, x: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            out = self.module()(torch.as_tensor(np.asarray(x, dtype=np.float64)))
        return out.squeeze(-1).numpy()

    def losses(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.loss.value(signed_scalar(self.loss, self.predict(x), y))

    def torch_loss_fn(self, dtype, device):
        net = self.module(dtype, device)
        margin = self.loss.kind == "margin"
        for p in net.parameters():
            p.requires_grad_(False)

        def loss_fn(x, y):
            f = net(x).squeeze(-1)
            return self.loss.torch_value(y * f if margin else y - f)

        return loss_fn


Model = LinearModel | MLPModel


# ---------------------------------------------------------------------------------------
# JSON file format
# ---------------------------------------------------------------------------------------
def _floats(values) -> list:
    return [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


def model_document(model: Model, info: ModelInfo) -> dict:
    doc: dict = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": model.kind,
        "loss": model.loss.as_dict(),
        "features": list(info.features),
        "target": info.target,
        "label_values": info.label_values,
        "standardization": None
        if info.standardization is None
        else {
            "mean": _floats(info.standardization.mean),
            "scale": _floats(info.standardization.scale),
        },
        "training": info.training,
    }
    if isinstance(model, LinearModel):
        doc["coefficients"] = _floats(model.coef)
        doc["intercept"] = float(model.intercept)
    else:
        doc["layers"] = [{"weight": w.tolist(), "bias": _floats(b)} for w, b in model.layers]
    return doc


def save_model(path: Path, model: Model, info: ModelInfo) -> None:
    """Write the model atomically; refuse to replace an existing file."""
    from iclr25.output import to_jsonable

    path = Path(path)
    if path.exists():
        raise UsageError(f"{path}: file exists", "choose another --save path or delete the file")
    atomic.write_json(path, to_jsonable(model_document(model, info)))


def _bad(path: Path, what: str) -> InputError:
    return InputError(
        f"{path}: {what}", "pass a model file written by `iclr25 dro-bound fit --save`"
    )


def load_model(path: Path) -> tuple[Model, ModelInfo]:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such model file", "check the --load path")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"not a JSON model file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bad(path, f"not an {FORMAT} file")
    try:
        loss_doc = doc["loss"]
        loss = get_loss(loss_doc["name"], float(loss_doc.get("delta", 1.0)))
        std = doc.get("standardization")
        info = ModelInfo(
            features=[str(f) for f in doc["features"]],
            target=str(doc["target"]),
            label_values=doc.get("label_values"),
            standardization=None
            if std is None
            else Standardization(np.asarray(std["mean"], float), np.asarray(std["scale"], float)),
            training=dict(doc.get("training") or {}),
        )
        model = _model_from_doc(doc, loss, len(info.features))
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(path, f"missing or malformed field ({exc})") from None
    return model, info


def _model_from_doc(doc: dict, loss: Loss, d: int) -> Model:
    kind = doc["model"]
    if kind in ("logistic", "linear"):
        coef = np.asarray(doc["coefficients"], dtype=np.float64)
        intercept = float(doc["intercept"])
        if coef.shape != (d,) or not np.all(np.isfinite(coef)) or not math.isfinite(intercept):
            raise ValueError("coefficients do not match the features or are not finite")
        return LinearModel(kind, loss, coef, intercept)
    if kind == "mlp":
        layers = [
            (np.asarray(layer["weight"], np.float64), np.asarray(layer["bias"], np.float64))
            for layer in doc["layers"]
        ]
        if not layers or layers[0][0].shape[1] != d or layers[-1][0].shape[0] != 1:
            raise ValueError("layer shapes do not match the features")
        return MLPModel("mlp", loss, layers)
    raise ValueError(f"unknown model kind {kind!r}")
