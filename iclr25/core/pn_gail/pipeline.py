"""From demonstrations to a trained, evaluated policy: the steps every subcommand shares.

1. :func:`complete_confidences` — given confidences where labelled, the classifier's (or
   the oracle's) elsewhere;
2. :func:`check_method_inputs` — the method-specific refusals (2IWIL needs some positive
   confidence, IC-GAIL labelled confidences below 1 and some unlabelled pairs);
3. :func:`run_method` — an adversarial method through :mod:`.trainer`, or BC.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from iclr25.core.pn_gail import bc as bc_mod
from iclr25.core.pn_gail import confidence as conf_mod
from iclr25.core.pn_gail.demos import Demos
from iclr25.core.pn_gail.discriminator import ADVERSARIAL, DemoTensors
from iclr25.core.pn_gail.envs import EnvSpec
from iclr25.errors import InputError, UsageError

METHODS = ADVERSARIAL + bc_mod.BC_METHODS


def check_method(method: str) -> None:
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}", f"use one of: {', '.join(METHODS)}")


def complete_confidences(
    demos: Demos,
    classifier: conf_mod.ClassifierConfig,
    seed: int,
    oracle: bool = False,
    on_step: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Confidences (N,) for every pair: labelled as given, the rest predicted."""
    if oracle:
        if demos.true_confidence is None:
            if not demos.labeled.all():
                raise InputError(
                    f"{demos.source}: --oracle-confidence needs every confidence "
                    "(a 'true_confidence' array, or no NaN in 'confidence')",
                    "drop --oracle-confidence to predict the missing ones",
                )
            return demos.confidence.copy()
        return demos.true_confidence.astype(np.float64).copy()
    return conf_mod.fit_confidence(
        demos.pairs, demos.confidence, demos.labeled, classifier, seed, on_step
    )


def check_method_inputs(method: str, demos: Demos, r: np.ndarray) -> None:
    labeled = demos.labeled
    if method == "2iwil" and not r.mean() > 0:
        raise InputError(
            f"{demos.source}: every confidence is 0, so 2IWIL's weights r / mean r are undefined",
            "label some pairs with a confidence above 0",
        )
    if method == "ic-gail":
        if np.all(demos.confidence[labeled] >= 1.0):
            raise InputError(
                f"{demos.source}: every labelled confidence is 1, and IC-GAIL divides by "
                "1 − mean r_c",
                "label some non-optimal pairs, or use --method pn-gail / 2iwil",
            )
        if labeled.all():
            raise InputError(
                f"{demos.source}: IC-GAIL needs unlabelled pairs, and every pair is labelled",
                "pass --labeled-fraction below 1",
            )


def demo_tensors(demos: Demos, r: np.ndarray) -> DemoTensors:
    return DemoTensors.build(demos.pairs, r, demos.labeled)


def run_method(
    method: str,
    demos: Demos,
    r: np.ndarray,
    spec: EnvSpec,
    train_config,
    bc_config: bc_mod.BCConfig,
    seed: int,
    on_progress: Callable[[int], None] | None = None,
    save_to=None,
) -> dict:
    """Train and evaluate ``method`` (train_config's method is replaced by ``method``)."""
    import dataclasses

    import torch

    from iclr25.core.pn_gail import trainer

    torch.set_num_threads(1)
    check_method(method)
    check_method_inputs(method, demos, r)
    if method in ADVERSARIAL:
        config = dataclasses.replace(train_config, method=method)
        return trainer.train(config, spec, demo_tensors(demos, r), seed, on_progress, save_to)
    weights = r if method == "weighted-bc" else None
    policy = bc_mod.fit_bc(
        demos.obs, demos.actions, weights, spec.scale[: spec.obs_dim], bc_config, seed
    )
    evaluate = trainer.Evaluator(spec, train_config.expert_return)
    value, normalized = evaluate(bc_mod.as_numpy_policy(policy, spec.act_low, spec.act_high))
    if save_to is not None:
        save_to(policy)
    return {
        "method": method,
        "normalized_return": normalized,
        "return_mean": value,
        "final_normalized_return": normalized,
        "curve": [],
        "env_steps": 0,
    }
