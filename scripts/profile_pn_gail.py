"""Where one GAIL iteration of ``iclr25 pn-gail train`` spends its CPU time (no profiler).

    OMP_NUM_THREADS=1 python scripts/profile_pn_gail.py [--rollouts 10] [--rounds 3]
        [--method gail] [--out experiments/results/pn-gail-iteration-profile.json]

Trains ``--rollouts`` iterations of 16 × 128 steps at the defaults and splits the process
CPU time per iteration into: SB3's rollout (``collect_rollouts`` minus our callbacks), the
relabelling, the discriminator steps, the evaluations (after every rollout when
``--rollouts`` ≤ 20: as in the benchmark's 4-rollout runs, 5x a 200k-step run's share),
TRPO's policy step (``train`` up to the first critic minibatch) and TRPO's critic epochs.
Two sides, interleaved (order alternated every round, one warm-up run each): ``plain_sb3``
with SB3's own rollout buffer, distribution checks and module calls, ``ours`` with
:mod:`iclr25.core.pn_gail.sb3_overhead`'s. Both train the same numbers, bit for bit
(``same_curves`` in the file; ``tests/core/pn_gail/test_trainer.py``). CPU time, because
the machine is shared: wall time moves with the other jobs (CPU time less so; not at all
only on an idle machine).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "experiments/results/pn-gail-iteration-profile.json"
SIDES = ("plain_sb3", "ours")
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


@contextlib.contextmanager
def plain_sb3():
    """SB3's own buffer, distribution checks and module calls for the block."""
    from stable_baselines3.common.buffers import RolloutBuffer

    from iclr25.core.pn_gail import sb3_overhead

    names = ("tensor_rollout_buffer_class", "no_distribution_checks", "mean_action_fn")
    saved = {name: getattr(sb3_overhead, name) for name in names}
    sb3_overhead.tensor_rollout_buffer_class = lambda: RolloutBuffer
    sb3_overhead.no_distribution_checks = contextlib.nullcontext
    sb3_overhead.mean_action_fn = lambda policy: None
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(sb3_overhead, name, value)


def one_run(side: str, config, spec, tensors, acc: dict) -> dict:
    from iclr25.core.pn_gail import trainer

    acc.clear()
    with plain_sb3() if side == "plain_sb3" else contextlib.nullcontext():
        load = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        out = trainer.train(config, spec, tensors, seed=0)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    acc["rollout"] = acc["collect"] - acc["relabel"] - acc["discriminator"] - acc["evaluation"]
    n = config.rollouts
    parts = {part: acc[part] / n * 1e3 for part in PARTS}
    parts["rest"] = (cpu - sum(acc[p] for p in PARTS)) / n * 1e3
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_ms_per_iteration": cpu / n * 1e3,
        "parts_cpu_ms_per_iteration": parts,
        "load_before": load,
        "evaluations": len(out["curve"]),
        "curve_return_mean": [p["return_mean"] for p in out["curve"]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=10)
    parser.add_argument("--method", default="gail")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import torch

    from iclr25 import atomic
    from iclr25.core.pn_gail import envs, trainer
    from iclr25.core.pn_gail.demos import DemoConfig, generate
    from iclr25.core.pn_gail.discriminator import DemoTensors
    from iclr25.provenance import provenance

    torch.set_num_threads(1)
    acc: dict = defaultdict(float)
    instrument(acc)
    demos = generate(DemoConfig(), seed=0)
    spec = envs.env_spec("pendulum")
    tensors = DemoTensors.build(demos.pairs, np.ones(len(demos)), demos.labeled)
    config = dataclasses.replace(
        trainer.TrainConfig(), method=args.method, steps=args.rollouts * 2048
    )
    warm = dataclasses.replace(config, steps=2048)
    for side in SIDES:  # warm-up: imports, first-call costs
        one_run(side, warm, spec, tensors, acc)
    runs: dict = {side: [] for side in SIDES}
    for r in range(args.rounds):
        for side in SIDES[r % 2 :] + SIDES[: r % 2]:  # order alternated every round
            row = one_run(side, config, spec, tensors, acc)
            runs[side].append(row)
            print(
                f"round {r} {side}: CPU {row['cpu_ms_per_iteration']:.0f} ms per iteration, "
                f"wall {row['wall_s']:.1f} s, load {row['load_before']:.1f}",
                file=sys.stderr,
                flush=True,
            )
    summary = {
        side: {
            "cpu_ms_per_iteration_median": statistics.median(
                r["cpu_ms_per_iteration"] for r in rows
            ),
            "parts_cpu_ms_per_iteration_median": {
                part: statistics.median(r["parts_cpu_ms_per_iteration"][part] for r in rows)
                for part in (*PARTS, "rest")
            },
            "runs": rows,
        }
        for side, rows in runs.items()
    }
    curves = [r["curve_return_mean"] for rows in runs.values() for r in rows]
    doc = {
        "name": "pn-gail-iteration-profile",
        "about": "CPU time of one GAIL training iteration (16 x 128 steps, the defaults) by "
        "part, with SB3's own rollout buffer, distribution checks and module calls "
        "(plain_sb3) and with the trainer's (ours), interleaved on the shared machine",
        "provenance": provenance(seeds=[0]),
        "method": args.method,
        "rollouts": args.rollouts,
        "rounds": args.rounds,
        "same_curves": all(c == curves[0] for c in curves),
        "sides": summary,
        "cpus": os.cpu_count(),
    }
    atomic.write_json(args.out, doc)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
