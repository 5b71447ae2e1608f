"""Where one GAIL iteration of ``iclr25 pn-gail train`` spends its CPU time (no profiler).

    OMP_NUM_THREADS=1 python scripts/profile_pn_gail.py [--rollouts 10] [--plain]
        [--method gail] [--repeats 1]

Trains ``--rollouts`` iterations of 16 × 128 steps at the defaults (one warm-up run of one
rollout first) and splits the process CPU time per iteration into: SB3's rollout
(``collect_rollouts`` minus our callbacks), the relabelling, the discriminator steps, the
evaluations (every rollout here when ``--rollouts`` ≤ 20), TRPO's policy step (``train``
up to the first critic minibatch) and TRPO's critic epochs. ``--plain`` runs it with
SB3's own rollout buffer, distribution checks and module calls instead of
:mod:`iclr25.core.pn_gail.sb3_overhead`'s (the numbers trained are the same, bit for
bit: ``tests/core/pn_gail/test_trainer.py``), for a before/after on the same code.
CPU time, because the machine is shared: wall time moves with the other jobs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
from collections import defaultdict

import numpy as np

PARTS = ("rollout", "relabel", "discriminator", "evaluation", "trpo_policy", "trpo_critic")


def instrument(acc: dict) -> None:
    from sb3_contrib import TRPO
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

    from iclr25.core.pn_gail import trainer

    clock = time.process_time

    def timed(owner, name, key):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            t0 = clock()
            try:
                return original(*args, **kwargs)
            finally:
                acc[key] += clock() - t0

        setattr(owner, name, wrapper)

    original_train = TRPO.train

    def train(self):  # the policy step ends where the first critic minibatch is drawn
        t0, mark, buffer = clock(), {}, self.rollout_buffer
        get = buffer.get

        def marked_get(batch_size=None):
            if batch_size is not None and "critic" not in mark:
                mark["critic"] = clock()
            return get(batch_size)

        buffer.get = marked_get
        try:
            original_train(self)
        finally:
            del buffer.get
        acc["trpo_policy"] += mark["critic"] - t0
        acc["trpo_critic"] += clock() - mark["critic"]

    TRPO.train = train
    timed(OnPolicyAlgorithm, "collect_rollouts", "collect")
    timed(trainer._State, "relabel", "relabel")
    timed(trainer._State, "discriminator_step", "discriminator")
    timed(trainer._State, "maybe_evaluate", "evaluation")


def plain_sb3() -> None:
    from stable_baselines3.common.buffers import RolloutBuffer

    from iclr25.core.pn_gail import sb3_overhead

    sb3_overhead.tensor_rollout_buffer_class = lambda: RolloutBuffer
    sb3_overhead.no_distribution_checks = contextlib.nullcontext
    sb3_overhead.mean_action_fn = lambda policy: None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=10)
    parser.add_argument("--method", default="gail")
    parser.add_argument("--plain", action="store_true", help="SB3's buffer, checks, modules")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()

    import torch

    from iclr25.core.pn_gail import envs, trainer
    from iclr25.core.pn_gail.demos import DemoConfig, generate
    from iclr25.core.pn_gail.discriminator import DemoTensors

    torch.set_num_threads(1)
    if args.plain:
        plain_sb3()
    acc: dict = defaultdict(float)
    instrument(acc)
    demos = generate(DemoConfig(), seed=0)
    spec = envs.env_spec("pendulum")
    tensors = DemoTensors.build(demos.pairs, np.ones(len(demos)), demos.labeled)
    config = dataclasses.replace(
        trainer.TrainConfig(), method=args.method, steps=args.rollouts * 2048
    )
    trainer.train(dataclasses.replace(config, steps=2048), spec, tensors, seed=0)  # warm-up
    for _ in range(args.repeats):
        acc.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        out = trainer.train(config, spec, tensors, seed=0)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        acc["rollout"] = acc["collect"] - acc["relabel"] - acc["discriminator"]
        acc["rollout"] -= acc["evaluation"]
        n = args.rollouts
        print(
            f"{'plain SB3' if args.plain else 'ours'}: {n} rollouts, wall {wall:.2f} s, "
            f"CPU {cpu:.2f} s = {cpu / n * 1e3:.0f} ms per iteration, "
            f"{len(out['curve'])} evaluations, load {np.round(__import__('os').getloadavg(), 1)}"
        )
        for part in PARTS:
            print(f"  {part:14s} {acc[part] / n * 1e3:6.1f} ms  {acc[part] / cpu * 100:5.1f} %")
        rest = cpu - sum(acc[p] for p in PARTS)
        print(f"  {'rest':14s} {rest / n * 1e3:6.1f} ms  {rest / cpu * 100:5.1f} %")
        print(f"  final curve point {out['curve'][-1]['return_mean']!r}")


if __name__ == "__main__":
    main()
