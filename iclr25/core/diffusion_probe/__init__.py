"""Forward-backward diffusion as a probe of latent hierarchical structure (Sclocchi,
Favero, Levi & Wyart, ICLR 2025).

Modules: ``rhm`` (Random Hierarchy Model and rules files), ``noise`` (mask / flip / soft
leaf evidence), ``bp`` (the exact denoiser: belief propagation and posterior sampling),
``controls`` (Markov-chain and independent-token data with their exact denoisers),
``observables`` (χ, χ̃, C(r), C by tree height, class midpoint), ``density_evolution``
(the L → ∞ class-reconstruction threshold), ``probe`` (tasks, summary, verdict),
``pipeline`` (the commands end to end), ``image`` (the probe on image diffusion models)
and ``plots``.
"""
