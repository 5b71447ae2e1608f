"""Studies of `iclr25 carbon-report` whose documents docs/carbon-report.md quotes."""

from __future__ import annotations

from experiments import Study

STUDIES = {
    "carbon-report-reproduce": Study(
        args=("carbon-report", "reproduce"),
        about="the paper's printed per-row figures recomputed from its printed per-row inputs",
    ),
    "carbon-report-inference": Study(
        args=("carbon-report", "inference"),
        about="the paper's deployment example (OLMo 2 7B, 1 req/s): per-request CO2e, break-even",
    ),
    "carbon-report-power-example": Study(
        args=("carbon-report", "power", "--datacenter", "texas"),
        about="the bundled synthetic power log (2 H100s, 40 min): energy, dips, power swings",
    ),
    "carbon-report-estimate-example": Study(
        args=("carbon-report", "estimate"),
        about="the bundled manifest: the paper's final training runs with printed inputs",
    ),
}
