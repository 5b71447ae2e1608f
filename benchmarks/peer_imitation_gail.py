"""PEER, for ``bench_pn_gail.py`` only: imitation 1.0.1's GAIL, run in its own environment.

imitation 1.0.1 pins stable-baselines3 ~= 2.2 and gymnasium ~= 0.29, older than the
project's, so it cannot share our environment. Its Python is
``$ICLR25_IMITATION_PYTHON``, else ``.venv-imitation/bin/python`` (``make imitation-env``).

Host side (our environment): :func:`start` writes the demonstrations to a temporary NPZ
and starts this file as a worker under that Python, once: the worker's imports (torch,
imitation) are paid before timing. Each :meth:`Worker.run` sends ``run``; the worker
builds everything and trains, and replies with one JSON line. ``evaluate`` asks for the
last policy's mean-action return on the 32 fixed evaluation starts (our numpy Pendulum,
imported from the repository: numpy only).

Worker side (the imitation environment, :func:`worker_main`): imitation's GAIL with
settings equal to ours: 16 ``Pendulum-v1`` (``imitation.util.util.make_vec_env``, a
``DummyVecEnv``) × 128 steps per round, sb3-contrib TRPO with our TrainConfig's settings
(γ, λ, gSDE, target KL, CG steps, critic updates / batch / learning rate, 64×64 tanh),
discriminator ``BasicRewardNet`` 2×100 tanh on (s, a), Adam 1e-3, 5 updates per round,
each on the round's 2,048 agent transitions and 2,048 demonstration pairs. imitation
computes the reward each env step (its ``RewardVecEnvWrapper``); it evaluates nothing
during training (ours evaluates every 5 % of the budget, inside its timed run).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ENV_VAR = "ICLR25_IMITATION_PYTHON"
REPO = Path(__file__).resolve().parent.parent
DEFAULT_PYTHON = REPO / ".venv-imitation" / "bin" / "python"
STARTUP_TIMEOUT_S = 300


# -- host side ---------------------------------------------------------------------------
def imitation_python() -> tuple[str | None, str]:
    """The imitation environment's Python, or None and why there is none."""
    given = os.environ.get(ENV_VAR)
    if given:
        if Path(given).exists():
            return given, ""
        return None, f"${ENV_VAR} is {given!r}, which does not exist"
    if DEFAULT_PYTHON.exists():
        return str(DEFAULT_PYTHON), ""
    return None, (
        "imitation 1.0.1 pins stable-baselines3 ~2.2 and gymnasium ~0.29, so it needs its own "
        f"environment, and there is none: no ${ENV_VAR} and no {DEFAULT_PYTHON.relative_to(REPO)} "
        "(`make imitation-env` makes it)"
    )


