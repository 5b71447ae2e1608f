"""PN-GAIL: imitation from imperfect demonstrations (Liu, Fu, Tang, Chen, Dong, ICLR 2025).

Demonstrations mix optimal and non-optimal behaviour, p_d = α p_opt + (1 − α) p_non; a
pair's confidence r(x) = α p_opt(x) / p_d(x) is known for a few pairs only. PN-GAIL's
discriminator counts each demonstration as positive with weight r and as negative with
weight 1 − r, so the policy imitates the confident part and moves away from the rest.

| module | what |
|---|---|
| ``loss_<method>`` (gail, 2iwil, ic_gail, wgail, pn_gail) | one discriminator loss each |
| ``discriminator`` | f_ω (MLP 2×100 tanh), the method registry and one update |
| ``confidence`` | balanced and 2IWIL semi-conf classifiers for unlabelled pairs |
| ``pendulum``, ``envs`` | batched numpy Pendulum-v1 as an SB3 VecEnv; gymnasium ids |
| ``expert``, ``demos``, ``demo_files`` | bundled SAC expert, the demonstration generator, files |
| ``trainer`` | TRPO (sb3-contrib) with batched reward relabelling and GAE |
| ``bc`` | behavioural cloning, plain and confidence-weighted |
| ``evaluation`` | normalised return on 32 fixed episodes |
| ``fixed_point`` | closed-form fixed points and tabular adversarial play |
| ``pipeline``, ``study``, ``reports`` | shared steps, the headline comparison, result dicts |

Symbols: D = σ(f_ω) = P(agent | s, a) (agent label 1, demonstrations 0); reward
r̃ = −log D; r confidence; B = p_d·r, N = p_d·(1 − r) positive and negative masses.
"""
