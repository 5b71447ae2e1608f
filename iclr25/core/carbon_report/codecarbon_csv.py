"""CodeCarbon ``emissions.csv`` files as CodeCarbon writes them: read every release's columns,
append a row in the file's own columns.

Column sets (the field order of CodeCarbon's ``EmissionsData``, which is the CSV header):

- 2.3 (and 2.x before ``experiment_id``): 31 columns, ``timestamp`` ... ``pue``;
- 2.8 (2.4 to 2.8): ``experiment_id`` after ``run_id``;
- 3.x (current): ``water_consumed`` after ``energy_consumed``, the utilisation columns and
  ``wue`` — :data:`COLUMNS`, what ``track`` writes to a new file.

Meaning (CodeCarbon's): ``duration`` s; ``emissions`` kg CO2e; ``*_power`` W; ``cpu_energy``,
``gpu_energy``, ``ram_energy`` and their sum ``energy_consumed`` in kWh, **PUE included**
(CodeCarbon multiplies every measured energy by its ``pue`` setting, the ``pue`` column);
``water_consumed`` L. Rows of one ``run_id`` are cumulative (``flush()`` writes running
totals): the row with the longest duration counts. ``gpu_count`` is the number of GPUs the
run measured (empty on a machine without GPUs).

Reading (:func:`read_codecarbon`): a row that cannot be used (wrong number of cells, a
duration or energy that is not a non-negative number, no total) is skipped and counted with
its line number; an empty ``cpu_energy`` / ``gpu_energy`` / ``ram_energy`` cell leaves that
part unknown while ``energy_consumed`` still gives the row's total. The file is refused only
when no row is left. Columns no CodeCarbon release writes are kept (reported, not an error).

Energies come back as **IT energy** (the row's energy / its ``pue``), so that the site's PUE
applied by the accounting is not applied twice.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from pathlib import Path

from iclr25 import atomic
from iclr25.errors import InputError

_BASE = (
    "timestamp",
    "project_name",
    "run_id",
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
)
#: CodeCarbon 2.3.x (``codecarbon/output.py``, ``EmissionsData``)
COLUMNS_2_3 = (*_BASE, "on_cloud", "pue")
#: CodeCarbon 2.4 - 2.8 (``output_methods/emissions_data.py``): ``experiment_id`` added
COLUMNS_2_8 = (*_BASE[:3], "experiment_id", *_BASE[3:], "on_cloud", "pue")
#: CodeCarbon 3.x (current): water, utilisation and WUE columns
COLUMNS = (
    *_BASE[:3],
    "experiment_id",
    *_BASE[3:13],
    "water_consumed",
    *_BASE[13:],
    "cpu_utilization_percent",
    "gpu_utilization_percent",
    "ram_utilization_percent",
    "ram_used_gb",
    "on_cloud",
    "pue",
    "wue",
)
COLUMN_SETS = {"2.3": COLUMNS_2_3, "2.8": COLUMNS_2_8, "3.x": COLUMNS}
KNOWN = frozenset(COLUMNS)
PARTS = ("cpu", "gpu", "ram")
ENERGY_COLUMNS = ("energy_consumed", *(f"{p}_energy" for p in PARTS))
#: each kind of row problem, for messages
SKIPPED = ("malformed_rows", "bad_duration", "bad_energy", "no_total")
PROBLEM_TEXT = {
    "malformed_rows": "rows with another number of cells than the header",
    "bad_duration": "rows whose duration is not a non-negative number",
    "bad_energy": "rows with an energy that is not a non-negative number",
    "no_total": "rows with neither energy_consumed nor all of cpu/gpu/ram_energy",
    "missing_part": "rows with an empty cpu/gpu/ram_energy cell (their total is kept)",
    "bad_pue": "rows whose pue is not a number >= 1 (read as 1)",
    "superseded": "earlier cumulative rows of a run (the latest one counts)",
}


@dataclasses.dataclass
class CodeCarbonFile:
    """One emissions.csv: its runs (latest row of each), and what was skipped or assumed."""

    path: Path
    columns: list[str]
    release: str  # "2.3", "2.8", "3.x", or "unknown (...)" for another column set
    extra_columns: list[str]
    runs: list[dict]
    problems: dict[str, int]
    first_lines: dict[str, list[int]]

    def notes(self) -> list[str]:
        """One warning line per kind of problem, with its first line numbers (superseded
        cumulative rows are how CodeCarbon's flush() writes, so they are not warned about)."""
        out = []
        absent = [c for c in ENERGY_COLUMNS if c not in self.columns]
        if absent:
            out.append(f"{self.path}: no {', '.join(absent)} column: that energy is not counted")
        if self.extra_columns:
            out.append(
                f"{self.path}: columns no CodeCarbon release writes kept but not used: "
                + ", ".join(self.extra_columns)
            )
        for kind, count in self.problems.items():
            if kind == "superseded":
                continue
            lines = ", ".join(str(n) for n in self.first_lines.get(kind, []))
            done = ": skipped" if kind in SKIPPED else ""
            out.append(f"{self.path}: {count} {PROBLEM_TEXT[kind]}{done} (lines {lines})")
        return out


def header_release(columns: list[str]) -> tuple[str, list[str]]:
    """(release whose column set this header is, extra columns) — InputError when the
    header lacks what a CodeCarbon file needs."""
    if "duration" not in columns or not set(ENERGY_COLUMNS) & set(columns):
        raise InputError(
            "not a CodeCarbon emissions.csv header (it needs duration and energy_consumed "
            "or cpu/gpu/ram_energy)",
            "pass a file CodeCarbon wrote, or a power log",
        )
    extra = [c for c in columns if c not in KNOWN]
    known = tuple(c for c in columns if c in KNOWN)
    for release, cols in COLUMN_SETS.items():
        if known == cols:
            return release, extra
    return f"unknown ({len(known)} CodeCarbon columns)", extra


def _number(text: str | None) -> float | None:
    """The cell as a float; None when empty; NaN when not a finite number."""
    if text is None or not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) else math.nan


