"""What the trainer removes around sb3-contrib's TRPO: overhead, not arithmetic.

A profile of one GAIL iteration (16 × 128 steps, our defaults;
``scripts/profile_pn_gail.py``) spends about a third of its time in TRPO's critic loop (20 epochs ×
4 minibatches of 512), a fifth in TRPO's policy step, a fifth in SB3's per-step rollout,
and the rest in the discriminator and the evaluations. Three pieces of that are
book-keeping rather than the algorithm, and each is removed here with the numbers
unchanged, bit for bit (tested: same seed → the same curve and the same final weights):

- :class:`TensorRolloutBuffer`: SB3's ``RolloutBuffer.get`` fancy-indexes six numpy
  arrays and copies each into a new tensor for every minibatch (80 per iteration); here
  the six flattened arrays become tensors once per rollout and every minibatch is a
  tensor index of them, drawn from the same ``np.random.permutation`` (the same global
  numpy draws, so the same minibatches);
- :func:`no_distribution_checks`: ``torch.distributions`` checks every parameter and
  every sample against its constraint (a reduction and a host sync per call: thousands
  per iteration between the rollout's per-step policy calls and TRPO's line search);
  the checks only raise, so switching them off leaves every number as it was. What they
  would have caught, a non-finite action, is checked once per rollout instead
  (:func:`check_finite`);
- :func:`mean_action_fn`: the evaluation's mean action (200 calls of 32 observations per
  evaluation) as the same ``linear``/``tanh`` calls on the same weights without
  ``nn.Module``'s call machinery, when the policy is the plain MLP the trainer builds.

TRPO's ``train`` (conjugate gradient, line search, critic epochs) and ``collect_rollouts``
run as sb3-contrib / SB3 wrote them.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

import numpy as np

_TENSOR_NAMES = ("observations", "actions", "values", "log_probs", "advantages", "returns")


@functools.cache
def tensor_rollout_buffer_class():
    """:class:`TensorRolloutBuffer`, built once on first use (SB3 is imported lazily)."""
    import torch
    from stable_baselines3.common.buffers import RolloutBuffer
    from stable_baselines3.common.type_aliases import RolloutBufferSamples

    class TensorRolloutBuffer(RolloutBuffer):
        """SB3's ``RolloutBuffer`` whose ``get`` indexes tensors made once per rollout.

        ``get`` draws ``np.random.permutation`` exactly as SB3's does and yields the same
        samples: (B, ·) float32 observations and actions, and (B,) values, log-probs,
        advantages and returns, as tensors on the buffer's device."""

        def reset(self) -> None:
            super().reset()
            self._tensors = None

        def get(self, batch_size: int | None = None):
            assert self.full, ""
            n = self.buffer_size * self.n_envs
            indices = np.random.permutation(n)  # SB3's draw: same global numpy stream
            if not self.generator_ready:
                for name in _TENSOR_NAMES:
                    self.__dict__[name] = self.swap_and_flatten(self.__dict__[name])
                self.generator_ready = True
                self._tensors = None
            if self._tensors is None:
                self._tensors = (
                    self.to_torch(self.observations),
                    self.to_torch(self.actions.astype(np.float32, copy=False)),
                    *(self.to_torch(self.__dict__[k].flatten()) for k in _TENSOR_NAMES[2:]),
                )
            if batch_size is None:
                batch_size = n
            order = torch.from_numpy(indices).to(self.device)
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                yield RolloutBufferSamples(*(t[idx] for t in self._tensors))

    return TensorRolloutBuffer


@contextlib.contextmanager
def no_distribution_checks():
    """``torch.distributions``' argument and sample checks off for the block, then as they
    were (the flag is process-wide; the trainer runs one model per process at a time)."""
    from torch.distributions import Distribution

    before = Distribution._validate_args
    Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        Distribution.set_default_validate_args(before)


def check_finite(actions: np.ndarray, iteration: int) -> None:
    """The one thing the distribution checks guarded in training: a finite policy."""
    if not np.isfinite(actions).all():
        raise FloatingPointError(
            f"the policy produced non-finite actions in rollout {iteration + 1} (training diverged)"
        )


def mean_action_fn(policy) -> Callable | None:
    """obs tensor (B, ds) -> mean actions (B, da) of an SB3 Gaussian/gSDE MLP policy with a
    flatten extractor, Box observations and Linear/Tanh layers, by the same ``linear`` and
    ``tanh`` calls as its modules; None for any other policy (the caller falls back)."""
    import torch
    import torch.nn.functional as F
    from gymnasium import spaces
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from torch import nn

    extractor = policy.pi_features_extractor
    if not isinstance(extractor, FlattenExtractor) or not isinstance(
        policy.observation_space, spaces.Box
    ):
        return None
    layers = [*policy.mlp_extractor.policy_net, policy.action_net]
    steps: list = []
    for layer in layers:
        if type(layer) is nn.Linear:
            steps.append((layer.weight, layer.bias))
        elif type(layer) is nn.Tanh:
            steps.append(None)
        else:
            return None

    def mean_action(obs: torch.Tensor) -> torch.Tensor:
        x = torch.flatten(obs.float(), 1)  # preprocess_obs (Box: float) + nn.Flatten
        for step in steps:
            x = torch.tanh(x) if step is None else F.linear(x, *step)
        return x

    return mean_action
