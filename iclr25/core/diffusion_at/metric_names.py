"""The metrics :mod:`.evaluation` reports, their headline and how tables name them.

Kept apart from :mod:`.evaluation` (which needs torch) so that verdicts and the docs
renderer, which read finished results, never import torch (re-exported there).
"""

from __future__ import annotations

PRIMARY = {"points": "sw", "image": "fd"}
METRICS = {
    "points": ("sw", "w2", "mmd"),
    "image": ("fd", "precision", "recall", "density", "coverage", "mmd", "sw"),
}
HIGHER_IS_BETTER = {"precision", "recall", "density", "coverage"}
#: how a metric is named in tables, by feature space (the key itself otherwise)
LABELS = {
    "coordinates": {"sw": "SW₂", "w2": "W₂", "mmd": "MMD²"},
    "digit-classifier": {"fd": "FD (digits-classifier features)", "mmd": "MMD² (features)"},
    "pixels": {"fd": "FD (pixels)", "mmd": "MMD² (pixels)"},
}