def _bad(value: float | None) -> bool:
    return value is not None and (math.isnan(value) or value < 0)


class _Tally:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.lines: dict[str, list[int]] = {}

    def add(self, kind: str, line: int) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        shown = self.lines.setdefault(kind, [])
        if len(shown) < 5:
            shown.append(line)


def _parse_row(cells: dict[str, str], line: int, tally: _Tally) -> dict | None:
    """One usable run row (energies in kWh, IT), or None (counted in ``tally``)."""
    duration = _number(cells.get("duration"))
    if duration is None or _bad(duration):
        tally.add("bad_duration", line)
        return None
    parts = {p: _number(cells.get(f"{p}_energy")) for p in PARTS}  # None: empty or no column
    present = [p for p in PARTS if f"{p}_energy" in cells]
    total = _number(cells.get("energy_consumed"))
    if any(_bad(v) for v in (*parts.values(), total)):
        tally.add("bad_energy", line)
        return None
    if total is None:
        if not present or any(parts[p] is None for p in present):
            tally.add("no_total", line)
            return None
        total = sum(parts[p] for p in present)  # the file's columns (energy_consumed absent)
    elif any(parts[p] is None for p in present):
        tally.add("missing_part", line)
    pue = _number(cells.get("pue"))
    if pue is None:
        pue = 1.0
    elif math.isnan(pue) or pue < 1.0:
        tally.add("bad_pue", line)
        pue = 1.0
    count = _number(cells.get("gpu_count"))
    return {
        "run_id": (cells.get("run_id") or "").strip() or f"line {line}",
        "line": line,
        "timestamp": cells.get("timestamp"),
        "duration_s": duration,
        "energy_kwh": total / pue,
        **{f"{p}_energy_kwh": (v / pue if v is not None else None) for p, v in parts.items()},
        "pue": pue,
        "gpu_count": int(count) if count is not None and not math.isnan(count) else 0,
        "gpu_model": (cells.get("gpu_model") or "").strip() or None,
        "codecarbon_version": (cells.get("codecarbon_version") or "").strip() or None,
    }


