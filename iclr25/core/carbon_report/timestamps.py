"""Vectorised timestamp parsing for power logs (seconds as float64, NaN where invalid).

nvidia-smi prints local wall-clock time as ``YYYY/MM/DD HH:MM:SS.fff`` (23 characters);
our own logs and most tools write ISO 8601. Parsing 10^7 such strings one by one in Python
would dominate the run time, so fixed-width strings are parsed straight from the Arrow
string buffer with numpy: the bytes of all rows of one width form a ``(n, width)`` uint8
matrix whose digit columns give year ... fraction. Calendar days use the days-from-civil
algorithm (H. Hinnant, "chrono-compatible low-level date algorithms"). Rows of other shapes
(time zones, numbers of seconds) go through Arrow's ISO 8601 cast or a float cast, and rows
that parse nowhere come back as NaN for the caller to count.

Times without a zone are taken as UTC: only differences matter for integration, but a
daylight-saving change inside a local-time log shows up as out-of-order samples.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.carbon_report.arrow_numpy import to_numpy

_MIN_WIDTH, _MAX_WIDTH = 19, 30  # YYYY?MM?DD?HH:MM:SS, then up to 9 fraction digits, Z
_DIGIT_POS = np.array([0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18])


def days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of the proleptic Gregorian date (y, m, d), vectorised."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = np.where(m > 2, m - 3, m + 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _parse_fixed(rows: np.ndarray, origin_s: int = 0) -> np.ndarray:
    """(n, width) uint8 rows ``YYYY?MM?DD?HH:MM:SS[.f...][Z]`` -> seconds since ``origin_s``.

    Rows whose separators differ from the first row's, or with a non-digit where a digit
    belongs, or an impossible date or time, come back as NaN."""
    n, width = rows.shape
    ok = np.ones(n, dtype=bool)
    if rows[0, -1] == ord("Z"):  # the UTC designator (``track`` writes it): parse the rest
        ok = rows[:, -1] == ord("Z")
        rows, width = rows[:, :-1], width - 1
    if width < _MIN_WIDTH:
        return np.full(n, np.nan)
    digit_pos = np.concatenate([_DIGIT_POS, np.arange(20, width)])
    ok &= ((rows[:, digit_pos] - np.uint8(48)) <= 9).all(axis=1)  # uint8 wraps below '0'
    sep_pos = [4, 7, 10, 13, 16] + ([19] if width > _MIN_WIDTH else [])
    first = rows[0, sep_pos]
    if not (chr(first[0]) in "/-" and first[1] == first[0] and chr(first[2]) in " T"):
        return np.full(n, np.nan)
    if not (first[3] == first[4] == ord(":") and (width == _MIN_WIDTH or first[5] == ord("."))):
        return np.full(n, np.nan)
    ok &= (rows[:, sep_pos] == first).all(axis=1)
    hms = rows[:, [11, 14, 17]].astype(np.int64) * 10 + rows[:, [12, 15, 18]] - 528  # (n, 3)
    ok &= (hms < np.array([24, 60, 61])).all(axis=1)
    second_of_day = (hms[:, 0] * 60 + hms[:, 1]) * 60 + hms[:, 2]
    ticks, unit = np.zeros(n, dtype=np.int64), 1
    for k in range(20, width):  # Horner over the fraction digits: exact integer ticks
        ticks = ticks * 10 + (rows[:, k].astype(np.int64) - 48)
        unit *= 10
    same_day = (rows[:, :10] == rows[0, :10]).all()
    date = (rows[:1, :10] if same_day else rows[:, :10]).astype(np.int64) - 48  # (1|n, 10)
    year = date[:, 0] * 1000 + date[:, 1] * 100 + date[:, 2] * 10 + date[:, 3]
    month, day = date[:, 5] * 10 + date[:, 6], date[:, 8] * 10 + date[:, 9]
    ok &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)
    whole_s = days_from_civil(year, month, day) * 86400 + second_of_day - origin_s  # exact
    seconds = whole_s.astype(np.float64) + ticks / float(unit)
    seconds[~ok] = np.nan
    return seconds


def _parse_repeated(block: np.ndarray, width: int, origin_s: int) -> np.ndarray:
    """Parse only rows that differ from the row before (multi-GPU logs repeat timestamps).

    ``block`` is the contiguous bytes of ``n`` rows of ``width`` bytes each."""
    rows = block.reshape(-1, width)  # (n, width)
    n = len(rows)
    if n < 2:
        return _parse_fixed(rows, origin_s)
    changed = np.zeros(n, dtype=bool)
    changed[0] = True
    for start in (*range(0, width - 8, 8), width - 8):  # 8-byte words covering each row
        # (n,) unaligned uint64 view with a stride of one row: no copy
        word = np.ndarray((n,), np.uint64, buffer=block, offset=start, strides=(width,))
        changed[1:] |= word[1:] != word[:-1]
    if changed.sum() > n // 2:
        return _parse_fixed(rows, origin_s)
    unique_seconds = _parse_fixed(rows[changed], origin_s)
    return unique_seconds[np.cumsum(changed) - 1]


def string_parts(array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data bytes) of an Arrow string/binary array, with nulls as empty strings."""
    import pyarrow as pa

    if pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type):
        array = array.cast(pa.binary())
    if array.null_count:
        array = array.fill_null(b"" if pa.types.is_binary(array.type) else "")
    offsets_buf, data_buf = array.buffers()[1], array.buffers()[2]
    offsets = np.frombuffer(offsets_buf, dtype=np.int32)[
        array.offset : array.offset + len(array) + 1
    ]
    data = (
        np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    )
    return offsets, data


