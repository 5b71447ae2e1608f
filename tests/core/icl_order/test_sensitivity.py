"""Order sensitivity: hand-computed statistics and a model that copies the last label."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from iclr25.core.icl_order.sensitivity import (
    SensitivityConfig,
    aggregate,
    draw_statistics,
    measure_sensitivity,
    order_verdict,
    plan_draws,
)
from iclr25.errors import UsageError

ORDERS = list(itertools.permutations(range(4)))  # 24


def _copy_last(subset_labels, gold):
    """Predictions (O, Q) of a model that answers the label of the last demonstration."""
    demo = np.array([[subset_labels[i] for i in o] for o in ORDERS])  # (24, 4)
    return np.repeat(demo[:, -1:], len(gold), axis=1), demo


def test_copy_last_known_answers():
    # subset labels [0, 0, 1, 2]; gold [0, 0, 1, 3]. An ordering ending in a 0-demo
    # (12 of 24) is right on 2 of 4 queries, ending in the 1-demo (6) on 1, in the
    # 2-demo (6) on none: spread 2/4 - 0 = 0.5. Every query's prediction changes with
    # the order: flip rate 1. Mean accuracy (12*0.5 + 6*0.25 + 6*0) / 24 = 0.3125;
    # variance over orderings: E[a^2] - 0.3125^2 = (12*0.25 + 6*0.0625)/24 - 0.09765625.
    gold = np.array([0, 0, 1, 3])
    predicted, demo = _copy_last([0, 0, 1, 2], gold)
    s = draw_statistics(predicted, gold, demo)
    assert s["spread"] == 0.5 and s["flip_rate"] == 1.0
    assert s["mean_accuracy"] == pytest.approx(0.3125)
    assert s["order_variance"] == pytest.approx((12 * 0.25 + 6 * 0.0625) / 24 - 0.3125**2)
    # copies of the last position: 1 - share of gold equal to the last label
    # (12/24 * 2/4 + 6/24 * 1/4 + 0) = 0.3125 -> excess 0.6875
    assert s["position_excess"][-1] == pytest.approx(1 - 0.3125)


def test_an_order_free_model_has_no_spread_no_flips():
    gold = np.array([0, 1, 1])
    predicted = np.tile(np.array([0, 1, 0]), (24, 1))  # the same answer under every order
    s = draw_statistics(predicted, gold, np.zeros((24, 4), dtype=int))
    assert s["spread"] == 0 and s["flip_rate"] == 0 and s["order_variance"] == 0


def test_variance_split_known_answer():
    draws = [
        {"spread": 0.2, "flip_rate": 0.5, "mean_accuracy": 0.4, "order_variance": 0.01},
        {"spread": 0.0, "flip_rate": 0.0, "mean_accuracy": 0.8, "order_variance": 0.03},
    ]
    agg = aggregate(draws)
    assert agg["variance_between_subsets"] == pytest.approx(0.08)  # (0.2^2 * 2) / 1
    assert agg["variance_between_orders"] == pytest.approx(0.02)
    assert agg["accuracy_spread"] == pytest.approx(0.1) and agg["accuracy"] == pytest.approx(0.6)


class CopyLastLabel:
    """A stand-in causal LM: the logits at the last position put 10 nats on the most
    recent label token of the sequence (no demonstration: every label alike)."""

    def __init__(self, label_ids, vocab):
        import torch

        self.torch = torch
        self.label_ids = label_ids
        self.vocab = vocab
        self.config = SimpleNamespace(max_position_embeddings=512)

    def __call__(self, ids, attention_mask=None, use_cache=False, **_):
        torch = self.torch
        logits = torch.zeros(ids.shape[0], ids.shape[1], self.vocab)
        for row in range(ids.shape[0]):
            seen = [t for t in ids[row].tolist() if t in self.label_ids]
            if seen:
                logits[row, -1, seen[-1]] = 10.0
        return SimpleNamespace(logits=logits, hidden_states=None)


def test_measured_statistics_of_a_copy_last_model_equal_the_closed_form(lm, encoded):
    """Through the real pipeline (naive scoring): per draw, accuracy of ordering π is the
    share of test queries whose gold label is the label of π's last demonstration; the
    spread is max - min of that share over the labels in the subset; a query flips iff
    the subset shows two labels or more."""
    import dataclasses

    label_ids = {t[0] for t in encoded.label_tokens}
    model = CopyLastLabel(label_ids, len(lm.tokenizer.get_vocab()))
    fake = dataclasses.replace(lm, model=model, cache_keyword=None, logits_keyword=None)
    cfg = SensitivityConfig(k=4, draws=6, queries=12, bootstrap=200)
    r = measure_sensitivity(fake, encoded, cfg, seed=5)
    plan = plan_draws(encoded, cfg, seed=5)
    gold = np.array([encoded.labels[q] for q in plan.queries])
    spreads, flips = [], []
    for subset in plan.subsets:
        shares = [float(np.mean(gold == encoded.labels[d])) for d in subset]
        spreads.append(max(shares) - min(shares))
        flips.append(float(len({encoded.labels[d] for d in subset}) > 1))
    assert r["accuracy_spread"]["value"] == pytest.approx(np.mean(spreads), abs=1e-12)
    assert r["flip_rate"]["value"] == pytest.approx(np.mean(flips), abs=1e-12)
    assert r["position_bias"][-1] > 0.3 and max(map(abs, r["position_bias"][:-1])) < 0.3
    low, high = r["flip_rate"]["interval"]
    assert low <= r["flip_rate"]["value"] <= high


def test_plan_is_seeded_and_queries_are_held_out(encoded):
    cfg = SensitivityConfig(k=3, draws=4, queries=10)
    a, b = plan_draws(encoded, cfg, 1), plan_draws(encoded, cfg, 1)
    assert a == b and len(a.orderings) == 6
    assert all(not set(s) & set(a.queries) and len(set(s)) == 3 for s in a.subsets)


def test_verdict_says_when_order_does_not_matter():
    quiet = {"flip_rate": {"value": 0.01, "interval": [0.0, 0.03]}}
    assert order_verdict(quiet).startswith("order changes ≤ 3.0% of predictions")
    assert "about selection, not ordering" in order_verdict(quiet)
    loud = {
        "flip_rate": {"value": 0.3, "interval": [0.25, 0.35]},
        "accuracy_spread": {"value": 0.2, "interval": [0.15, 0.25]},
    }
    assert order_verdict(loud).startswith("order matters")


@pytest.mark.parametrize(
    "cfg, message",
    [
        (SensitivityConfig(k=1), "below 2"),
        (SensitivityConfig(draws=1), "--draws"),
        (SensitivityConfig(queries=0), "--queries"),
        (SensitivityConfig(k=9), "--max-orderings"),
        (SensitivityConfig(queries=510), "exceed the task's 512"),
    ],
)
def test_bad_configs(encoded, cfg, message):
    with pytest.raises(UsageError, match=message):
        plan_draws(encoded, cfg, 0)
