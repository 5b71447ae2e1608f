"""List-replicable bandit algorithms (Chen, Pavan, Vinodchandran, Wang & Yang, ICLR 2025),
simulated at scale and checked against their guarantees.

Modules: one algorithm per file (``etc``, ``list_2k``, ``list_k_delta``, ``list_batched``,
``linear_batched``, ``ucb1``, ``successive_elimination``, ``thompson``,
``replicable_elimination``); the simulators
(``schedule`` for phase-based algorithms, aggregated or per round; ``sequential`` for
UCB1 / Thompson); ``environments`` (with the stress families); ``traces`` (compact trace
keys, list sizes); ``guarantee`` (the binomial test of a list claim); ``simulate``
(experiments, memory guard); ``instances`` (the search for instances with many traces);
``cells`` (independent cells as tasks of ``iclr25.parallel``); ``sweep`` (regret against
T, compare), ``list_sweep`` (list size against the bound), ``fits`` (exponents past
exploration, crossings), ``lower_bound``; ``summaries`` (one-line headlines).
"""