def _parse_fixed_width(offsets: np.ndarray, data: np.ndarray, origin_s: int) -> np.ndarray:
    lengths = np.diff(offsets)
    out = np.full(len(lengths), np.nan)
    if len(lengths) and (lengths == lengths[0]).all():  # one width: a zero-copy (n, w) view
        width = int(lengths[0])
        if _MIN_WIDTH <= width <= _MAX_WIDTH:
            out[:] = _parse_repeated(data[offsets[0] : offsets[-1]], width, origin_s)
        return out
    for width in np.unique(lengths):
        if not _MIN_WIDTH <= width <= _MAX_WIDTH:
            continue
        rows = np.flatnonzero(lengths == width)
        gather = offsets[rows][:, None] + np.arange(width)  # (n_rows, width) byte positions
        out[rows] = _parse_fixed(data[gather], origin_s)
    return out


def _parse_other(strings) -> np.ndarray:
    """Numbers of seconds, or ISO 8601 with a zone, via Arrow; NaN where neither parses."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.utf8_trim_whitespace(strings.cast(pa.string()))
    out = np.full(len(text), np.nan)
    numeric = pc.match_substring_regex(text, r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
    numeric = to_numpy(numeric.fill_null(False))
    if numeric.any():
        out[numeric] = to_numpy(text.filter(pa.array(numeric)).cast(pa.float64()))
    rest = np.flatnonzero(~numeric)
    for i in rest:  # ISO 8601 with a time zone; rare enough to take one at a time
        out[i] = _iso_seconds(text[int(i)].as_py())
    return out


def _iso_seconds(text: str | None) -> float:
    from datetime import UTC, datetime

    if not text:
        return np.nan
    try:
        stamp = datetime.fromisoformat(text.replace("/", "-"))
    except ValueError:
        return np.nan
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def parse_timestamps(array, origin_s: int = 0) -> np.ndarray:
    """Seconds since ``origin_s`` (float64) of an Arrow array of timestamps, numbers or
    strings; NaN where invalid. An integer origin near the data keeps sub-microsecond
    precision in the fixed-width path (absolute epoch seconds in float64 keep ~0.2 us)."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_timestamp(array.type):
        unit_s = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[array.type.unit]
        ints = to_numpy(array.cast(pa.int64()).fill_null(0)).astype(np.float64)
        return np.where(to_numpy(array.is_null()), np.nan, ints * unit_s - origin_s)
    if pa.types.is_integer(array.type) or pa.types.is_floating(array.type):
        seconds = to_numpy(array.cast(pa.float64())) - origin_s
        return np.where(np.isfinite(seconds), seconds, np.nan)  # inf is no time
    if not (pa.types.is_string(array.type) or pa.types.is_binary(array.type)):
        array = array.cast(pa.string())
    offsets, data = string_parts(array)
    out = _parse_fixed_width(offsets, data, origin_s)
    bad = np.flatnonzero(np.isnan(out))
    if len(bad):
        out[bad] = _parse_other(array.take(bad)) - origin_s
    return out
