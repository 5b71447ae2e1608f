"""Loading users' tables for dro-bound: CSV, Parquet or NPZ, with a named target column.

Every problem is refused with its count and location rather than silently repaired:
missing file, unknown format, missing target, non-numeric columns, NaN/∞ values
(count, columns and first rows), constant features, no rows, and for classification
labels outside {−1, 1} / {0, 1} or a single class. Classification labels are mapped to
y ∈ {−1, +1} (the values behind −1 and +1 are kept for the model file). ``--standardize``
centres and scales features (costs are then in standardised units); without it features
are used as given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.core.dro_bound.models import Standardization
from iclr25.errors import InputError

FORMATS = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet", ".npz": "npz"}


@dataclass
class Dataset:
    X: np.ndarray  # (n, d) float64 features (standardised if requested)
    y: np.ndarray  # (n,) ±1 for classification, real for regression
    features: list[str]
    target: str
    source: str  # file path or "synthetic:<name>"
    label_values: list | None = None  # classification: original values of (−1, +1)
    standardization: Standardization | None = None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


def read_columns(path: Path) -> dict[str, np.ndarray]:
    """Column name -> 1-D array, for a CSV, Parquet or NPZ file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file", "check the --data path")
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise InputError(
            f"{path}: unknown file type {path.suffix!r}", "use a .csv, .parquet or .npz file"
        )
    try:
        if kind == "npz":
            return _read_npz(path)
        import pyarrow as pa

        if kind == "csv":
            import pyarrow.csv as pcsv

            delim = "\t" if path.suffix.lower() == ".tsv" else ","
            table = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter=delim))
        else:
            import pyarrow.parquet as pq

            table = pq.read_table(path)
    except InputError:
        raise
    except (pa.ArrowInvalid, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"{path}: cannot be read ({first})",
            "check that the file is a well-formed CSV/Parquet table",
        ) from None
    return {name: _column_values(table.column(name)) for name in table.column_names}


def _column_values(column) -> np.ndarray:
    import pyarrow as pa

    if (
        pa.types.is_integer(column.type)
        or pa.types.is_floating(column.type)
        or pa.types.is_boolean(column.type)
    ):
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    return np.asarray(column.to_pylist(), dtype=object)


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise InputError(
            f"{path}: not a readable .npz file ({exc})", "save it with numpy.savez"
        ) from None
    if "X" in arrays and arrays["X"].ndim == 2:  # features matrix + 1-D target arrays
        X = arrays.pop("X")
        cols = {f"x{j}": X[:, j] for j in range(X.shape[1])}
        cols.update({k: v for k, v in arrays.items() if v.ndim == 1})
        return cols
    bad = [k for k, v in arrays.items() if v.ndim != 1]
    if bad:
        raise InputError(
            f"{path}: arrays {bad} are not 1-D columns",
            "store one 1-D array per column, or a 2-D 'X' plus a 1-D target",
        )
    return arrays


def _numeric(name: str, values: np.ndarray, path: Path) -> np.ndarray:
    if values.dtype != object:
        return values.astype(np.float64)
    out = np.empty(len(values))
    for i, v in enumerate(values):
        if v is None:
            out[i] = np.nan
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            raise InputError(
                f"{path}: column {name!r} is not numeric (data row {i + 1}: {v!r})",
                "encode it numerically or drop the column",
            ) from None
    return out


def _rows_text(rows: np.ndarray, limit: int = 5) -> str:
    """'row 3' or 'rows 2, 3, 4 …' (1-based data rows, the header not counted)."""
    shown = ", ".join(str(r + 1) for r in rows[:limit])
    return f"row{'s' if len(rows) > 1 else ''} {shown}{' …' if len(rows) > limit else ''}"


def check_finite(X: np.ndarray, y: np.ndarray, names: list[str], target: str, where: str):
    """Refuse NaN/∞ with their count, and per column its count and first data rows."""
    table = np.column_stack([X, y]) if X.size else y[:, None]
    bad = ~np.isfinite(table)
    if not bad.any():
        return
    columns = names + [target]
    parts = [
        f"{columns[j]!r}: {int(bad[:, j].sum())} ({_rows_text(np.flatnonzero(bad[:, j]))})"
        for j in np.flatnonzero(bad.any(axis=0))
    ]
    shown = "; ".join(parts[:6]) + (f"; … ({len(parts)} columns)" if len(parts) > 6 else "")
    raise InputError(
        f"{where}: {int(bad.sum())} missing or infinite value(s) in "
        f"{int(bad.any(axis=1).sum())} of {len(table)} data rows, by column: {shown}",
        "drop or impute those rows before running",
    )


