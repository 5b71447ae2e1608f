"""pn-gail: the batched Pendulum and the vectorised confidence classifier against their peers.

1. **Environment.** 16 numpy pendulums stepped as one batch (:mod:`iclr25.core.pn_gail.
   pendulum`) against gymnasium's ``SyncVectorEnv`` of 16 ``Pendulum-v1``, from the same
   start states with the same (seeded uniform) torques: 5 episodes of 199 steps (one with
   ``--quick``), each side a vector env (SB3's API / gymnasium's). The observations must
   agree to 1e-5, or the ratio is not comparable. 15 interleaved rounds (the batched calls
   are short, ~0.03 s, on a shared machine).
2. **Classifier.** The vectorised balanced classifier at its defaults (320 labelled +
   1,280 unlabelled pairs per step, 600 steps, AMSGrad 1e-3) against the official pattern
   (25,000 iterations of one labelled and int(n_u / n_c) unlabelled pairs, AMSGrad 3e-4),
   same network, dropout and risk, on the same generated demonstrations (80 % non-optimal,
   20 % labelled). Each side's per-step cost does not depend on how many steps it takes,
   so both are *timed* at 1/10 of their default length (60 steps vs 2,500 iterations,
   interleaved, 9 rounds: the vectorised calls are short, ~0.2 s, on a shared machine; each
   call includes its set-up and final prediction): the ratio is the full runs' ratio, with
   a bootstrap interval over the rounds. The accuracy condition is checked on the *full*
   default runs (each once): the ratio is comparable only if our MAE on the unlabelled
   pairs is no worse than the loop's + 0.01.
3. **End to end.** GAIL training, our trainer (sb3-contrib TRPO on the batched Pendulum,
   rewards relabelled once per rollout) against two peers at equal env steps (4 rollouts
   of 16 × 128 = 8,192 steps; one with ``--quick``) and equal TRPO settings as far as each
   allows, each side a whole run from construction to its last evaluation, interleaved:
   - the official scripts' plain loop, a clean-room port of its pattern in
     :mod:`benchmarks.peer_pn_gail_loop` (one env, a float64 policy call and a
     discriminator reward per env step, hand-written TRPO);
   - imitation 1.0.1's GAIL (:mod:`benchmarks.peer_imitation_gail`), which pins
     stable-baselines3 2.2 and gymnasium 0.29, so it runs in its own environment: the
     Python of ``$ICLR25_IMITATION_PYTHON`` or ``.venv-imitation`` (``make imitation-env``)
     as a worker process started once (its imports are not timed); skipped, saying why,
     when neither exists.
   The returns of each side's final policy (mean action, the 32 fixed evaluation
   episodes) are reported beside the times: at this budget none has learned anything, so
   they show that the sides ran comparable training, not which learns better.
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks.harness import Report, Target
from iclr25.timing import TimingConfig

NAME = "pn-gail"
TARGETS = {
    "pendulum_speedup_vs_sync_vector_env": Target(
        ">=", 10.0, "rollouts are a third of training; gymnasium's vector env is the default"
    ),
    "classifier_speedup_vs_one_pair_loop": Target(
        ">=", 20.0, "the official 25,000 one-pair iterations, at no worse MAE"
    ),
    "gail_speedup_vs_imitation": Target(
        ">=", 2.0, "imitation 1.0.1 is the maintained GAIL on SB3: equal env steps and TRPO"
    ),
    "gail_speedup_vs_official_loop": Target(
        ">=", 5.0, "the official scripts' plain loop (one env, float64 policy call per step)"
    ),
}
N_ENVS = 16
MAE_SLACK = 0.01
TIME_SCALE = 10  # both sides timed at 1/10 of their default length (60 steps vs 2,500)
MAE_SCALE = 1  # accuracy compared on the full default runs (600 steps vs 25,000 iterations)
# the env calls are short (~0.03 s batched) on a shared machine: 15 interleaved rounds
ENV_TIMING = TimingConfig(warmup=1, repeats=15)
GAIL_ROLLOUTS = 4  # end-to-end budget: 4 rollouts of 2,048 env steps per run, every side


def sync_vector_env(n_envs: int):
    import gymnasium as gym

    return gym.vector.SyncVectorEnv([lambda: gym.make("Pendulum-v1") for _ in range(n_envs)])


def gym_observations(env, starts: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """(T, E, 3) observations of gymnasium's envs set to ``starts`` and driven by ``actions``."""
    env.reset(seed=0)
    for sub, state in zip(env.envs, starts, strict=True):
        sub.unwrapped.state = np.array(state, dtype=np.float64)
    out = np.empty((len(actions), len(starts), 3), dtype=np.float32)
    for t, action in enumerate(actions):
        out[t] = env.step(action)[0]
    return out


