"""The configurations of the style-check generator and SSL encoder, without torch.

Re-exported by :mod:`.generator` and :mod:`.ssl`; :mod:`.study` (whose ``headline`` the
docs renderer and the demo read from finished results) imports them from here, so reading
a result never pays for importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GeneratorConfig:
    size_px: int = 32  # works are resized to size_px x size_px (even: the U-Net halves it)
    width: int = 16  # U-Net base channels (~0.11 M parameters at 16)
    time_dim: int = 64
    schedule: str = "cosine"  # better than linear at small resolutions (Nichol & Dhariwal)
    diffusion_steps: int = 200  # T
    steps: int = 1200  # optimiser updates (the budget; the same for both models)
    batch_size: int = 32
    lr: float = 2e-3  # Adam
    ema_decay: float = 0.995  # sampling weights; warm-up min(decay, (1+n)/(10+n))
    sample_nfe: int = 25  # DDIM steps when sampling
    prediction: str = "v"  # what the network predicts: "v" (v = √ᾱ ε - σ x_0) or "eps"
    conditional: bool = True  # False: every label is the null class (the control)

    def __post_init__(self) -> None:
        if self.prediction not in ("v", "eps"):
            raise ValueError(f"prediction must be 'v' or 'eps', got {self.prediction!r}")
        if not 1 <= self.sample_nfe <= self.diffusion_steps:
            raise ValueError(f"sample_nfe must be within 1..{self.diffusion_steps}")


@dataclass(frozen=True)
class SSLConfig:
    size_px: int = 32  # input side; works are resized (shorter side) and centre-cropped
    steps: int = 400  # optimiser updates
    batch_size: int = 32  # works per minibatch (2 views each)
    lr: float = 2e-3
    temperature: float = 0.2  # τ of NT-Xent
    crop_scale: tuple[float, float] = (0.3, 1.0)  # share of the area a crop keeps
    brightness: float = 0.1  # views scaled by a factor in [1 - b, 1 + b]
    noise: float = 0.03  # σ of the pixel noise on [-1, 1]
    max_train_works: int = 4096  # larger corpora: a random subset of this many works
