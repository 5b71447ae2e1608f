"""Port-Hamiltonian deep graph networks (Heilig et al., ICLR 2025) and their baselines.

``graphs``: edge lists, sparse aggregation, transfer topologies; ``phdgn``: PH-DGN_C and
PH-DGN; ``baselines``: GCN, GIN, A-DGN, GraphCON and the node-wise MLP control;
``energy``: energy conservation and symplecticity of the step; ``transfer``: the
long-range copy task with its pass conditions; ``dataset``: reading a user's graphs
(CSV, NPZ, torch/PyG) with every input check; ``fit``: training and applying a model at
node or graph level (sum ‖ max ‖ mean pooling + MLP).
"""
