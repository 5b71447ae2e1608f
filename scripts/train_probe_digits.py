"""Train the bundled digits DDPM of `iclr25 diffusion-probe image` (deterministic, CPU).

A DDPM (ε-prediction, linear schedule, T = 250: every-step reverse processes stay
affordable on a CPU) with the diffusion-at U-Net on
scikit-learn's 1797 8×8 digits, one torch thread, seed 0. The script stops when the EMA
model's samples (DDPM ancestral sampling, every step) reach a Fréchet distance ≤ 40 in
the shipped digit classifier's features (1,000 samples against the 1797 digits), checked
every ``--check-every`` steps, or at ``--max-steps``. It writes the EMA weights only, in
the diffusion-at checkpoint format, to ``iclr25/data/diffusion_probe/digits_ddpm.safetensors``
and prints the steps, the Fréchet distance, the wall time and the file's sha256.

    python scripts/train_probe_digits.py [--max-steps 8000] [--check-every 1000]
    torchrun --standalone --nproc-per-node 2 scripts/train_probe_digits.py ...

Under ``torchrun`` the training runs data-parallel (gloo, :mod:`iclr25.distributed_torch`,
as ``diffusion-at train`` does): the global batch stays the one-process batch, every
process draws it and trains on its rows; rank 0 alone samples for the Fréchet distance
(the other ranks wait for its verdict), prints and writes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import torch

TARGET_FD = 40.0
DIFFUSION_STEPS = 250
OUT = Path(__file__).resolve().parent.parent / "iclr25/data/diffusion_probe/digits_ddpm.safetensors"


def fid_of(state, schedule, data, n: int = 1000, seed: int = 1) -> float:
    from iclr25.core.diffusion_at.classifier import digit_features
    from iclr25.core.diffusion_at.metrics import frechet_distance
    from iclr25.core.diffusion_probe.image import Denoiser, reverse_from

    den = Denoiser(state.ema.eval(), schedule.alpha_bar, clip=1.0)
    gen = torch.Generator().manual_seed(seed)
    x_T = torch.randn((n, *data.shape[1:]), generator=gen)
    with torch.no_grad():
        samples = reverse_from(den, x_T, schedule.num_steps - 1, None, 1.0, gen)
    state.ema.train()
    return frechet_distance(digit_features(samples), digit_features(data))


def save_ema(state, config, path: Path) -> None:
    from safetensors.torch import save

    from iclr25 import atomic
    from iclr25.core.diffusion_at.checkpoints import FORMAT
    from iclr25.output import to_jsonable

    tensors = {
        f"ema.{k}": v.detach().cpu().contiguous().clone() for k, v in state.ema.state_dict().items()
    }
    meta = {"format": FORMAT, "step": str(state.step), "config": json.dumps(to_jsonable(config))}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(path, save(tensors, metadata=meta))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=8000)
    parser.add_argument("--check-every", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    from iclr25.distributed_torch import process_group

    with process_group("cpu") as group:
        return train_until_target(args, group)


def train_until_target(args, group) -> int:
    """Train in chunks of ``--check-every`` steps until the FD target or ``--max-steps``;
    under torchrun, this rank's part (only rank 0 evaluates, prints and writes)."""
    from dataclasses import replace

    from iclr25.core.diffusion_at.data import load_digits
    from iclr25.core.diffusion_at.pipeline import default_config, make_schedule, train
    from iclr25.distributed_torch import DataParallel, from_main

    data = load_digits()
    config = default_config(
        data, data="digits", steps=args.check_every, seed=0, diffusion_steps=DIFFUSION_STEPS
    )
    schedule = make_schedule(config)
    parallel = DataParallel(group, config.batch_size) if group.active else None
    t0 = time.perf_counter()
    # the state keeps the DDP wrapper (state.parallel) for the later chunks
    trained = train(config, data, parallel=parallel)
    while True:
        fd = fid_of(trained.state, schedule, data.array) if group.is_main else None
        fd = from_main(group, fd)  # every rank stops at the same step
        if group.is_main:
            print(
                f"step {trained.state.step}: FD {fd:.1f} ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
        if fd <= TARGET_FD or trained.state.step >= args.max_steps:
            break
        config = replace(config, steps=trained.state.step + args.check_every)
        trained = train(config, data, state=trained.state)
    if not group.is_main:
        return 0
    save_ema(trained.state, config, args.out)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(
        json.dumps(
            {
                "steps": trained.state.step,
                "fd": fd,
                "seconds": time.perf_counter() - t0,
                "sha256": digest,
                "path": str(args.out),
            }
        )
    )
    return 0 if fd <= TARGET_FD else 1


if __name__ == "__main__":
    sys.exit(main())
