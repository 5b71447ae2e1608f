"""The diffusion-probe headline experiment: every study of experiments/diffusion_probe.py.

    python scripts/diffusion_probe_experiment.py [NAME ...]

Runs the studies through ``python -m experiments run`` (each writes
``experiments/results/<name>.json`` with its provenance), then renders the docs
(``python -m docs``). About 15 CPU-minutes for the three RHM studies.
"""

from __future__ import annotations

import subprocess
import sys

from experiments.diffusion_probe import STUDIES


def main(argv: list[str]) -> int:
    names = argv or sorted(STUDIES)
    code = subprocess.call([sys.executable, "-m", "experiments", "run", *names])
    if code == 0:
        code = subprocess.call([sys.executable, "-m", "docs"])
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
