"""Regenerate the bundled example power log of `iclr25 carbon-report power`.

    .venv/bin/python scripts/make_carbon_report_example.py

Writes iclr25/data/carbon_report/example_power_log.csv: 2 H100 GPUs of one node for 40
minutes, sampled about once a second, with two checkpoint dips, short data-loading
stalls and one 90-second logger outage (a gap the command reports and does not bridge).
Seeded: the same file every time. The generating parameters go next to it, in
example_power_log.json, which `power` reports when it analyses the bundled example.
"""

import dataclasses
import json
from pathlib import Path

from iclr25.core.carbon_report.synthetic import TraceConfig, write_nvidia_smi_log

OUT = Path(__file__).resolve().parents[1] / "iclr25/data/carbon_report/example_power_log.csv"
CONFIG = TraceConfig(
    gpus=2,
    duration_s=2400.0,
    interval_s=1.0,
    checkpoint_every_s=1000.0,
    checkpoint_s=60.0,
    ramp_s=3.0,
    gaps=((1500.0, 90.0),),
    seed=20250424,
)

SIDECAR = OUT.with_suffix(".json")


def parameters() -> dict:
    """What example_power_log.json holds: that the log is synthetic, and how it was drawn."""
    return {
        "synthetic": True,
        "generator": "iclr25.core.carbon_report.synthetic.write_nvidia_smi_log",
        "script": "scripts/make_carbon_report_example.py",
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "trace": dataclasses.asdict(CONFIG),
    }


if __name__ == "__main__":
    rows = write_nvidia_smi_log(OUT, CONFIG)
    SIDECAR.write_text(json.dumps(parameters(), indent=2) + "\n")
    print(f"wrote {rows} rows to {OUT} ({OUT.stat().st_size / 1024:.0f} KiB) and {SIDECAR.name}")
