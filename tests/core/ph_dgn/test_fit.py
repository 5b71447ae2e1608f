"""fit / predict core: the three input formats agree, every bad input is one InputError,
graph-level pooling by hand, same seed → identical results."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr25.core.ph_dgn import fit as F
from iclr25.core.ph_dgn.dataset import load_data, read_csv_data
from iclr25.errors import InputError, UsageError

torch.set_num_threads(1)


def toy_arrays(graphs=6, n=4, seed=0) -> dict:
    """Paths of ``n`` nodes per graph; node target = feature a; graph target = Σ a."""
    rng = np.random.default_rng(seed)
    x = rng.random((graphs * n, 2))  # (G·n, 2)
    ei = np.concatenate(
        [np.stack([np.arange(n - 1), np.arange(1, n)]) + g * n for g in range(graphs)], 1
    )  # (2, G·(n−1))
    return {"x": x, "edge_index": ei, "batch": np.repeat(np.arange(graphs), n), "y": x[:, 0]}


def write_csv(tmp_path, arrays, node_target=True, extra_node_rows=""):
    """The same graphs as CSV (full float precision, node ids 10·i + 7)."""
    ids = np.arange(len(arrays["x"])) * 10 + 7
    lines = ["node_id,graph_id,a,b" + (",t" if node_target else "")]
    for i, (row, g) in enumerate(zip(arrays["x"], arrays["batch"], strict=True)):
        t = f",{float(arrays['y'][i])!r}" if node_target else ""
        lines.append(f"{ids[i]},{g},{float(row[0])!r},{float(row[1])!r}{t}")
    (tmp_path / "nodes.csv").write_text("\n".join(lines) + "\n" + extra_node_rows)
    edges = ["src,dst", *(f"{ids[s]},{ids[d]}" for s, d in arrays["edge_index"].T)]
    (tmp_path / "edges.csv").write_text("\n".join(edges) + "\n")
    return tmp_path / "edges.csv", tmp_path / "nodes.csv"


def test_csv_npz_and_torch_inputs_give_the_same_graphs(tmp_path):
    arrays = toy_arrays()
    edges, nodes = write_csv(tmp_path, arrays)
    np.savez(tmp_path / "g.npz", **arrays)
    torch.save({k: torch.tensor(v) for k, v in arrays.items()}, tmp_path / "g.pt")
    loaded = [
        load_data(edges=edges, nodes=nodes, target="t", undirected=True),
        load_data(data=tmp_path / "g.npz", undirected=True),
        load_data(data=tmp_path / "g.pt", undirected=True),
    ]
    for other in loaded[1:]:
        assert torch.equal(other.x, loaded[0].x) and torch.equal(other.batch, loaded[0].batch)
        assert torch.equal(other.edge_index, loaded[0].edge_index)
        assert np.array_equal(other.y, loaded[0].y) and other.level == "node"
    assert loaded[0].edge_index.shape == (2, 2 * 6 * 3)


def test_pyg_collated_file_is_rebuilt_with_global_node_ids(tmp_path):
    # PyG's InMemoryDataset stores (data_dict, slices): edge_index local to each graph
    data = {"x": torch.arange(5.0)[:, None], "edge_index": torch.tensor([[0, 1, 0], [1, 0, 1]])}
    slices = {"x": torch.tensor([0, 2, 5]), "edge_index": torch.tensor([0, 2, 3])}
    data["y"] = torch.tensor([1.0, 2.0])
    torch.save((data, slices), tmp_path / "pyg.pt")
    g = load_data(data=tmp_path / "pyg.pt")
    assert g.edge_index.tolist() == [[0, 1, 2], [1, 0, 3]]  # graph 1 offset by 2 nodes
    assert g.batch.tolist() == [0, 0, 1, 1, 1] and g.level == "graph"


def test_graph_pooling_is_sum_max_mean_per_graph():
    h = torch.tensor([[1.0, -2.0], [3.0, 4.0], [5.0, 0.5]])
    out = F.pool(h, torch.tensor([0, 0, 1]), 2)
    expected = [[4.0, 2.0, 3.0, 4.0, 2.0, 1.0], [5.0, 0.5, 5.0, 0.5, 5.0, 0.5]]
    assert out.tolist() == expected


@pytest.mark.parametrize("level", ["node", "graph"])
def test_same_seed_gives_identical_results_and_beats_the_mean_predictor(level):
    arrays = toy_arrays(graphs=10)
    if level == "graph":
        arrays["y"] = arrays["x"][:, 0].reshape(10, 4).sum(1)
    data = load_data_from(arrays)
    cfg = F.FitConfig(level=level, epochs=30, eval_every=5, width=8, depth=2)
    (f1, r1), (_, r2) = F.fit(data, cfg, 3), F.fit(load_data_from(arrays), cfg, 3)
    assert r1 == r2
    assert r1["n_graphs"] == 10 and len(r1["history"]) == 6
    train_rows = F.split_rows(data, cfg, 3)[0]
    pred = np.array(f1.predict(data))
    train_mse = np.mean((pred[train_rows] - data.y[train_rows.numpy()]) ** 2)
    assert train_mse < np.var(data.y[train_rows.numpy()])  # learned something on train


def load_data_from(arrays):
    from iclr25.core.ph_dgn.dataset import from_arrays

    return from_arrays(arrays, "toy", undirected=True, classification=False)


def test_saved_model_predicts_as_the_trained_one(tmp_path):
    arrays = toy_arrays(graphs=6)
    arrays["y"] = (arrays["x"][:, 0] > 0.5).astype(int)
    from iclr25.core.ph_dgn.dataset import from_arrays

    data = from_arrays(arrays, "toy", undirected=True, classification=True)
    cfg = F.FitConfig(task="classification", model="gcn", epochs=5, width=4, depth=2)
    fitted, res = F.fit(data, cfg, 0)
    F.save(fitted, tmp_path / "m.safetensors")
    again = F.load(tmp_path / "m.safetensors")
    assert again.predict(data) == fitted.predict(data)
    out = F.predict(again, data)
    assert res["metric"] == out["metric"] == "accuracy" and 0 <= out["value"] <= 1


def test_a_saved_phdgn_keeps_its_aggregation_and_readout(tmp_path):
    from iclr25.core.ph_dgn.dataset import from_arrays

    data = from_arrays(toy_arrays(graphs=6), "toy", undirected=True, classification=False)
    cfg = F.FitConfig(model="phdgn-c", epochs=3, width=4, depth=2, aggregation="p=gcn,q=sum",
                      readout="q")  # fmt: skip
    fitted, _ = F.fit(data, cfg, 0)
    F.save(fitted, tmp_path / "m.safetensors")
    again = F.load(tmp_path / "m.safetensors")
    assert (again.cfg.aggregation, again.cfg.readout) == ("p=gcn,q=sum", "q")
    assert again.predict(data) == fitted.predict(data)


# ---------------------------------------------------------------------------------------
# Bad input: one InputError each, naming what and the fix
# ---------------------------------------------------------------------------------------
def bad_csv(tmp_path, nodes_text, edges_text="src,dst\n1,2\n"):
    (tmp_path / "n.csv").write_text(nodes_text)
    (tmp_path / "e.csv").write_text(edges_text)
    return tmp_path / "e.csv", tmp_path / "n.csv"


@pytest.mark.parametrize(
    ("nodes", "edges", "message"),
    [
        ("node_id,a,t\n1,0.1,1\n2,0.2,2\n", "src,dst\n1,9\n", "not in --nodes (rows 2)"),
        ("node_id,a,t\n1,0.1,1\nx,0.2,2\n", "src,dst\n1,1\n", "non-integer node_id"),
        ("node_id,a,t\n1,0.1,1\n2,0.2,2\n", "src,dst\n1,b\n", "non-integer dst"),
        ("node_id,a,t\n1,0.1,1\n1,0.2,2\n", "src,dst\n1,1\n", "duplicate node_id"),
        ("node_id,graph_id,a,t\n1,0,0.1,1\n2,1,0.2,2\n", "src,dst\n1,2\n", "join different"),
        ("node_id,a,t\n1,nan,1\n2,inf,2\n3,0,1\n", "src,dst\n1,2\n", "2 row(s) with NaN"),
        ("node_id,a,t\n1,0.1,\n2,0.2,2\n", "src,dst\n1,2\n", "without a 't' value (rows 2)"),
        ("node_id,a,u\n1,0.1,1\n2,0.2,2\n", "src,dst\n1,2\n", "no target column 't'"),
        ("node_id,a,t\n", "src,dst\n", "has no rows"),
    ],
)
def test_bad_csv_input_is_one_input_error(tmp_path, nodes, edges, message):
    e, n = bad_csv(tmp_path, nodes, edges)
    with pytest.raises(InputError, match=None) as info:
        read_csv_data(e, n, "t")
    assert message in info.value.what, info.value.message()
    assert info.value.fix and "\n" not in info.value.message()


def test_graph_targets_naming_a_graph_without_nodes_is_an_empty_graph(tmp_path):
    e, n = bad_csv(tmp_path, "node_id,graph_id,a\n1,0,0.1\n2,0,0.2\n")
    (tmp_path / "g.csv").write_text("graph_id,y\n0,1.0\n5,2.0\n")
    with pytest.raises(InputError, match="1 empty graph"):
        read_csv_data(e, n, "y", tmp_path / "g.csv")


def test_edges_naming_unknown_node_ids_in_npz_are_refused(tmp_path):
    arrays = toy_arrays()
    np.savez(tmp_path / "g.npz", **{**arrays, "edge_index": arrays["edge_index"] + 5})
    with pytest.raises(InputError, match=r"4 edge\(s\) name unknown node ids .* 0..23"):
        load_data(data=tmp_path / "g.npz")


def test_pickled_objects_are_refused(tmp_path):
    np.savez(tmp_path / "p.npz", x=np.array([object(), 1], dtype=object), edge_index=np.zeros(2))
    with pytest.raises(InputError, match="pickled objects"):
        load_data(data=tmp_path / "p.npz")
    torch.save({"x": torch.zeros(2, 1), "hook": np.random.default_rng()}, tmp_path / "p.pt")
    with pytest.raises(InputError, match="without running code"):
        load_data(data=tmp_path / "p.pt")


def test_one_class_and_oversized_plans_are_refused():
    from iclr25.core.ph_dgn.dataset import from_arrays

    arrays = toy_arrays()
    arrays["y"] = np.zeros(len(arrays["x"]), dtype=int)
    data = from_arrays(arrays, "toy", undirected=False, classification=True)
    with pytest.raises(InputError, match="one class"):
        F.fit(data, F.FitConfig(task="classification", epochs=1), 0)
    data = load_data_from(toy_arrays())
    with pytest.raises(InputError, match="GiB"):
        F.fit(data, F.FitConfig(width=2**40, epochs=1), 0)


def test_bad_options_are_usage_errors():
    with pytest.raises(UsageError, match="use: phdgn-c"):
        F.FitConfig(model="gat")
    with pytest.raises(UsageError, match="must be positive"):
        F.FitConfig(eps=0.0)
    with pytest.raises(UsageError, match="--depth 0"):
        F.FitConfig(depth=0)
    with pytest.raises(UsageError, match="--level node but the data are graph level"):
        arrays = toy_arrays()
        arrays["y"] = np.ones(6)
        F.fit(load_data_from(arrays), F.FitConfig(epochs=1), 0)
