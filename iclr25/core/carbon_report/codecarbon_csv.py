"""CodeCarbon-compatible ``emissions.csv``: the same columns, so existing dashboards read it.

Column meanings follow CodeCarbon: ``duration`` in s; ``emissions`` in kg CO2e;
``emissions_rate`` in kg/s; ``*_power`` in W (means over the run); ``*_energy`` and
``energy_consumed`` in kWh (IT energy, CPU + GPU + RAM; ``pue`` is its own column);
``water_consumed`` in L. Figures we cannot know (location, cloud) stay empty, never zero.
Appending to an existing file requires the same header, as CodeCarbon does; the file is
rewritten atomically (temp file + rename).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from iclr25 import atomic
from iclr25.errors import InputError

COLUMNS = (
    "timestamp",
    "project_name",
    "run_id",
    "experiment_id",
    "duration",
    "emissions",
    "emissions_rate",
    "cpu_power",
    "gpu_power",
    "ram_power",
    "cpu_energy",
    "gpu_energy",
    "ram_energy",
    "energy_consumed",
    "water_consumed",
    "country_name",
    "country_iso_code",
    "region",
    "cloud_provider",
    "cloud_region",
    "os",
    "python_version",
    "codecarbon_version",
    "cpu_count",
    "cpu_model",
    "gpu_count",
    "gpu_model",
    "longitude",
    "latitude",
    "ram_total_size",
    "tracking_mode",
    "cpu_utilization_percent",
    "gpu_utilization_percent",
    "ram_utilization_percent",
    "ram_used_gb",
    "on_cloud",
    "pue",
    "wue",
)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else repr(value)  # NaN -> empty
    return str(value)


def format_rows(rows: list[dict], header: bool) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(COLUMNS)
    for row in rows:
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise ValueError(f"not CodeCarbon columns: {sorted(unknown)}")
        writer.writerow([_cell(row.get(c)) for c in COLUMNS])
    return buffer.getvalue()


def check_appendable(path: Path) -> str:
    """The text of ``path`` ("" when missing or empty); InputError unless it is a
    CodeCarbon emissions.csv (same header) that a row can be appended to."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a folder", "give a file path for --emissions-csv")
    if not path.exists():
        return ""
    existing = path.read_text(encoding="utf-8")
    first = existing.splitlines()[0] if existing.strip() else ""
    if first and next(csv.reader([first])) != list(COLUMNS):
        raise InputError(
            f"{path}: exists with other columns than CodeCarbon's emissions.csv",
            "choose another --emissions-csv path",
        )
    return existing


def append_row(path: Path, row: dict) -> None:
    """Append one row to ``path`` (created with a header when missing)."""
    existing = check_appendable(path)
    if existing and not existing.endswith("\n"):
        existing += "\n"
    atomic.write_text(Path(path), existing + format_rows([row], header=not existing.strip()))
