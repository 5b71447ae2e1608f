"""diffusion-at: adversarial training of diffusion and consistency models against the
train/sample mismatch (Wang, Yi, Xue, Li, Liu, Qin, Ma — "Improved Diffusion-based
Generative Model with Better Adversarial Robustness", ICLR 2025).

One concern per module:

- ``schedules``: linear / cosine ᾱ_t and the closed forms of q(x_t | x_0);
- ``models``: time-embedded MLP (points) and small U-Net (images);
- ``adversarial``: the perturbation ball, projections, FGSM/PGD, the ε / x_0 targets;
- ``ddpm``: the ε-prediction objective; ``consistency``: CT and CD objectives;
- ``training``: the loop with the none / fgsm / pgd / free AT steps;
- ``samplers``: DDPM ancestral, DDIM, one-/two-step consistency sampling;
- ``data``: exact 2-D samplers, digits, .npy arrays, image folders;
- ``metrics`` and ``evaluation``: SW₂, exact W₂, MMD, Fréchet distance, precision/recall;
- ``classifier``: the digit classifier behind the digits Fréchet distance;
- ``mismatch``: q(x_t) against the sampler's p_θ(x_t), per timestep;
- ``checkpoints``: safetensors state, resume, refusal on mismatch;
- ``pipeline`` and ``compare``: train / sample / score, and baseline vs AT over seeds;
- ``names``: the option values (no torch), ``plots``: figures.

Importing this package is free: modules are imported where they are used.
"""
