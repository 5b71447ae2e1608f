"""Measured comparisons with peers. Never part of the test run; `make bench` runs them.

Each ``bench_<name>.py`` module defines

- ``NAME``: a short name (the results file is ``benchmarks/results/<NAME>.json``),
- ``TARGETS``: ``{name: harness.Target(op, value, why)}``, declared before anything runs —
  ratios against a peer measured in the same run, never wall-clock thresholds,
- ``run(report: harness.Report) -> None``: times both sides through ``report.time``
  (interleaved, same statistic) and records each target with ``report.check``;
  ``report.quick`` asks for small sizes.

``python -m benchmarks [--only NAME ...] [--quick]`` runs them, prints every target as met /
not met / not comparable / not measured, and writes the results with their provenance.
"""
