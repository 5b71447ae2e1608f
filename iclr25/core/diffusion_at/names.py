"""The values diffusion-at options accept, importable without torch (instant CLI checks)."""

OBJECTIVES = ("ddpm", "ct", "cd")  # DDPM; consistency training; consistency distillation
SCHEDULES = ("linear", "cosine")
#: replay and noise are controls of free AT: its replays with δ ≡ 0, or with a random δ
#: of the same norm
AT_METHODS = ("none", "fgsm", "pgd", "free", "replay", "noise")
NORMS = ("l2", "linf")
AT_TARGETS = ("eps", "x0")
SAMPLERS = ("ddim", "ddpm", "cm")
WEIGHTS = ("ema", "model")
DATASETS = ("8gaussians", "swissroll", "checkerboard", "digits")  # besides .npy / folders
VARIANTS = ("baseline", "at", "replay", "noise")  # the arms of `compare`
PRESETS = ("paper",)  # --preset: the official code's AT settings
