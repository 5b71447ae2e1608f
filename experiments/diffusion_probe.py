"""Studies of `iclr25 diffusion-probe` (docs/diffusion-probe.md quotes them).

The headline: (v, m, s) = (9, 6, 3), depths 3–5, 2,000 samples, 4 rule instances, grid
step 0.05, both controls at equal budget, one study per noise. (Sized to run on a shared
2-core machine in about 15 CPU-minutes in all; the planned size was depths 3–6, 4,000
samples, 5 instances, step 0.025, about an hour. Pass the larger arguments to the CLI to
run it.) Its pass conditions are
fixed in :mod:`iclr25.core.diffusion_probe.probe` (``verdict``). The image study probes
the bundled digits DDPM against the Gaussian control. ``scripts/diffusion_probe_experiment.py``
runs them all.
"""

from experiments import Study

_RHM = (
    "diffusion-probe",
    "rhm",
    "--v",
    "9",
    "--m",
    "6",
    "--s",
    "3",
    "--depths",
    "3,4,5",
    "--samples",
    "2000",
    "--seeds",
    "4",
    "--levels",
    "0.05:0.95:0.05",
    "--controls",
    "markov,iid",
    "--workers",
    "2",
)

STUDIES = {
    f"diffusion-probe-rhm-{noise}": Study(
        args=(*_RHM, "--noise", noise),
        about=f"RHM (9,6,3), depths 3-5, {noise} noise, 2000 samples, 4 instances, "
        "Markov and iid controls",
    )
    for noise in ("flip", "mask", "soft")
}
STUDIES["diffusion-probe-threshold"] = Study(
    args=("diffusion-probe", "threshold", "--noise", "flip", "--de-seeds", "3"),
    about="density-evolution threshold of (9,6,3), flip noise, 3 DE seeds",
)
STUDIES["diffusion-probe-image"] = Study(
    args=("diffusion-probe", "image", "--samples", "128", "--times", "0.1:0.9:0.1"),
    about="the bundled digits DDPM, pixels, DDPM reverse process, Gaussian control "
    "(128 images at 9 times, about 100 s; the planned 512 images at 19 times was not run "
    "in this round)",
)
