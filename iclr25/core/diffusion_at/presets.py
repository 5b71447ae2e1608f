"""``--preset paper``: the AT settings of the paper's official code, on our data and models.

What the official training script does (AT_Diff, ``scripts/cifar_adv_train.sh`` and
``guided_diffusion/adv_train_util.py``, read in the public mirror
nstromberg/imbalanced-dro-diffusion, whose README is AT_Diff's):

==========================  ===========================================  ==================
setting                      official code (CIFAR-10, ADM)                 ``--preset paper``
==========================  ===========================================  ==================
AT method                    ``fast``: free AT, 3 replays per minibatch   free, 3 replays
norm, start                  ℓ2, δ = 0 (``adv_init_mag`` 0)               ℓ2, δ = 0
ascent step                  0.1, absolute ℓ2 (δ += 0.1·g/‖g‖₂)           0.1 absolute ℓ2
radius                       ``adv_max_norm`` 0.1 × √d                    α = 0.1 (× √d)
target                       ε + sg(δ)/σ_t (``delta_detach``)             x0
noise schedule               cosine, T = 1000                             cosine, T = 1000
protocol                     fine-tunes a 250 K-step ADM checkpoint       plain for 3/4 of
                             for 1000 minibatches (3000 updates, ≈1.2 %)   ``--steps``, AT for
                                                                          the last 1/4
==========================  ===========================================  ==================

With a step of 0.1 inside a ball of radius 0.1·√d, δ stays far inside the ball on images
(norms 0, 0.1, ≤ 0.2 over the three replays), unlike the default setting where one step
reaches the edge. Our step is given per coordinate, so the preset passes 0.1/√d.

Differences that remain (not transferable to a CPU-sized model, or not implemented):
the ADM architecture (128 channels, attention, dropout 0.3, fp16) and its learned variance
(hybrid loss); the ``loss-second-moment`` timestep sampler (we draw t uniformly); AdamW at
lr 1e-4, batch 128 and EMA 0.9999 (we keep the per-data defaults); the fine-tuned fraction
(the official 1.2 % of a long run is a few dozen steps at our budgets, so we fine-tune the
last quarter); and the data (CIFAR-10/ImageNet-64 against 2-D toys and 8×8 digits). The
docs' table lists them with the measured effect of the preset.
"""

from __future__ import annotations

import math

#: the official script's values (see the table above)
PAPER = {
    "method": "free",
    "norm": "l2",
    "free_replays": 3,
    "alpha": 0.1,  # adv_max_norm, per coordinate (the code multiplies it by √d)
    "step_l2": 0.1,  # adv_lr, an absolute ℓ2 length
    "target": "x0",
    "schedule": "cosine",
    "diffusion_steps": 1000,
}
FINETUNE_FRACTION = 0.25  # AT fine-tunes the last quarter of --steps (see the docstring)


def paper_options(dim: int, steps: int, resume_step: int | None = None) -> dict:
    """The options dict (``diffusion_at_options`` keys) of ``--preset paper`` for data of
    ``dim`` numbers per sample and a budget of ``steps`` updates. Resuming a plain
    checkpoint at ``resume_step`` makes it the pretrained model AT fine-tunes from; its
    schedule and T are then kept (they define the model being fine-tuned)."""
    at_start = resume_step if resume_step is not None else finetune_start(steps)
    model = {"schedule": PAPER["schedule"], "diffusion_steps": PAPER["diffusion_steps"]}
    return {
        **(model if resume_step is None else {}),
        "method": PAPER["method"],
        "norm": PAPER["norm"],
        "free_replays": PAPER["free_replays"],
        "alpha": PAPER["alpha"],
        "step": PAPER["step_l2"] / math.sqrt(dim),
        "target": PAPER["target"],
        "at_start": at_start,
    }


def finetune_start(steps: int) -> int:
    """The first AT step: plain training for the first 3/4 of the budget."""
    return int(round(steps * (1 - FINETUNE_FRACTION)))
