"""PH-DGN's aggregation per half and readout, from the configs (and so the CLI) to the model."""

from __future__ import annotations

import pytest
import torch

from iclr25.core.ph_dgn import fit as F
from iclr25.core.ph_dgn.graphs import topology
from iclr25.core.ph_dgn.models import ModelSpec, build, graph_aggregations, parse_aggregation
from iclr25.core.ph_dgn.property import PropertyConfig
from iclr25.core.ph_dgn.property import tasks as property_tasks
from iclr25.core.ph_dgn.transfer import TransferConfig
from iclr25.core.ph_dgn.transfer import tasks as transfer_tasks
from iclr25.errors import UsageError


@pytest.mark.parametrize(
    ("text", "halves"),
    [("sum", ("sum", "sum")), ("gcn", ("gcn", "gcn")), ("p=gcn,q=sum", ("gcn", "sum")),
     (" q=gcn , p=sum ", ("sum", "gcn"))],
)  # fmt: skip
def test_aggregation_is_parsed_per_half(text, halves):
    assert parse_aggregation(text) == halves


@pytest.mark.parametrize(
    "text", ["max", "p=gcn", "p=gcn,q=max", "p=sum,p=gcn", "", "p=gcn,q=sum,x=1"]
)
def test_bad_aggregation_names_the_forms(text):
    with pytest.raises(UsageError, match="not sum, gcn or p=") as err:
        parse_aggregation(text)
    assert "--aggregation p=gcn,q=sum" in err.value.fix


def test_each_half_uses_its_own_aggregation_and_the_readout_its_half():
    edges, n, _, _ = topology("crossed-ring", 4)  # degrees differ: sum ≠ gcn
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(1))
    aggs = graph_aggregations(edges, n)
    outs = {}
    for agg in ("sum", "gcn", "p=gcn,q=sum", "p=sum,q=gcn"):
        torch.manual_seed(0)
        model = build(ModelSpec("phdgn-c", 2, 1, width=4, steps=3, aggregation=agg))
        assert (model.cfg.p_agg, model.cfg.q_agg) == parse_aggregation(agg)
        outs[agg] = model(x, aggs)
    assert len({tuple(o.flatten().tolist()) for o in outs.values()}) == 4  # all differ
    torch.manual_seed(0)
    q_only = build(ModelSpec("phdgn-c", 2, 1, width=4, steps=3, readout="q"))
    assert q_only.cfg.readout == "q" and q_only.readout.in_features == 4  # d, not 2d
    with pytest.raises(UsageError, match="--readout"):
        F.FitConfig(readout="r")


def test_options_reach_the_tasks_only_when_not_default():
    """Default runs keep the task configs (and cache keys) made before the options existed."""
    small = {"distances": (3,), "graphs": (2, 1, 1), "seeds": 1, "models": ("phdgn-c",)}
    plain = transfer_tasks(TransferConfig(**small), 0)[0].config
    assert "aggregation" not in plain and "readout" not in plain
    custom = transfer_tasks(TransferConfig(**small, aggregation="gcn", readout="p"), 0)[0].config
    assert custom["aggregation"] == "gcn" and custom["readout"] == "p"
    prop = property_tasks(PropertyConfig(graphs=(2, 1, 1), seeds=1, aggregation="p=gcn,q=sum"), 0)
    assert {t.config["aggregation"] for t in prop} == {"p=gcn,q=sum"}
    with pytest.raises(UsageError, match="--aggregation"):
        TransferConfig(**small, aggregation="mean")
