"""Independent cells of the sweeps, comparisons and lower-bound runs, as tasks.

A cell is a pure module-level function of (configuration, seed) returning JSON, run by
:func:`iclr25.parallel.run_tasks` in-process, over local processes or on Dask. The
configuration is plain data (an instance is its means, not an environment object), so it
pickles to workers and hashes into the task cache; seeds come from
:func:`iclr25.parallel.derive_seed` of the run's seed and the cell's labels, never from
the order in which workers finish — the results are the same on every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.simulate import SimulationConfig, run_experiment
from iclr25.parallel import Execution, Outcome, Task, run_tasks

#: imported lazily by the cells (guarantee bounds): preloaded once for a process pool
WORKER_PRELOAD = ("scipy.stats",)


@dataclass(frozen=True)
class InstanceSpec:
    """A k-armed instance as plain data."""

    means: tuple[float, ...]
    noise: str = "bernoulli"
    sigma: float = 1.0
    label: str = "custom"

    def environment(self) -> ArmsEnvironment:
        return ArmsEnvironment(
            np.asarray(self.means, np.float64), self.noise, self.sigma, label=self.label
        )

    @classmethod
    def of(cls, env: ArmsEnvironment) -> InstanceSpec:
        if env.features is not None:
            raise ValueError("a linear environment is not a k-armed instance spec")
        means = tuple(float(m) for m in env.means)
        return cls(means, env.noise, float(env.sigma), env.label)


@dataclass(frozen=True)
class Cell:
    simulation: SimulationConfig
    instance: InstanceSpec


def run_cell(cell: Cell, seed: int) -> dict:
    """One experiment (:func:`.simulate.run_experiment`) on the cell's instance."""
    return run_experiment(cell.instance.environment(), cell.simulation, seed)


def run_cells(
    fn: Callable,
    configs: Sequence,
    seeds: Sequence[int],
    execution: Execution | None,
    command: str,
    on_done: Callable | None = None,
    labels: Sequence[str] = (),
) -> Outcome:
    """``run_tasks`` over (fn, config, seed) triples; results in the given order."""
    tasks = [
        Task(fn, config, seed, labels[i] if labels else "")
        for i, (config, seed) in enumerate(zip(configs, seeds, strict=True))
    ]
    return run_tasks(tasks, execution, command=command, on_done=on_done)
