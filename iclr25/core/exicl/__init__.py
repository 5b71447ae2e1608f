"""ExICL: exploratory inverse constraint learning with generative diffusion verifiers.

Zhao, Xu, Yue, Liu, "Toward Exploratory Inverse Constraint Inference with Generative
Diffusion Verifiers", ICLR 2025. "ICL" here is *inverse constraint learning* (recovering a
constraint from demonstrations that are optimal under it, the reward being known); it has
nothing to do with in-context learning (`iclr25 icl-order`).

One algorithm per file:

- :mod:`.spec`, :mod:`.grid`, :mod:`.point2d`: environments (grid2d, point2d) and their moves;
- :mod:`.demos`: demonstrations (.npz / .parquet) and their validation;
- :mod:`.shortest_paths`, :mod:`.verifier`: the exact feasibility verdict (Dijkstra);
- :mod:`.ddpm`, :mod:`.prior`, :mod:`.nominal`: the trajectory diffusion prior p_θ(τ);
- :mod:`.sampler`: guided reverse sampling (Eq. 9–10), batched over constraints;
- :mod:`.feasibility`: φ_ω(s, i) and the losses (Eq. 11–13);
- :mod:`.gdv`: the generative diffusion verifier's verdict;
- :mod:`.exicl`: the exploration loop (Algorithm 1);
- :mod:`.maxent_icl`: single-constraint max-entropy ICL (Malik et al. 2021), the baseline;
- :mod:`.metrics`, :mod:`.layouts`, :mod:`.pipeline`, :mod:`.experiment`: what the CLI runs.
"""
