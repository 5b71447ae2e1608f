"""Train the Pendulum expert that `iclr25 pn-gail` bundles (SB3 SAC, deterministic).

    PYTHONPATH=. python scripts/train_pn_gail_expert.py [--steps 20000] [--seed 0]

Soft actor-critic from stable-baselines3 on gymnasium's Pendulum-v1 (rl-zoo's settings:
learning rate 1e-3, 20,000 steps; a 64×64 network; SB3's batch of 256), one torch thread,
deterministic algorithms, seed 0. The actor (two ReLU layers and the mean head) is
written to ``iclr25/data/pn_gail/pendulum_sac_expert.safetensors`` with its settings as
metadata, then evaluated by the toolkit's own numpy code (:mod:`iclr25.core.pn_gail.expert`)
on 64 fixed episodes; the script fails unless the mean return is at least −200. A log with
the returns, the wall and CPU time and the sha256 goes to ``expert_log.json`` beside it.

Under ``torchrun --nproc-per-node N scripts/train_pn_gail_expert.py`` the SAC trains
data-parallel (gloo, :mod:`iclr25.distributed_torch`; SB3 has no DDP, so the script adds
the arithmetic to SB3's own loop):

- every process runs its own Pendulum and its own replay buffer: rank 0 with ``--seed``,
  rank r > 0 with a seed derived from (``--seed``, r) by numpy's ``SeedSequence``;
- rank 0's parameters (actor, critics, target critics, entropy coefficient) are
  broadcast to all at the start;
- each gradient step, every rank samples its share of the global ``--batch-size`` from its
  own buffer (``shard_bounds``: 128 + 128 for 2 processes), and before each optimiser
  step (actor, critic, entropy coefficient) the gradients are averaged over the ranks,
  weighted by share (``DataParallel.average_gradients``: an optimiser step pre-hook), so
  every rank takes the same step and the parameters stay bit-identical on all ranks. The
  script checks that at the end (the log's ``ranks``: each rank's seed, its parameters'
  sha256 and its replay buffer's) and fails if they differ;
- rank 0 alone writes, evaluates and prints.

**A 2-process run is not the 1-process run, step for step**, and is not meant to be: with
N processes each gradient step still uses a global batch of ``--batch-size`` transitions,
but drawn from N buffers of N independent environment streams, so after ``--steps`` steps
the run has N × ``--steps`` transitions of experience (the one-process run has
``--steps``), and its updates, learning curve and final actor differ. What is identical:
the global batch size, learning rate, schedule and number of gradient steps (one per
environment step of each process: ``--steps``), rank 0's initial parameters and its first
100 transitions (SB3's ``learning_starts``: random actions from rank 0's seeded action
space) are the one-process run's, and the one-process path itself is unchanged (without
a launcher the script takes the code path it took before and writes the same actor). On
a CPU more processes do not make a step faster; they gather N times the experience in the
same number of steps.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "iclr25" / "data" / "pn_gail"
MIN_RETURN = -200.0
EVAL_EPISODES = 64
EVAL_SEED = 20250101  # the 64 fixed start states of the acceptance check
BATCH = 256  # SB3's SAC default: the global batch of every gradient step


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rank_seed(seed: int, rank: int) -> int:
    """Rank 0 keeps ``seed`` (its stream starts as the one-process run's); rank r > 0 gets
    an independent seed derived from (seed, r)."""
    import numpy as np

    if rank == 0:
        return seed
    return int(np.random.SeedSequence(seed, spawn_key=(rank,)).generate_state(1)[0])


def train(steps: int, seed: int, batch: int = BATCH, group=None):
    """SB3's SAC for ``steps`` environment steps; ``group`` (a launched
    :class:`iclr25.distributed_torch.Context`): data-parallel as the module docstring says."""
    import torch
    from stable_baselines3 import SAC

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    parallel = None
    if group is not None and group.active:
        from iclr25.distributed_torch import DataParallel

        parallel = DataParallel(group, batch)
        share = parallel.rows(batch)
        batch, seed = share.stop - share.start, rank_seed(seed, group.rank)
    model = SAC(
        "MlpPolicy",
        "Pendulum-v1",
        learning_rate=1e-3,
        batch_size=batch,
        policy_kwargs={"net_arch": [64, 64]},
        seed=seed,
        device="cpu",
        verbose=0,
    )
    if parallel is not None:
        parallel.broadcast(_trained_tensors(model))
        for optimizer in (model.actor.optimizer, model.critic.optimizer, model.ent_coef_optimizer):
            if optimizer is not None:  # (no entropy optimiser with a fixed ent_coef)
                parallel.average_gradients(optimizer)
    model.learn(total_timesteps=steps)
    return model


def _trained_tensors(model) -> list:
    """Everything SAC trains: the policy (actor, critics, target critics) and log α."""
    alpha = [] if model.log_ent_coef is None else [model.log_ent_coef]
    return [*model.policy.state_dict().values(), *alpha]


def rank_digests(model, group, seed: int) -> list[dict]:
    """Each rank's seed and the sha256 of its parameters and of its replay buffer's
    observations, gathered on every rank (rank order)."""
    import hashlib

    import numpy as np
    import torch.distributed as dist

    params = hashlib.sha256()
    for tensor in _trained_tensors(model):
        params.update(tensor.detach().cpu().numpy().tobytes())
    buffer = model.replay_buffer
    seen = np.ascontiguousarray(buffer.observations[: buffer.pos])  # (steps, 1, 3)
    mine = {
        "rank": group.rank,
        "seed": rank_seed(seed, group.rank),
        "parameters_sha256": params.hexdigest(),
        "replay_sha256": hashlib.sha256(seen.tobytes()).hexdigest(),
    }
    every: list = [None] * group.world_size
    dist.all_gather_object(every, mine)
    return every


def actor_tensors(model) -> dict:
    state = model.policy.actor.state_dict()
    keep = ("latent_pi.0", "latent_pi.2", "mu")
    return {
        k: v.detach().cpu().numpy().copy() for k, v in state.items() if k.rsplit(".", 1)[0] in keep
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DATA / "pendulum_sac_expert.safetensors")
    parser.add_argument("--batch-size", type=int, default=BATCH,
                        help="transitions per gradient step, over all processes")  # fmt: skip
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from iclr25.distributed_torch import is_follower, process_group
    from iclr25.errors import UsageError

    try:
        with process_group("cpu") as group:
            return run(args, group)
    except UsageError as exc:  # e.g. a batch smaller than the group: rank 0 says it
        if not is_follower():
            print(f"Error: {exc.message()}", file=sys.stderr)
        return 2


def run(args, group) -> int:
    import numpy as np
    from safetensors.numpy import save_file

    from iclr25.core.pn_gail import pendulum
    from iclr25.core.pn_gail.expert import load_expert, sha256_of

    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    model = train(args.steps, args.seed, args.batch_size, group)
    wall_s, cpu_s = time.perf_counter() - wall0, cpu_seconds() - cpu0
    ranks = rank_digests(model, group, args.seed) if group.active else None
    if not group.is_main:
        return 0  # rank 0 checks, writes, evaluates and prints
    if ranks and len({r["parameters_sha256"] for r in ranks}) > 1:
        print("Error: data-parallel SAC: the ranks' parameters diverged — report this bug "
              "and train in one process", file=sys.stderr)  # fmt: skip
        return 1
    metadata = {
        "algorithm": "SAC (stable-baselines3)",
        "env": "Pendulum-v1",
        "steps": str(args.steps),
        "seed": str(args.seed),
        "net_arch": "64,64 relu",
        "action_low": "-2.0",
        "action_high": "2.0",
    }
    if group.active:  # (one process: the metadata it always had)
        metadata["processes"] = str(group.world_size)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    save_file(actor_tensors(model), str(tmp), metadata=metadata)
    os.replace(tmp, args.out)

    expert = load_expert(args.out)
    starts = pendulum.initial_states(EVAL_EPISODES, np.random.default_rng(EVAL_SEED))
    returns = pendulum.rollout_returns(expert, starts)
    log = {
        "steps": args.steps,
        "seed": args.seed,
        "train_wall_s": round(wall_s, 1),
        "train_cpu_s": round(cpu_s, 1),
        "eval_episodes": EVAL_EPISODES,
        "eval_seed": EVAL_SEED,
        "return_mean": float(returns.mean()),
        "return_sd": float(returns.std(ddof=1)),
        "sha256": sha256_of(args.out),
        "versions": {
            "torch": __import__("torch").__version__,
            "stable_baselines3": __import__("stable_baselines3").__version__,
            "gymnasium": __import__("gymnasium").__version__,
            "numpy": np.__version__,
        },
    }
    if group.active:
        log["distributed"] = group.as_dict()
        log["batch_size"] = args.batch_size
        log["ranks"] = ranks
    (args.out.parent / "expert_log.json").write_text(json.dumps(log, indent=2) + "\n")
    print(json.dumps(log, indent=2))
    if log["return_mean"] < MIN_RETURN:
        print(f"expert mean return {log['return_mean']:.1f} < {MIN_RETURN}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
