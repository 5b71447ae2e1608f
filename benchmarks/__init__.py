"""Measured comparisons with peers. Never part of the test run; `make bench` runs them.

Each ``bench_<name>.py`` module defines

- ``NAME``: a short name,
- ``TARGETS``: ``{ratio_name: (">=" or "<=", value)}`` — targets are ratios against a peer
  measured in the same run, never wall-clock thresholds,
- ``run(quick: bool) -> dict`` returning ``{"ratios": {...}, "details": {...}}``.

``python -m benchmarks [--only NAME ...] [--quick]`` runs them, prints a table of measured
ratio vs target, and writes ``benchmarks/results/<name>.json``.
"""
