"""PI-DION: physics-informed deep inverse operator networks (Cho & Son, ICLR 2025).

The method (:mod:`.model`, :mod:`.train`) and the exact references it is measured
against: a Matérn GRF generator (:mod:`.grf`), a fine-grid finite-difference solver
(:mod:`.fd`), sensors and noise (:mod:`.problem`), the exact Bayes posterior mean
(:mod:`.bayes`) and Tikhonov with the discrepancy principle or GCV (:mod:`.tikhonov`).
The study that compares them is :mod:`.compare`. 1-D linear PDEs; the 2-D building
blocks :mod:`.fd2d` (FD by sine transform), :mod:`.grf2d` (Matérn GRF by circulant
embedding), :mod:`.bayes2d` (the 2-D generator and exact Bayes mean) and
:mod:`.tikhonov2d` serve `generate --dim 2` and `solve --dim 2`; the 2-D network
:mod:`.model2d` exists but is not trained or wired yet. The nonlinear 1-D darcy problem
(−(a u')' = 1, a = exp(g)): forward model and generator :mod:`.darcy`, Tikhonov by
Gauss–Newton :mod:`.darcy_tikhonov`, the network :mod:`.darcy_model`, :mod:`.darcy_solve`
and the study :mod:`.darcy_compare`.
"""