def batched_observations(env, starts: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The same with the training's :class:`PendulumVecEnv` (an SB3 VecEnv)."""
    env.reset()
    env.state = np.array(starts, dtype=np.float64)
    out = np.empty((len(actions), len(starts), 3), dtype=np.float32)
    for t, action in enumerate(actions):
        out[t] = env.step(action)[0]
    return out


def bench_env(report: Report, episodes: int, config: TimingConfig) -> None:
    from iclr25.core.pn_gail import pendulum

    rng = np.random.default_rng(0)
    starts = pendulum.initial_states(N_ENVS, rng)
    steps = pendulum.HORIZON - 1  # within one episode: the two reset differently after it
    actions = rng.uniform(-2.0, 2.0, size=(steps, N_ENVS, 1)).astype(np.float32)
    gym_env, ours_env = sync_vector_env(N_ENVS), pendulum.make_vec_env(N_ENVS, seed=0)
    seen: dict[str, np.ndarray] = {}

    def ours() -> None:
        for _ in range(episodes):
            seen["batched"] = batched_observations(ours_env, starts, actions)

    def peer() -> None:
        for _ in range(episodes):
            seen["gym"] = gym_observations(gym_env, starts, actions)

    timed = report.time("pendulum_env", {"batched": ours, "sync_vector_env": peer}, config=config)
    gym_env.close()
    diff = float(np.abs(seen["batched"] - seen["gym"]).max())
    report.figure(
        "env",
        {
            "n_envs": N_ENVS,
            "steps": steps * episodes,
            "max_abs_obs_diff": diff,
            # process CPU time is less sensitive than wall time to other jobs' load
            "cpu_ratio": timed.cpu_ratio("sync_vector_env", "batched"),
        },
    )
    report.check(
        "pendulum_speedup_vs_sync_vector_env",
        timed.ratio("sync_vector_env", "batched"),
        interval=timed.ratio_interval("sync_vector_env", "batched"),
        comparable=diff <= 1e-5,
        note=f"same starts and torques, both as vector envs; observations agree to {diff:.1e}",
    )


def bench_classifier(report: Report, config: TimingConfig) -> None:
    import dataclasses

    from iclr25.core.pn_gail import confidence as cm
    from iclr25.core.pn_gail.demos import DemoConfig, generate

    demos = generate(DemoConfig(), seed=0)
    x, r, labeled = demos.pairs, demos.confidence, demos.labeled
    full = cm.ClassifierConfig()

    def sides(scale: int) -> dict:
        short = dataclasses.replace(full, steps=full.steps // scale)
        return {
            "vectorised": lambda: cm.fit_confidence(x, r, labeled, short, 1),
            "one_pair_loop": lambda: cm.fit_confidence_loop(
                x, r, labeled, short, 1, cm.OFFICIAL_ITERATIONS // scale
            ),
        }

    time_scale, mae_scale = (TIME_SCALE, MAE_SCALE) if not report.quick else (50, None)
    timed = report.time("classifier", sides(time_scale), config=config)
    maes, seconds = {}, {}
    for side, fit in sides(mae_scale).items() if mae_scale else ():
        t0 = time.perf_counter()
        predicted = fit()
        seconds[side] = time.perf_counter() - t0
        maes[side] = cm.quality(predicted, demos.true_confidence, labeled)["mae_unlabeled"]
    n_c = int(labeled.sum())
    report.figure(
        "classifier",
        {
            "pairs": len(demos),
            "vectorised": {
                "steps": full.steps,
                "pairs_per_step": full.labeled_batch + full.unlabeled_batch,
                "learning_rate": full.learning_rate,
            },
            "one_pair_loop": {
                "iterations": cm.OFFICIAL_ITERATIONS,
                "pairs_per_iteration": 1 + max(1, (len(demos) - n_c) // n_c),
                "learning_rate": cm.OFFICIAL_LEARNING_RATE,
            },
            "timed_at": f"1/{time_scale} of each side's default length",
            "cpu_ratio": timed.cpu_ratio("one_pair_loop", "vectorised"),
            "mae_at": "each side's full default length" if mae_scale else None,
            "mae_run_s": seconds,
            "mae": maes or {"vectorised": None, "one_pair_loop": None},
        },
    )
    comparable = bool(maes) and maes["vectorised"] <= maes["one_pair_loop"] + MAE_SLACK
    report.check(
        "classifier_speedup_vs_one_pair_loop",
        timed.ratio("one_pair_loop", "vectorised"),
        interval=timed.ratio_interval("one_pair_loop", "vectorised"),
        comparable=comparable,
        note=(
            f"MAE on the unlabelled pairs: ours {maes['vectorised']:.3f}, loop "
            f"{maes['one_pair_loop']:.3f} (full default runs; full-run wall "
            f"{seconds['vectorised']:.1f} s vs {seconds['one_pair_loop']:.1f} s)"
            if maes
            else "quick run: MAE not measured, so not comparable"
        ),
    )


def bench_gail(report: Report, rollouts: int, config: TimingConfig) -> None:
    """End-to-end GAIL: ours against the official plain loop and imitation's GAIL."""
    import dataclasses

    from benchmarks import peer_imitation_gail as imitation_peer
    from benchmarks.peer_pn_gail_loop import LoopConfig, OfficialLoop
    from iclr25.core.pn_gail import envs, evaluation, trainer
    from iclr25.core.pn_gail.demos import DemoConfig, generate
    from iclr25.core.pn_gail.discriminator import DemoTensors

    demos = generate(DemoConfig(), seed=0)
    ours_config = dataclasses.replace(
        trainer.TrainConfig(), method="gail", steps=rollouts * trainer.TrainConfig().rollout_steps
    )
    spec, tensors = (
        envs.env_spec("pendulum"),
        DemoTensors.build(demos.pairs, np.ones(len(demos)), demos.labeled),
    )
    loop_config = LoopConfig.like(ours_config)
    seen: dict = {}

    def ours() -> None:
        keep = lambda model: seen.__setitem__("ours_model", model)  # noqa: E731
        seen["ours"] = trainer.train(ours_config, spec, tensors, seed=0, save_to=keep)

    def official_loop() -> None:
        loop = OfficialLoop(demos.pairs, loop_config, seed=0)
        loop.train(rollouts)
        seen["official_loop"] = loop

    sides = {"ours": ours, "official_loop": official_loop}
    worker, why_not = imitation_peer.start(demos, ours_config, rollouts)
    if worker is not None:
        sides["imitation"] = lambda: seen.__setitem__("imitation", worker.run())
    try:
        timed = report.time("gail_end_to_end", sides, config=config)
        if worker is not None:
            seen["imitation"] |= worker.evaluate()  # the last run's policy
    finally:
        if worker is not None:
            worker.close()
    references = evaluation.pendulum_references()
    loop = seen["official_loop"]
    policy = trainer.mean_action_policy(seen["ours_model"], spec.act_low, spec.act_high)
    eval_s = [_seconds(lambda: evaluation.evaluate_pendulum(policy)) for _ in range(3)]
    returns = {
        "ours": _returns(seen["ours"]["curve"][-1]["return_mean"], references),
        "official_loop": _returns(evaluation.evaluate_pendulum(loop.mean_action), references),
    }
    training = {
        "ours": seen["ours"]["training_return_last_100"],
        "official_loop": float(np.mean(loop.training_returns)),
    }
    steps = {"ours": seen["ours"]["env_steps"], "official_loop": loop.env_steps}
    if worker is not None:
        run = seen["imitation"]
        returns["imitation"] = _returns(run["return_mean"], references)
        training["imitation"] = run["training_return_mean"]
        steps["imitation"] = run["env_steps"]
    report.figure(
        "gail",
        {
            "rollouts": rollouts,
            "env_steps": steps,
            "ours_settings": dataclasses.asdict(ours_config),
            "official_loop_settings": dataclasses.asdict(loop_config),
            "imitation": worker.describe() if worker is not None else {"skipped": why_not},
            "final_return_32_fixed_episodes": returns,
            "training_episode_return_mean": training,
            "cpu_ratio_official_loop": timed.cpu_ratio("official_loop", "ours"),
            # ours' run includes its evaluations (32 episodes every 5 % of the budget: every
            # rollout here, 20 in 98 rollouts at 200k steps); imitation's evaluates nothing
            "ours_evaluations": len(seen["ours"]["curve"]),
            "ours_evaluation_s": float(np.median(eval_s)),
            "imitation_worker_cpu_s": seen["imitation"]["cpu_s"] if worker else None,
        },
    )
    equal = steps["ours"] == steps["official_loop"]
    report.check(
        "gail_speedup_vs_official_loop",
        timed.ratio("official_loop", "ours"),
        interval=timed.ratio_interval("official_loop", "ours"),
        comparable=equal,
        note=f"{steps['ours']} vs {steps['official_loop']} env steps; final return (32 fixed "
        f"episodes) ours {returns['ours']['return_mean']:.0f}, loop "
        f"{returns['official_loop']['return_mean']:.0f}",
    )
    if worker is None:
        report.check("gail_speedup_vs_imitation", None, note=why_not)
        return
    report.check(
        "gail_speedup_vs_imitation",
        timed.ratio("imitation", "ours"),
        interval=timed.ratio_interval("imitation", "ours"),
        comparable=steps["ours"] == steps["imitation"],
        note=f"{steps['ours']} vs {steps['imitation']} env steps; final return (32 fixed "
        f"episodes) ours {returns['ours']['return_mean']:.0f}, imitation "
        f"{returns['imitation']['return_mean']:.0f}; imitation in its own environment ("
        + ", ".join(f"{k} {v}" for k, v in worker.describe()["versions"].items())
        + ")",
    )


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _returns(value: float, references) -> dict:
    return {"return_mean": value, "normalized_return": references.normalize(value)}


def run(report: Report) -> None:
    import torch

    torch.set_num_threads(1)
    config = TimingConfig(warmup=1, repeats=2 if report.quick else 5)
    bench_env(report, 1 if report.quick else 5, config if report.quick else ENV_TIMING)
    bench_classifier(report, config if report.quick else TimingConfig(warmup=1, repeats=9))
    bench_gail(report, 1 if report.quick else GAIL_ROLLOUTS, config)
    report.figure("load_average", os.getloadavg())
    report.figure("cpus", os.cpu_count())