class Worker:
    """A worker process in the imitation environment (see the module docstring)."""

    def __init__(self, python: str, npz: Path, settings: dict) -> None:
        import subprocess
        import tempfile

        self.python, self.npz = python, npz
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)  # noqa: SIM115
        env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [python, str(Path(__file__).resolve()), str(npz), json.dumps(settings)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        self.ready = self._reply()

    def _reply(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.log.seek(0)
            tail = self.log.read()[-2000:]
            raise RuntimeError(f"the imitation worker ({self.python}) stopped:\n{tail}")
        return json.loads(line)

    def _ask(self, command: str) -> dict:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def run(self) -> dict:
        """Build and train one GAIL run in the worker; its reply (env steps, CPU s, ...)."""
        return self._ask("run")

    def evaluate(self) -> dict:
        return self._ask("evaluate")

    def describe(self) -> dict:
        return {"python": self.python, "versions": self.ready["versions"]}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        self.log.close()
        os.unlink(self.log.name)
        self.npz.unlink(missing_ok=True)


def start(demos, config, rollouts: int) -> tuple[Worker | None, str]:
    """A started worker for GAIL with ``config``'s settings (a TrainConfig) over
    ``rollouts`` rounds, or None and why not."""
    import dataclasses
    import tempfile

    import numpy as np

    python, why_not = imitation_python()
    if python is None:
        return None, why_not
    fd, name = tempfile.mkstemp(suffix=".npz")
    os.close(fd)
    np.savez(name, obs=demos.obs, actions=demos.actions, episode=demos.episode)
    settings = {**dataclasses.asdict(config), "rollouts": rollouts}
    try:
        return Worker(python, Path(name), settings), ""
    except RuntimeError as exc:
        Path(name).unlink(missing_ok=True)
        return None, f"the imitation environment at {python} did not start: {exc}"


# -- worker side (runs under the imitation environment's Python) ---------------------------
def transitions(npz_path: str):
    """Demonstrations as imitation's ``Transitions`` (next_obs within each episode)."""
    import numpy as np
    from imitation.data import types

    data = np.load(npz_path)
    obs, acts, episode = data["obs"], data["actions"], data["episode"]
    last = np.append(episode[1:] != episode[:-1], True)  # (N,) last pair of its episode
    next_obs = np.where(last[:, None], obs, np.roll(obs, -1, axis=0))
    infos = np.array([{}] * len(obs))
    return types.Transitions(obs, acts, infos, next_obs, last)


def build(settings: dict, demos, seed: int):
    """imitation's GAIL trainer with sb3-contrib TRPO at our settings."""
    import numpy as np
    import torch
    from imitation.algorithms.adversarial.gail import GAIL
    from imitation.data.wrappers import RolloutInfoWrapper
    from imitation.rewards.reward_nets import BasicRewardNet
    from imitation.util.util import make_vec_env
    from sb3_contrib import TRPO

    venv = make_vec_env(
        "Pendulum-v1",
        rng=np.random.default_rng(seed),
        n_envs=settings["n_envs"],
        post_wrappers=[lambda env, _: RolloutInfoWrapper(env)],
    )
    hidden = settings["policy_hidden"]
    policy_kwargs = {"net_arch": {"pi": [hidden] * 2, "vf": [hidden] * 2}}
    gen = TRPO(
        "MlpPolicy",
        venv,
        learning_rate=settings["learning_rate"],
        n_steps=settings["n_steps"],
        batch_size=settings["critic_batch"],
        gamma=settings["gamma"],
        gae_lambda=settings["gae_lambda"],
        cg_max_steps=settings["cg_max_steps"],
        n_critic_updates=settings["n_critic_updates"],
        use_sde=settings["use_sde"],
        sde_sample_freq=settings["sde_sample_freq"],
        target_kl=settings["target_kl"],
        policy_kwargs={**policy_kwargs, "activation_fn": torch.nn.Tanh},
        seed=seed,
        device="cpu",
        verbose=0,
    )
    reward_net = BasicRewardNet(
        venv.observation_space, venv.action_space, hid_sizes=(100, 100), activation=torch.nn.Tanh
    )
    rollout = settings["n_envs"] * settings["n_steps"]
    trainer = GAIL(
        demonstrations=demos,
        demo_batch_size=rollout,  # as many demonstration pairs as agent pairs
        venv=venv,
        gen_algo=gen,
        reward_net=reward_net,
        n_disc_updates_per_round=settings["disc_steps"],
        disc_opt_kwargs={"lr": 1e-3},
        allow_variable_horizon=False,
    )
    return trainer, venv, rollout


def worker_main(npz_path: str, settings_json: str) -> None:
    import numpy as np
    import torch

    protocol = sys.stdout
    sys.stdout = sys.stderr  # imitation's logger and tqdm print; the replies go to protocol
    torch.set_num_threads(1)
    import gymnasium
    import imitation
    import sb3_contrib
    import stable_baselines3

    from iclr25.core.pn_gail import evaluation, pendulum

    settings = json.loads(settings_json)
    demos = transitions(npz_path)
    versions = {
        "imitation": imitation.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "sb3_contrib": sb3_contrib.__version__,
        "gymnasium": gymnasium.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
    }

    def reply(message: dict) -> None:
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    reply({"versions": versions})
    last = None
    for line in sys.stdin:
        command = line.strip()
        if command == "run":
            c0 = time.process_time()
            trainer, venv, rollout = build(settings, demos, seed=0)
            trainer.train(settings["rollouts"] * rollout)
            steps = int(trainer.gen_algo.num_timesteps)
            per_env = venv.env_method("get_episode_rewards")  # Monitor's, per env
            returns = [float(r) for rs in per_env for r in rs]
            venv.close()
            last = trainer
            reply(
                {
                    "env_steps": steps,
                    "cpu_s": time.process_time() - c0,
                    "training_return_mean": float(np.mean(returns)) if returns else None,
                }
            )
        elif command == "evaluate":
            act = mean_action(last.policy)
            value = float(pendulum.rollout_returns(act, evaluation.eval_starts()).mean())
            reply({"return_mean": value})


def mean_action(policy):
    """(E, ds) obs -> (E, da) clipped mean actions of an SB3 policy."""
    import numpy as np

    return lambda obs: policy.predict(obs.astype(np.float32), deterministic=True)[0]


if __name__ == "__main__":
    worker_main(sys.argv[1], sys.argv[2])
