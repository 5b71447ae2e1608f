"""Train the Pendulum expert that `iclr25 pn-gail` bundles (SB3 SAC, deterministic).

    PYTHONPATH=. python scripts/train_pn_gail_expert.py [--steps 20000] [--seed 0]

Soft actor-critic from stable-baselines3 on gymnasium's Pendulum-v1 (rl-zoo's settings:
learning rate 1e-3, 20,000 steps; a 64×64 network), one torch thread, deterministic
algorithms, seed 0. The actor (two ReLU layers and the mean head) is written to
``iclr25/data/pn_gail/pendulum_sac_expert.safetensors`` with its settings as metadata,
then evaluated by the toolkit's own numpy code (:mod:`iclr25.core.pn_gail.expert`) on 64
fixed episodes; the script fails unless the mean return is at least −200. A log with the
returns, the wall and CPU time and the sha256 goes to ``expert_log.json`` beside it.
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


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def train(steps: int, seed: int):
    import torch
    from stable_baselines3 import SAC

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    model = SAC(
        "MlpPolicy",
        "Pendulum-v1",
        learning_rate=1e-3,
        policy_kwargs={"net_arch": [64, 64]},
        seed=seed,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=steps)
    return model


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
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from iclr25.distributed_torch import refuse_launch

    refusal = refuse_launch(
        "train_pn_gail_expert.py", "SB3's SAC is one process, one environment stream"
    )
    if refusal:  # every rank would repeat the whole run and race on --out
        print(refusal, file=sys.stderr)
        return 2

    import numpy as np
    from safetensors.numpy import save_file

    from iclr25.core.pn_gail import pendulum
    from iclr25.core.pn_gail.expert import load_expert, sha256_of

    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    model = train(args.steps, args.seed)
    wall_s, cpu_s = time.perf_counter() - wall0, cpu_seconds() - cpu0
    metadata = {
        "algorithm": "SAC (stable-baselines3)",
        "env": "Pendulum-v1",
        "steps": str(args.steps),
        "seed": str(args.seed),
        "net_arch": "64,64 relu",
        "action_low": "-2.0",
        "action_high": "2.0",
    }
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
    (args.out.parent / "expert_log.json").write_text(json.dumps(log, indent=2) + "\n")
    print(json.dumps(log, indent=2))
    if log["return_mean"] < MIN_RETURN:
        print(f"expert mean return {log['return_mean']:.1f} < {MIN_RETURN}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