def read_codecarbon(path: Path) -> CodeCarbonFile:
    """The runs of a CodeCarbon emissions.csv (the latest row of each run_id)."""
    from iclr25.core.carbon_report.power_log import open_log

    path = Path(path)
    with open_log(path) as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise InputError(f"{path}: the CodeCarbon file is empty", "pass an emissions.csv with data")
    columns = [c.strip() for c in rows[0]]
    try:
        release, extra = header_release(columns)
    except InputError as exc:
        raise InputError(f"{path}: {exc.what}", exc.fix) from None
    tally, runs = _Tally(), {}
    for i, cells in enumerate(rows[1:]):
        line = i + 2
        if not any(c.strip() for c in cells):
            continue  # a blank line
        if len(cells) != len(columns):
            tally.add("malformed_rows", line)
            continue
        run = _parse_row(dict(zip(columns, cells, strict=True)), line, tally)
        if run is None:
            continue
        earlier = runs.get(run["run_id"])
        if earlier is not None:
            tally.add("superseded", line)
            if earlier["duration_s"] > run["duration_s"]:
                continue  # counters are cumulative: keep the latest row of each run
        runs[run["run_id"]] = run
    if not runs:
        kinds = ", ".join(f"{n} {PROBLEM_TEXT[k]}" for k, n in tally.counts.items())
        raise InputError(
            f"{path}: no usable CodeCarbon row ({kinds or 'no data rows'})",
            "fix the rows (durations and energies in kWh as numbers)",
        )
    return CodeCarbonFile(
        path, columns, release, extra, list(runs.values()), tally.counts, tally.lines
    )


# ---------------------------------------------------------------------------------------
# writing: one row, in the file's own columns
# ---------------------------------------------------------------------------------------
def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else repr(value)  # NaN -> empty
    return str(value)


def format_rows(rows: list[dict], columns: tuple[str, ...] | list[str], header: bool) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(columns)
    for row in rows:
        unknown = set(row) - KNOWN
        if unknown:
            raise ValueError(f"not CodeCarbon columns: {sorted(unknown)}")
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buffer.getvalue()


def check_appendable(path: Path) -> tuple[str, list[str], str]:
    """(text of ``path``, the columns a row is written in, the release) — "" and the current
    columns when the file is missing or empty; InputError unless it is a CodeCarbon file."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a folder", "give a file path for --emissions-csv")
    if not path.exists():
        return "", list(COLUMNS), "3.x"
    with open(path, encoding="utf-8", newline="") as fh:
        existing = fh.read()  # kept byte for byte: line endings, a BOM
    first = existing.lstrip("\ufeff").splitlines()[0] if existing.strip("\ufeff \r\n") else ""
    if not first:
        return existing, list(COLUMNS), "3.x"
    columns = [c.strip() for c in next(csv.reader([first]))]
    try:
        release, _ = header_release(columns)
    except InputError:
        raise InputError(
            f"{path}: exists with other columns than a CodeCarbon emissions.csv ({first[:80]!r})",
            "choose another --emissions-csv path",
        ) from None
    return existing, columns, release


def append_row(path: Path, row: dict) -> list[str]:
    """Append one row to ``path`` (created with CodeCarbon 3.x's header when missing) in
    the file's own columns; returns the row's non-empty fields the file has no column for."""
    existing, columns, _ = check_appendable(path)
    newline = "\r\n" if "\r\n" in existing[:4096] else "\n"
    if existing and not existing.endswith(("\n", "\r")):
        existing += newline
    text = format_rows([row], columns, header=not existing.strip())
    if newline != "\n":
        text = text.replace("\n", newline)
    atomic.write_text(Path(path), existing + text)
    return [k for k, v in row.items() if k not in columns and _cell(v) != ""]