def _label_text(values: list) -> str:
    return ", ".join(f"{v:g}" if isinstance(v, float) else repr(v) for v in values)


def encode_labels(y: np.ndarray, where: str, model_labels: list | None = None):
    """{0,1} or {−1,1} -> ±1; returns (y ±1, original values of (−1, +1)).

    ``model_labels``: the (−1, +1) values of a loaded model — the data must use them, and
    may then hold a single class (a test set of positives is a fine thing to score)."""
    values = sorted(set(np.unique(y).tolist()))
    if model_labels is not None:
        neg, pos = (float(v) for v in model_labels)
        if not set(values) <= {neg, pos}:
            raise InputError(
                f"{where}: labels {_label_text(values[:6])} are not the model's "
                f"({_label_text([neg, pos])})",
                "recode the target the way the model's training data were coded",
            )
        return np.where(y == pos, 1.0, -1.0), list(model_labels)
    if len(values) < 2:
        raise InputError(
            f"{where}: the target has a single class ({_label_text(values)})",
            "classification needs both classes present",
        )
    if set(values) <= {0.0, 1.0}:
        return np.where(y > 0.5, 1.0, -1.0), [0, 1]
    if set(values) <= {-1.0, 1.0}:
        return y.astype(np.float64), [-1, 1]
    whole = all(float(v).is_integer() for v in values)
    if not whole or len(values) > 10:
        raise InputError(
            f"{where}: the target is real-valued ({len(values)} distinct values, e.g. "
            f"{_label_text(values[:3])}) but the model is a classifier",
            "use --model linear for a real-valued target (regression), or recode it as 0/1",
        )
    raise InputError(
        f"{where}: labels {_label_text(values[:6])}{' …' if len(values) > 6 else ''} are not "
        "in {−1, 1} or {0, 1}",
        "recode the target as 0/1 or −1/1 for --model logistic "
        "(or use --model linear for a real-valued target)",
    )


def check_features(X: np.ndarray, names: list[str], where: str, training: bool = True) -> None:
    """No rows, no features, or (when a model is to be fitted) constant feature columns."""
    if X.shape[0] == 0:
        raise InputError(f"{where}: no rows", "pass a table with at least one sample")
    if X.shape[1] == 0:
        raise InputError(
            f"{where}: no feature columns besides the target",
            "add at least one numeric feature column",
        )
    if training and X.shape[0] > 1:
        const = [names[j] for j in np.flatnonzero(np.ptp(X, axis=0) == 0)]
        if const:
            raise InputError(
                f"{where}: constant feature column(s) {const[:8]}",
                "drop them (they carry no information and break standardisation)",
            )


def load_dataset(
    path: Path,
    target: str,
    classification: bool,
    standardize: bool = False,
    features: list[str] | None = None,
    standardization: Standardization | None = None,
    label_values: list | None = None,
) -> Dataset:
    """Read ``path``, check it, and return a :class:`Dataset`. ``features`` fixes the feature
    columns, ``standardization`` re-applies the transformation and ``label_values`` the
    label coding of a loaded model (whose data may then have constant columns or a single
    class: nothing is fitted on them)."""
    path = Path(path)
    cols = read_columns(path)
    if target not in cols:
        raise InputError(
            f"{path}: no target column {target!r} (columns: {list(cols)[:12]})",
            "name the target with --target",
        )
    names = [c for c in cols if c != target] if features is None else list(features)
    missing = [c for c in names if c not in cols]
    if missing:
        raise InputError(
            f"{path}: the model's feature column(s) {missing[:8]} are missing",
            "pass data with the columns the model was trained on",
        )
    X = (
        np.column_stack([_numeric(c, cols[c], path) for c in names])
        if names
        else np.zeros((len(cols[target]), 0))
    )
    y = _numeric(target, cols[target], path)
    check_finite(X, y, names, target, str(path))
    check_features(X, names, str(path), training=features is None)
    if classification:
        y, label_values = encode_labels(y, str(path), label_values)
    else:
        label_values = None
    return finish_dataset(
        X, y, names, target, str(path), label_values, standardize, standardization
    )


def finish_dataset(
    X,
    y,
    names,
    target,
    source,
    label_values,
    standardize: bool,
    standardization: Standardization | None,
) -> Dataset:
    if standardization is None and standardize:
        standardization = Standardization(X.mean(axis=0), X.std(axis=0))
    if standardization is not None:
        X = standardization.apply(X)
    return Dataset(X, y, list(names), target, source, label_values, standardization)
