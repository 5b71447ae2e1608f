"""Trained PI-DION models on disk: safetensors weights + the problem they were trained for.

A model only accepts the sensor layout it was trained on (its branches take a fixed
vector of sensor values), and only answers for its PDE, coefficient and dimension; the
metadata records all of them so :func:`check_compatible` can refuse anything else with
one line that says how to train a matching model.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from iclr25.core.pi_dion.darcy_model import DarcyNetConfig, DarcyPIDION
from iclr25.core.pi_dion.model import PIDION, NetConfig
from iclr25.core.pi_dion.model2d import PIDION2D, NetConfig2D
from iclr25.errors import InputError

FORMAT = "iclr25-pi-dion/1"
BUNDLED = Path(__file__).resolve().parents[2] / "data" / "pi_dion" / "pi_dion_rd1d.safetensors"
BUNDLED_2D = BUNDLED.with_name("pi_dion_rd2d.safetensors")  # scripts/train_pi_dion.py --dim 2
# scripts/train_pi_dion.py --pde darcy
BUNDLED_DARCY = BUNDLED.with_name("pi_dion_darcy1d.safetensors")
_HOW_TO_BUILD = {BUNDLED: "", BUNDLED_2D: " --dim 2", BUNDLED_DARCY: " --pde darcy"}
BASELINE_LABELS = (10, 30, 100, 300, 1000)  # the supervised DeepONets bundled beside it


def baseline_path(folder: Path, n: int) -> Path:
    """Where the supervised DeepONet on ``n`` labelled pairs lives in ``folder``."""
    return Path(folder) / f"supervised_rd1d_N{n}.safetensors"


LAYOUT_TOL = 1e-6  # sensor positions equal to this tolerance count as the same layout


@dataclass(frozen=True)
class SavedModel:
    model: PIDION | PIDION2D | DarcyPIDION
    sensors: np.ndarray  # (m,) or (m, 2): the layout the branches were trained on
    pde: str
    c: float  # the zeroth-order coefficient of 𝓛 = −d²/dx² + c
    dim: int
    meta: dict  # everything else: training settings, label count, data summary


def resolve(model: str, dim: int = 1, pde: str = "reaction-diffusion") -> Path:
    """``bundled`` (the bundled model of ``pde`` in ``dim`` D) or a path → the model file's
    path. ``bundled`` of a PDE without one resolves to the reaction-diffusion model of that
    dimension, which :func:`check_compatible` then refuses with one line."""
    if model == "bundled":
        if pde == "darcy" and dim == 1:
            return BUNDLED_DARCY
        return BUNDLED_2D if dim == 2 else BUNDLED
    return Path(model)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def save(
    path: Path,
    model: PIDION | PIDION2D | DarcyPIDION,
    sensors: np.ndarray,
    pde: str,
    c: float,
    meta: dict,
) -> None:
    """Write weights and metadata atomically (temp file + rename)."""
    from safetensors.torch import save_file

    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    tensors["sensors"] = torch.as_tensor(np.asarray(sensors, np.float64))
    dim = 2 if isinstance(model, PIDION2D) else 1
    info = {"format": FORMAT, "pde": pde, "c": c, "dim": dim,
            "net": asdict(model.config), **meta}  # fmt: skip
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    save_file(tensors, str(tmp), metadata={"pi_dion": json.dumps(info)})
    tmp.chmod(0o644)
    tmp.replace(path)


def load(path: Path) -> SavedModel:
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        fix = (
            f"run scripts/train_pi_dion.py{_HOW_TO_BUILD[path]} to build it"
            if path in _HOW_TO_BUILD
            else "give a file written by `iclr25 pi-dion train --save`"
        )
        raise InputError(f"model {path} does not exist", fix)
    try:
        with safe_open(str(path), framework="pt") as handle:
            info = json.loads((handle.metadata() or {})["pi_dion"])
        tensors = load_file(str(path))
    except Exception as exc:  # noqa: BLE001 — any unreadable file is one input error
        what = f"{path} is not a PI-DION model ({type(exc).__name__})"
        raise InputError(what, "give a file written by `iclr25 pi-dion train --save`") from None
    sensors = tensors.pop("sensors").numpy()
    two_d = int(info.get("dim", 1)) == 2
    if info["pde"] == "darcy":
        model = DarcyPIDION(DarcyNetConfig(**info["net"]))
    else:
        model = PIDION2D(NetConfig2D(**info["net"])) if two_d else PIDION(NetConfig(**info["net"]))
    dtype = next(iter(tensors.values())).dtype
    model.to(dtype).load_state_dict(tensors)
    model.eval()
    meta = {k: v for k, v in info.items() if k not in ("pde", "c", "dim", "net")}
    return SavedModel(model, sensors, info["pde"], float(info["c"]), int(info["dim"]), meta)


def check_compatible(saved: SavedModel, x: np.ndarray, pde: str, c: float, dim: int) -> None:
    """Refuse data or a problem the model was not trained for (one line, how to fix)."""
    train_one = "train one for it: iclr25 pi-dion train --measurements FILE --save MODEL"
    if saved.dim != dim:
        raise InputError(f"the model is for --dim {saved.dim}, not --dim {dim}", train_one)
    if saved.pde != pde and "darcy" in (saved.pde, pde):  # darcy has no c: name the PDEs only
        raise InputError(f"the model is for {saved.pde}, not {pde}",
                         f"use --pde {saved.pde}, or {train_one} --pde {pde}")  # fmt: skip
    if saved.pde != pde or abs(saved.c - c) > 1e-9 * max(1.0, abs(c)):
        raise InputError(
            f"the model is for {saved.pde} with c = {saved.c:g}, not {pde} with c = {c:g}",
            f"use --pde {saved.pde} and its coefficient, or {train_one}",
        )
    same = len(x) == len(saved.sensors) and np.allclose(x, saved.sensors, atol=LAYOUT_TOL)
    if not same:
        raise InputError(
            f"the measurements have {len(x)} sensors on [{x.min():.3g}, {x.max():.3g}], the "
            f"model was trained on {len(saved.sensors)} on "
            f"[{saved.sensors.min():.3g}, {saved.sensors.max():.3g}]",
            f"a model only reads its own sensor layout; {train_one}",
        )
