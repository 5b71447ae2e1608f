"""Reading, checking and writing demonstration files (formats in :mod:`.demos`).

Every problem is one :class:`~iclr25.errors.InputError` naming the file, what is wrong and
how to fix it: missing keys, wrong shapes, dimensions unlike the environment's, NaN or inf
in observations or actions, confidences outside [0, 1] (with their count and the first
index), no labelled pair.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

from iclr25 import atomic
from iclr25.core.pn_gail.demos import Demos
from iclr25.errors import InputError

REQUIRED = ("obs", "actions", "confidence")
OPTIONAL = ("episode", "true_confidence", "demonstrator")


def _fail(path: Path, what: str, fix: str) -> InputError:
    return InputError(f"{path}: {what}", fix)


def _load_npz(path: Path) -> dict:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise _fail(
            path,
            f"not a readable NPZ file ({type(exc).__name__})",
            "give an .npz written by numpy.savez or `iclr25 pn-gail demos --save`",
        ) from None


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise _fail(
            path,
            f"not a readable .npy file ({type(exc).__name__})",
            "give an array saved by numpy.save",
        ) from None


def load_demos(
    path: Path, confidence_file: Path | None = None, dims: tuple[int, int] | None = None
) -> Demos:
    """Demonstrations from an NPZ, or an ``X_mixture.npy`` with ``confidence_file``.
    ``dims`` = (ds, da) of the environment, checked when given."""
    path = Path(path)
    if not path.is_file():
        raise _fail(path, "no such file", "check the --demos path")
    if path.suffix == ".npy":
        return _from_mixture(path, confidence_file, dims)
    if confidence_file is not None:
        raise InputError(
            "--confidence-file goes with an X_mixture.npy array", "drop it for an .npz file"
        )
    data = _load_npz(path)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise _fail(
            path,
            f"missing key(s) {', '.join(missing)}",
            f"an NPZ needs {', '.join(REQUIRED)} (optional: {', '.join(OPTIONAL)})",
        )
    obs, actions = _matrix(path, "obs", data["obs"]), _matrix(path, "actions", data["actions"])
    demos = Demos(
        obs=obs,
        actions=actions,
        confidence=np.asarray(data["confidence"], dtype=np.float64),
        episode=_optional(data, "episode", np.int64),
        true_confidence=_optional(data, "true_confidence", np.float64),
        demonstrator=_optional(data, "demonstrator", np.int64),
        source=str(path),
    )
    if "demonstrators" in data:
        demos.demonstrators = json.loads(str(data["demonstrators"]))
    check_demos(demos, path, dims)
    return demos


def _from_mixture(path: Path, confidence_file: Path | None, dims) -> Demos:
    if confidence_file is None:
        raise _fail(
            path,
            "an X_mixture.npy array needs its confidences",
            "pass --confidence-file X_mixture_conf.npy",
        )
    confidence_file = Path(confidence_file)
    if not confidence_file.is_file():
        raise _fail(confidence_file, "no such file", "check the --confidence-file path")
    x = _load_npy(path)
    if x.ndim != 2 or x.shape[1] < 2:
        raise _fail(path, f"shape {x.shape} is not [N, ds + da]", "save pairs as one 2-D array")
    if dims is None:
        raise _fail(
            path,
            "cannot split [N, ds + da] without the environment's dimensions",
            "give --env for these demonstrations",
        )
    ds, da = dims
    if x.shape[1] != ds + da:
        raise _fail(
            path,
            f"{x.shape[1]} columns, but the environment has ds + da = {ds + da}",
            "check --env against the demonstrations",
        )
    conf = np.asarray(_load_npy(confidence_file), dtype=np.float64).reshape(-1)
    demos = Demos(
        obs=x[:, :ds].astype(np.float32),
        actions=x[:, ds:].astype(np.float32),
        confidence=conf,
        true_confidence=conf.copy(),
        source=str(path),
    )
    check_demos(demos, path, dims)
    return demos


def _matrix(path: Path, key: str, value: np.ndarray) -> np.ndarray:
    value = np.asarray(value)
    if value.ndim == 1:
        value = value[:, None]
    if value.ndim != 2 or not np.issubdtype(value.dtype, np.number):
        raise _fail(
            path,
            f"'{key}' has shape {value.shape} ({value.dtype}), not [N, d]",
            f"store '{key}' as a 2-D float array",
        )
    return value.astype(np.float32)


def _optional(data: dict, key: str, dtype) -> np.ndarray | None:
    return np.asarray(data[key], dtype=dtype).reshape(-1) if key in data else None


def _first_bad(mask: np.ndarray) -> str:
    idx = np.flatnonzero(mask)
    return f"{len(idx)} value(s), first at index {idx[0]}"


def check_demos(demos: Demos, path: Path, dims: tuple[int, int] | None = None) -> None:
    n = len(demos.obs)
    if n == 0:
        raise _fail(path, "no demonstration pairs", "record at least one episode")
    for key in ("actions", "confidence", "episode", "true_confidence", "demonstrator"):
        value = getattr(demos, key)
        if value is not None and len(value) != n:
            raise _fail(
                path,
                f"'{key}' has {len(value)} rows but 'obs' has {n}",
                "give every array one row per pair",
            )
    if dims is not None and (demos.obs.shape[1], demos.actions.shape[1]) != tuple(dims):
        got = (demos.obs.shape[1], demos.actions.shape[1])
        raise _fail(
            path,
            f"pairs have (ds, da) = {got}, the environment {tuple(dims)}",
            "check --env against the demonstrations",
        )
    for key in ("obs", "actions"):
        bad = ~np.isfinite(getattr(demos, key)).all(axis=1)
        if bad.any():
            raise _fail(
                path, f"NaN or inf in '{key}': {_first_bad(bad)}", "drop or repair those pairs"
            )
    for key in ("confidence", "true_confidence"):
        value = getattr(demos, key)
        if value is None:
            continue
        bad = ~np.isnan(value) & ((value < 0) | (value > 1)) | np.isinf(value)
        if bad.any():
            raise _fail(
                path,
                f"'{key}' outside [0, 1]: {_first_bad(bad)}",
                "confidences are probabilities; NaN marks an unlabelled pair",
            )
    if not demos.labeled.any():
        raise _fail(
            path,
            "no labelled pair (every confidence is NaN)",
            "label at least one pair (the classifier needs some)",
        )


def save_demos(path: Path, demos: Demos, overwrite: bool) -> None:
    """Write ``demos`` as NPZ atomically; refuse to replace a file without ``overwrite``."""
    atomic.refuse_existing(Path(path), overwrite)
    arrays = {"obs": demos.obs, "actions": demos.actions, "confidence": demos.confidence}
    for key in OPTIONAL:
        if getattr(demos, key) is not None:
            arrays[key] = getattr(demos, key)
    if demos.demonstrators:
        arrays["demonstrators"] = np.array(json.dumps(demos.demonstrators))
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    atomic.write_bytes(Path(path), buffer.getvalue())
