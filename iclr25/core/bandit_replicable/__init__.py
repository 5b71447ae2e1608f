"""List-replicable bandit algorithms (Chen, Pavan, Vinodchandran, Wang & Yang, ICLR 2025),
simulated at scale and checked against their guarantees.

Modules: one algorithm per file (``etc``, ``list_2k``, ``list_k_delta``, ``list_batched``,
``linear_batched``, ``ucb1``, ``successive_elimination``, ``thompson``,
``replicable_elimination``); the simulators
(``schedule`` for phase-based algorithms, aggregated or per round; ``sequential`` for
UCB1 / Thompson); ``environments``; ``traces`` (compact trace keys, list sizes);
``simulate`` (experiments, memory guard), ``sweep`` and ``lower_bound``.
"""
