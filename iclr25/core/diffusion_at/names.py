"""The values diffusion-at options accept, importable without torch (instant CLI checks)."""

OBJECTIVES = ("ddpm", "ct", "cd")  # DDPM; consistency training; consistency distillation
SCHEDULES = ("linear", "cosine")
AT_METHODS = ("none", "fgsm", "pgd", "free", "replay")  # replay: control, free without δ
NORMS = ("l2", "linf")
AT_TARGETS = ("eps", "x0")
SAMPLERS = ("ddim", "ddpm", "cm")
WEIGHTS = ("ema", "model")
DATASETS = ("8gaussians", "swissroll", "checkerboard", "digits")  # besides .npy / folders
