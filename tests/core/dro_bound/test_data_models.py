from __future__ import annotations

import json

import numpy as np
import pytest

from iclr25.core.dro_bound.data import load_dataset
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.models import (
    LinearModel,
    MLPModel,
    ModelInfo,
    Standardization,
    load_model,
    save_model,
)
from iclr25.errors import InputError, UsageError
from iclr25.testing import assert_close


def write_csv(path, header, rows):
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path


def test_csv_parquet_npz_give_the_same_dataset(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = (X[:, 0] > 0).astype(int)
    rows = [(*x, t) for x, t in zip(X, y, strict=True)]
    csv = write_csv(tmp_path / "d.csv", ["a", "b", "label"], rows)
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "label": y}), tmp_path / "d.parquet")
    np.savez(tmp_path / "d.npz", X=X, label=y)
    for path in (csv, tmp_path / "d.parquet", tmp_path / "d.npz"):
        ds = load_dataset(path, "label", classification=True)
        assert_close(ds.X, X, rtol=1e-12)
        assert_close(ds.y, np.where(y == 1, 1.0, -1.0))
        assert ds.label_values == [0, 1]


def test_standardize_is_opt_in(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["x", "y"], [(1, 0.5), (3, 1.5), (5, 2.0)])
    raw = load_dataset(path, "y", classification=False)
    assert_close(raw.X[:, 0], np.array([1.0, 3.0, 5.0]))
    std = load_dataset(path, "y", classification=False, standardize=True)
    assert_close(std.X.mean(axis=0), np.zeros(1), atol=1e-12)
    assert_close(std.X.std(axis=0), np.ones(1))


@pytest.mark.parametrize(
    "rows,target,classification,match,fix",
    [
        ([(1, "a", 0), (2, "b", 1)], "y", True, "column 'b' is not numeric", "encode it"),
        (
            [(1, 2, 0), ("", 3, 1), (4, 5, "nan")],
            "y",
            True,
            "2 missing or infinite value(s) in 2 of 3 data rows",
            "'a': 1 (row 2); 'y': 1 (row 3)",
        ),
        ([(1, 7, 0), (2, 7, 1)], "y", True, "constant feature column", "drop them"),
        ([(1, 2, 0), (2, 3, 1)], "label", True, "no target column 'label'", "--target"),
        ([(1, 2, 0), (2, 3, 5)], "y", True, "not in {−1, 1} or {0, 1}", "--model linear"),
        ([(1, 2, 1), (2, 3, 1)], "y", True, "single class", "both classes"),
    ],
)
def test_bad_tables_are_refused_with_a_fix(tmp_path, rows, target, classification, match, fix):
    path = write_csv(tmp_path / "bad.csv", ["a", "b", "y"], rows)
    with pytest.raises(InputError) as err:
        load_dataset(path, target, classification)
    assert match in err.value.what
    assert fix in err.value.message()


def test_loaded_model_labels_and_columns(tmp_path):
    """With a model's features and label coding, one class and a constant column are fine
    (nothing is fitted); other label values are refused naming the model's."""
    path = write_csv(tmp_path / "t.csv", ["a", "b", "y"], [(1, 7, -1), (2, 7, -1)])
    ds = load_dataset(path, "y", True, features=["a", "b"], label_values=[-1, 1])
    assert_close(ds.y, np.array([-1.0, -1.0]))
    assert ds.label_values == [-1, 1]
    with pytest.raises(InputError, match=r"labels -1 are not the model's \(0, 1\)"):
        load_dataset(path, "y", True, features=["a", "b"], label_values=[0, 1])


def test_empty_and_missing_files(tmp_path):
    empty = write_csv(tmp_path / "e.csv", ["a", "y"], [])
    with pytest.raises(InputError, match="no rows"):
        load_dataset(empty, "y", classification=False)
    with pytest.raises(InputError, match="no such file"):
        load_dataset(tmp_path / "nope.csv", "y", classification=False)
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(InputError, match="unknown file type"):
        load_dataset(tmp_path / "x.txt", "y", classification=False)


def _info(d=2):
    return ModelInfo(
        [f"x{i}" for i in range(d)],
        "y",
        [0, 1],
        Standardization(np.zeros(d), np.ones(d)),
        {"rho": 0.1},
    )


def test_linear_model_roundtrip_and_no_overwrite(tmp_path):
    model = LinearModel("logistic", get_loss("hinge"), np.array([1.5, -2.0]), 0.25)
    path = tmp_path / "m.json"
    save_model(path, model, _info())
    loaded, info = load_model(path)
    assert loaded.kind == "logistic" and loaded.loss.name == "hinge"
    assert_close(loaded.coef, model.coef)
    assert loaded.intercept == 0.25 and info.label_values == [0, 1]
    before = path.read_bytes()
    with pytest.raises(UsageError, match="file exists"):
        save_model(path, model, _info())
    assert path.read_bytes() == before


def test_mlp_roundtrip_predicts_the_same(tmp_path):
    rng = np.random.default_rng(1)
    layers = [
        (rng.normal(size=(4, 2)), rng.normal(size=4)),
        (rng.normal(size=(1, 4)), rng.normal(size=1)),
    ]
    model = MLPModel("mlp", get_loss("logistic"), layers)
    save_model(tmp_path / "mlp.json", model, _info())
    loaded, _ = load_model(tmp_path / "mlp.json")
    X = rng.normal(size=(5, 2))
    manual = np.maximum(X @ layers[0][0].T + layers[0][1], 0) @ layers[1][0].T + layers[1][1]
    assert_close(loaded.predict(X), manual[:, 0], rtol=1e-12)


@pytest.mark.parametrize(
    "content,match",
    [
        ("not json", "not a JSON model file"),
        ('{"format": "other"}', "not an iclr25-dro-model"),
        ('{"format": "iclr25-dro-model", "loss": {"name": "logistic"}}', "missing or malformed"),
    ],
)
def test_malformed_model_files(tmp_path, content, match):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(InputError, match=match) as err:
        load_model(path)
    assert "fit --save" in err.value.message()


def test_model_with_wrong_coefficient_count(tmp_path):
    model = LinearModel("logistic", get_loss("logistic"), np.array([1.0, 2.0]), 0.0)
    save_model(tmp_path / "m.json", model, _info())
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["coefficients"] = [1.0]
    (tmp_path / "m2.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="do not match"):
        load_model(tmp_path / "m2.json")
