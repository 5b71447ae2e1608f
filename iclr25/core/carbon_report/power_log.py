"""Streaming readers for GPU power logs: nvidia-smi CSV, plain CSV/Parquet, CodeCarbon.

Formats (detected from the header, or the Parquet magic bytes):

- ``nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv[,nounits]``: columns
  ``timestamp``, a GPU id (``index``, else ``uuid`` or ``pci.bus_id``) and ``power.draw``
  (or ``power.draw.instant`` / ``power.draw.average``) with units in the header and values
  (``612.34 W``). Extra columns are ignored; a ``name`` column names the GPU model.
- plain CSV or Parquet: ``timestamp`` (epoch seconds or ISO 8601), optional ``gpu``, and
  ``power_w`` (or ``power_kw`` / ``power_mw``).
- CodeCarbon ``emissions.csv``: one row per run (or per save), with cumulative CPU, GPU
  and RAM energies in kWh; read by :mod:`codecarbon_csv` as per-run counters.

GPUs: an id column (``index``, ``uuid``, ``pci.bus_id``, ``gpu``, or ``gpu_column``) names
each row's GPU; without one, :mod:`interleave` reads how many GPUs the rows interleave from
the timestamps (or takes ``gpus``), and checks every later row against that layout.

CSV is read with pyarrow's streaming reader in blocks (bounded memory, one block at a time);
every column arrives as raw bytes and is converted here (times by :mod:`timestamps`, power
by :mod:`power_values`), so a bad value costs one row, not the file. Each batch gives
seconds since the file's origin (an integer second near the first sample), dense GPU ids
and watts; a row that cannot be used has NaN power and is counted under a kind
(``malformed_rows``, ``missing_power`` for ``[N/A]``, ``bad_power``, ``negative_power``)
with its line number. ``strict`` turns the first such row into an InputError naming the
file and line. ``.gz`` and ``.bz2`` files are decompressed while streaming.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from iclr25.core.carbon_report import interleave
from iclr25.core.carbon_report.arrow_numpy import to_numpy
from iclr25.core.carbon_report.interleave import Layout
from iclr25.core.carbon_report.power_values import UNIT_FACTORS, as_text, parse_power
from iclr25.core.carbon_report.timestamps import parse_timestamps, string_parts
from iclr25.errors import InputError

# CSV block size (768 KiB, ~21k nvidia-smi rows). Arrow's streaming CSV reader reads up to
# 32 blocks ahead on its I/O thread (a fixed queue, not an option: ARROW-12090), so about
# 32 blocks of raw text are held at once: 24 MiB here, 48 MiB with 1.5 MiB blocks, which
# let the peak RSS climb with the log up to ~50 MB files. Smaller blocks cost per-block
# overhead: 512 KiB is ~10% slower, 768 KiB as fast as 1.5 MiB on a 10^7-row log.
BLOCK_BYTES = 3 << 18
PARQUET_BATCH_ROWS = 262_144
GPU_ID_COLUMNS = ("index", "uuid", "pci.bus_id", "gpu", "gpu_index", "device")
POWER_COLUMNS = ("power.draw", "power.draw.instant", "power.draw.average")


@dataclasses.dataclass
class Problems:
    """Rows of one file that could not be used, by kind, with their first line numbers."""

    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    first: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def add(self, kind: str, count: int, where: list[str]) -> None:
        if count <= 0:
            return
        self.counts[kind] = self.counts.get(kind, 0) + int(count)
        shown = self.first.setdefault(kind, [])
        shown.extend(where[: max(0, 5 - len(shown))])


@dataclasses.dataclass
class SampleBatch:
    t_s: np.ndarray  # (n,) seconds since the file's origin
    gpu: np.ndarray  # (n,) dense GPU ids (int64), -1 where the row is unusable
    power_w: np.ndarray  # (n,) watts; NaN where the row is unusable
    row0: int  # index of the first row among the file's data rows (for line numbers)


KIND_TEXT = {
    "malformed_rows": "malformed rows",
    "missing_power": "power values missing ([N/A])",
    "bad_power": "power values that are not numbers",
    "negative_power": "negative power values",
    "converted_units": "power values in another unit than the column's",
    "duplicate_timestamps": "samples repeating a GPU's previous timestamp",
    "out_of_order": "samples earlier than a GPU's previous one",
    "repeated_header": "repeated header lines (concatenated logs?)",
}


def open_log(path: Path, mode: str = "rt"):
    """A log file for reading, decompressing ``.gz`` / ``.bz2`` (as pyarrow's reader does)."""
    import bz2
    import gzip

    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(Path(path).suffix.lower(), open)
    if "b" in mode:
        return opener(path, mode)
    return opener(path, mode, encoding="utf-8-sig", errors="replace", newline="")


def detect_format(path: Path) -> str:
    """``nvidia-smi``, ``plain``, ``parquet`` or ``codecarbon`` (InputError otherwise)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such log file", "pass the path of a power log")
    try:
        with open_log(path, "rb") as fh:
            head = fh.read(65536)
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot be read ({exc})", "check the file") from None
    if not head.strip():
        raise InputError(f"{path}: the log is empty", "pass a log with a header and samples")
    if head[:4] == b"PAR1":
        return "parquet"
    header = head.splitlines()[0].decode("utf-8-sig", errors="replace")
    names = [_clean(c) for c in header.split(",")]
    energy = {"energy_consumed", "cpu_energy", "gpu_energy", "ram_energy"} & set(names)
    if "duration" in names and energy and ("run_id" in names or "codecarbon_version" in names):
        return "codecarbon"
    if "timestamp" in names and any(n.split(" ")[0] in POWER_COLUMNS for n in names):
        return "nvidia-smi"
    if "timestamp" in names and any(_power_unit(n) for n in names):
        return "plain"
    raise InputError(
        f"{path}: unrecognised header {header.strip()[:120]!r}",
        "use nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv, a CodeCarbon "
        "emissions.csv, or a CSV/Parquet with columns timestamp,gpu,power_w",
    )


def _clean(name: str) -> str:
    return name.strip().strip('"').lower()


def _power_unit(name: str) -> float | None:
    """Unit factor of a plain power column name (power_w, power_kw, power_mw), else None."""
    match = re.fullmatch(r"power_(mw|w|kw)", name)
    return UNIT_FACTORS[match.group(1)] if match else None


HEADER_UNITS = {"W": 1.0, "w": 1.0, "mW": 1e-3, "kW": 1e3, "KW": 1e3, "kw": 1e3}


def _header_unit(name: str, path: Path) -> float:
    """Unit factor of a header like ``power.draw [W]`` (case matters: mW is not MW)."""
    match = re.search(r"\[([^\]]*)\]", name)
    if not match:
        return 1.0
    unit = match.group(1).strip()
    if unit not in HEADER_UNITS:
        raise InputError(
            f"{path}: the power column {name.strip()!r} is in {unit!r}",
            "give power in W, mW or kW (as nvidia-smi's power.draw [W])",
        )
    return HEADER_UNITS[unit]


# ---------------------------------------------------------------------------------------
# readers
# ---------------------------------------------------------------------------------------
class PowerLogReader:
    """One power log (CSV or Parquet) as a stream of :class:`SampleBatch`."""

    def __init__(
        self,
        path: Path,
        fmt: str,
        strict: bool = False,
        block_bytes: int = BLOCK_BYTES,
        gpus: int | None = None,
        gpu_column: str | None = None,
    ):
        self.path = Path(path)
        self.format = fmt
        self.strict = strict
        self.block_bytes = block_bytes
        self.gpus = gpus  # GPUs per file (--gpus), for logs without an id column
        self.gpu_column = gpu_column  # the column naming the GPU (--gpu-column)
        self.layout: Layout | None = None  # how rows map to GPUs (no id column)
        self._sample_rows = 0  # rows that take a GPU slot (not blank, not a header)
        self._layout_carry: tuple[int, float] | None = None
        self.problems = Problems()
        self.gpu_labels: list[str] = []  # dense id -> label
        self._label_ids: dict[str, int] = {}
        self.gpu_names: dict[str, str] = {}  # label -> model name printed in the log
        self.origin_s: int | None = None
        self.rows_read = 0
        self._invalid_lines: list[int] = []
        self._strict_first: tuple[int, str] | None = None
        self._columns = self._read_columns()

    # -- header ------------------------------------------------------------------------
    def _read_columns(self) -> dict:
        if self.format == "parquet":
            import pyarrow.parquet as pq

            try:
                names = pq.ParquetFile(self.path).schema_arrow.names
            except Exception as exc:  # noqa: BLE001 - any pyarrow failure is a bad file
                raise InputError(
                    f"{self.path}: not a readable Parquet file ({exc})", "check the file"
                ) from None
        else:
            with open_log(self.path) as fh:
                names = next(csv.reader([fh.readline()]))
        return self._roles(names)

    def _roles(self, names: list[str]) -> dict:
        clean = [_clean(n) for n in names]
        roles = {"names": names, "clean": clean}
        roles["time"] = self._pick(names, clean, ("timestamp", "time"), "a timestamp column")
        roles["power"], roles["unit"] = self._power_column(names, clean)
        gpu = next((names[clean.index(c)] for c in GPU_ID_COLUMNS if c in clean), None)
        if self.gpu_column is not None:
            wanted = _clean(self.gpu_column)
            if wanted not in clean:
                raise InputError(
                    f"{self.path}: no column {self.gpu_column!r} (columns: {', '.join(names)})",
                    "give --gpu-column one of the log's columns",
                )
            gpu = names[clean.index(wanted)]
        roles["gpu"] = gpu
        roles["name"] = names[clean.index("name")] if "name" in clean else None
        return roles

    def _power_column(self, names: list[str], clean: list[str]) -> tuple[str, float]:
        """The power column (nvidia-smi names by priority, else power_w/kw/mw) and its unit."""
        bases = [c.split(" ")[0] for c in clean]
        for wanted in POWER_COLUMNS:
            if wanted in bases:
                i = bases.index(wanted)
                return names[i], _header_unit(names[i], self.path)
        for i, c in enumerate(clean):
            if _power_unit(c):
                return names[i], _power_unit(c)
        raise InputError(f"{self.path}: no power column", "name it power_w (or power.draw [W])")

    def _pick(self, names, clean, wanted, what) -> str:
        for w in wanted:
            if w in clean:
                return names[clean.index(w)]
        raise InputError(
            f"{self.path}: no {what} (columns: {', '.join(names)})", "add a timestamp column"
        )

    # -- line numbers ------------------------------------------------------------------
    def line_number(self, row: int) -> int:
        """Physical line (CSV) or 1-based row (Parquet) of a data row index."""
        if self.format == "parquet":
            return row + 1
        line = row + 2
        for bad in self._invalid_lines:  # sorted: each skipped physical line shifts the rest
            if bad <= line:
                line += 1
            else:
                break
        return line

    def where(self, row: int) -> str:
        """``path line N`` (CSV) or ``path row N`` (Parquet) of a data row index."""
        unit = "row" if self.format == "parquet" else "line"
        return f"{self.path} {unit} {self.line_number(row)}"

    def record(self, kind: str, rows: np.ndarray) -> None:
        """Count rows of one kind of problem; with strict, remember the first for an error."""
        if len(rows) == 0:
            return
        if self.strict and kind != "converted_units":
            line = self.line_number(int(rows[0]))
            if self._strict_first is None or line < self._strict_first[0]:
                self._strict_first = (line, KIND_TEXT.get(kind, kind))
            return
        self.problems.add(kind, len(rows), [self.where(int(r)) for r in rows[:5]])

    def _raise_strict(self) -> None:
        if self._strict_first is not None:
            line, what = self._strict_first
            unit = "row" if self.format == "parquet" else "line"
            raise InputError(
                f"{self.path} {unit} {line}: {what}",
                "fix or remove the row, or drop --strict to skip and count such rows",
            )

    # -- batches -------------------------------------------------------------------------
    def batches(self) -> Iterator[SampleBatch]:
        source = self._parquet_batches() if self.format == "parquet" else self._csv_batches()
        for table in source:
            if len(table) == 0:
                self._raise_strict()
                continue
            batch = self._convert(table)
            self._raise_strict()
            yield batch
            self.rows_read += len(table)
        self._raise_strict()

    def _csv_batches(self):
        import pyarrow as pa
        import pyarrow.csv as pcsv

        names = self._columns["names"]
        keep = [
            c for c in (self._columns["time"], self._columns["gpu"], self._columns["power"]) if c
        ]

        def on_invalid(row) -> str:
            if row.number is not None:
                self._invalid_lines.append(int(row.number))
                if self.strict:
                    if self._strict_first is None or row.number < self._strict_first[0]:
                        self._strict_first = (
                            int(row.number),
                            "malformed row (wrong number of columns)",
                        )
                else:
                    self.problems.add("malformed_rows", 1, [f"{self.path} line {row.number}"])
            return "skip"

        types = {c: pa.binary() for c in keep}  # no UTF-8 validation of every cell
        reader = pcsv.open_csv(
            self.path,
            read_options=pcsv.ReadOptions(
                use_threads=False, block_size=self.block_bytes, skip_rows=1, column_names=names
            ),
            parse_options=pcsv.ParseOptions(
                invalid_row_handler=on_invalid, ignore_empty_lines=False
            ),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=keep),
        )
        try:
            yield from reader
        except pa.ArrowInvalid as exc:
            raise InputError(
                f"{self.path}: cannot be read as CSV ({exc})", "check the file"
            ) from None

    def _parquet_batches(self):
        import pyarrow.parquet as pq

        keep = [
            c for c in (self._columns["time"], self._columns["gpu"], self._columns["power"]) if c
        ]
        yield from pq.ParquetFile(self.path).iter_batches(
            batch_size=PARQUET_BATCH_ROWS, columns=keep
        )

    def _convert(self, table) -> SampleBatch:
        n = len(table)
        time_col = table.column(self._columns["time"])
        if self.origin_s is None:
            first = parse_timestamps(time_col.slice(0, min(n, 4096)))
            finite = first[np.isfinite(first)]
            if len(finite) == 0 and n > 4096:  # a long preamble of bad rows: look further
                first = parse_timestamps(time_col)
                finite = first[np.isfinite(first)]
            if len(finite):
                self.origin_s = int(math.floor(finite.min()))
        t = parse_timestamps(time_col, self.origin_s or 0)
        watts, kinds = parse_power(table.column(self._columns["power"]), self._columns["unit"])
        no_time = np.isnan(t)
        blank, header = self._skip_rows(table) if no_time.any() else (None, None)
        skip = blank | header if blank is not None else np.zeros(n, bool)
        if self._columns["gpu"] is not None:
            gpu = self._gpu_ids(table, n)
        else:
            gpu = self._layout_ids(t, skip)
        if not (kinds or no_time.any() or (gpu < 0).any()):
            return SampleBatch(t, gpu, watts, self.rows_read)  # every row usable
        malformed = (no_time | (gpu < 0)) & ~skip
        rows = np.arange(self.rows_read, self.rows_read + n)
        self.record("malformed_rows", rows[malformed])
        if header is not None:
            self.record("repeated_header", rows[header])
        usable = ~(malformed | skip)
        for kind, mask in kinds.items():
            self.record(kind, rows[mask & usable])
        bad = ~usable | np.isnan(watts)
        if bad.any():
            watts = np.where(bad, np.nan, watts)
            gpu = np.where(bad, -1, gpu)
        return SampleBatch(t, gpu, watts, self.rows_read)

    def _skip_rows(self, table) -> tuple[np.ndarray, np.ndarray]:
        """(blank rows, repeated header lines) of a batch: rows that are no sample."""
        import pyarrow.compute as pc

        blank = None
        for name in table.column_names:
            col = as_text(table.column(name)).fill_null("")
            empty = to_numpy(pc.equal(pc.utf8_trim_whitespace(col), ""))
            blank = empty if blank is None else blank & empty
        time_text = as_text(table.column(self._columns["time"])).fill_null("")
        stamp = pc.utf8_lower(pc.utf8_trim(time_text, characters=' "'))
        header = to_numpy(pc.equal(stamp, _clean(self._columns["time"])))
        return blank, header & ~blank

    def _layout_ids(self, t: np.ndarray, skip: np.ndarray) -> np.ndarray:
        """GPU ids of a batch of a log without an id column, from its layout (decided on
        the first batch, checked on every batch)."""
        sample = ~skip
        slots = self._sample_rows + np.cumsum(sample) - 1  # (n,) GPU slot of each row
        if self.layout is None:
            probe = t[sample]
            if self.gpus:
                self.layout = interleave.given(self.gpus, probe)
            else:
                self.layout = interleave.detect(probe, str(self.path))
            for k in range(self.layout.gpus):
                self._dense_id(str(k))
        gpu = np.where(sample, self.layout.gpu_of(slots), -1)
        if self.layout.skew_s is not None and self.layout.gpus > 1:
            rows = np.flatnonzero(sample)
            bad, self._layout_carry = interleave.check(
                self.layout, slots[rows], t[rows], self._layout_carry
            )
            if len(bad):
                raise InputError(
                    f"{self.where(self.rows_read + int(rows[bad[0]]))}: the row breaks the "
                    f"log's layout ({self.layout.how}, read from its first rows): a GPU's "
                    "line is missing or extra",
                    interleave.FIX,
                )
        self._sample_rows += int(sample.sum())
        return gpu

    def _gpu_ids(self, table, n: int) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        column = self._columns["gpu"]
        values = table.column(column)
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if _clean(column) == "index" and pa.types.is_binary(values.type) and not values.null_count:
            ids = self._index_ids(values)
            if ids is not None:
                return ids
        encoded = pc.dictionary_encode(values.cast(pa.string()))
        lookup = np.array(
            [self._label_id(v) for v in encoded.dictionary.to_pylist()] + [-1], dtype=np.int64
        )
        indices = to_numpy(encoded.indices.fill_null(len(lookup) - 1))
        return lookup[indices]

    def _index_ids(self, values) -> np.ndarray | None:
        """Dense ids of an nvidia-smi ``index`` column whose cells all have one width
        (`` 0`` ... `` 7``), parsed from the bytes; None to fall back to the general path."""
        offsets, data = string_parts(values)
        width = int(offsets[1] - offsets[0]) if len(offsets) > 1 else 0
        if not 1 <= width <= 4 or (np.diff(offsets) != width).any():
            return None
        cells = data[offsets[0] : offsets[-1]].reshape(-1, width)  # (n, width) bytes
        digit = (cells - np.uint8(48)) <= 9  # uint8 wraps below '0'
        if not (digit | (cells == 32)).all() or not digit[:, -1].all():
            return None  # something other than right-aligned digits: general path
        number = np.where(digit, cells - np.uint8(48), 0).astype(np.int64)  # spaces -> 0
        for k in range(1, width):
            number[:, k] += number[:, k - 1] * 10
        index = number[:, -1]
        if not hasattr(self, "_index_lut") or index.max() >= len(self._index_lut):
            grown = np.full(int(index.max()) + 1, -1, dtype=np.int64)
            old = getattr(self, "_index_lut", grown[:0])
            grown[: len(old)] = old
            self._index_lut = grown
        ids = self._index_lut[index]
        if (ids < 0).any():
            for value in np.unique(index[ids < 0]).tolist():
                self._index_lut[value] = self._dense_id(str(value))
            ids = self._index_lut[index]
        return ids

    def _label_id(self, raw: str | None) -> int:
        label = (raw or "").strip()
        if not label:
            return -1
        if _clean(self._columns["gpu"]) == "index" and not label.isdigit():
            return -1
        return self._dense_id(label)

    def _dense_id(self, label: str) -> int:
        if label not in self._label_ids:
            self._label_ids[label] = len(self.gpu_labels)
            self.gpu_labels.append(label)
        return self._label_ids[label]

    def read_gpu_names(self, max_lines: int = 4096) -> dict[str, str]:
        """GPU model names per GPU label from a ``name`` column in the first lines."""
        if self._columns["name"] is None or self.format == "parquet":
            return {}
        names = self._columns["names"]
        gpu_col, name_col = self._columns["gpu"], self._columns["name"]
        found: dict[str, str] = {}
        with open_log(self.path) as fh:
            rows = csv.reader(fh)
            next(rows, None)
            for i, row in enumerate(rows):
                if i >= max_lines or len(row) != len(names):
                    break
                label = row[names.index(gpu_col)].strip() if gpu_col else "0"
                found.setdefault(label, row[names.index(name_col)].strip())
        self.gpu_names = found
        return found
