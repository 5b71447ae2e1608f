"""Power values of GPU logs: text such as ``612.34 W``, ``612.34`` or ``0.6 kW`` to watts.

Values without a unit take the column's unit (``power.draw [W]``, ``power_kw``); a value
with another unit is converted and counted (``converted_units``). Rows that cannot give a
power are NaN and counted by kind: ``missing_power`` (empty, ``[N/A]``, ``[Not Supported]``,
``nan``), ``bad_power`` (not a number, or not finite: ``inf``, ``1e999``) and
``negative_power``.

Paths, fastest first: numeric Arrow columns (Parquet) are cast; a text column whose every
cell is ``[ ]<number>[ W]`` with one decoration is sliced and cast by Arrow; anything else
(mixed units, missing values) goes through a regular expression.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.carbon_report.arrow_numpy import to_numpy
from iclr25.core.carbon_report.timestamps import string_parts

UNIT_FACTORS = {"mw": 1e-3, "w": 1.0, "kw": 1e3}
_MISSING = ("", "[n/a]", "n/a", "[not supported]", "[unknown error]", "nan")
_POWER_RE = r"^(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[mMkK]?[wW])?$"


def parse_power(values, unit_factor: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Watts from text like ``612.34 W`` / ``612.34`` / ``0.6 kW``; masks of rejected kinds.

    Values without a unit take the header's unit (``unit_factor``). The fast path slices
    off one uniform leading space and `` W`` suffix and casts; a batch with anything else
    (other units, missing or non-finite values) goes through a regular expression."""
    import pyarrow as pa

    if pa.types.is_integer(values.type) or pa.types.is_floating(values.type):
        watts = to_numpy(values.cast(pa.float64())) * unit_factor
        bad = ~np.isfinite(watts)
        if not bad.any():
            return _reject_negative(watts, {})
        kinds = {"missing_power": np.isnan(watts), "bad_power": bad & ~np.isnan(watts)}
        return _reject_negative(np.where(bad, np.nan, watts), kinds)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    watts = _parse_power_uniform(values, unit_factor)
    if watts is not None:
        return _reject_negative(watts, {})
    return _parse_power_slow(as_text(values), unit_factor)


def _parse_power_uniform(values, unit_factor: float) -> np.ndarray | None:
    """Watts when every cell is ``[ ]<number>[ W]`` with the same decoration, else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.null_count or len(values) == 0:
        return None
    offsets, data = string_parts(values)
    starts, ends = offsets[:-1], offsets[1:]
    lead = bool(data[starts[0]] == 32) if ends[0] > starts[0] else False
    tail = bool(ends[0] - starts[0] >= 2 and data[ends[0] - 1] == 87 and data[ends[0] - 2] == 32)
    if ((ends - starts) <= int(lead) + 2 * int(tail)).any():
        return None  # a cell too short to hold a number inside its decoration
    if ((data[starts] == 32) != lead).any():
        return None  # leading spaces differ between cells
    if tail and not ((data[ends - 1] == 87) & (data[ends - 2] == 32)).all():
        return None  # some cells without " W" (or with another unit)
    if lead or tail:
        stop = -2 if tail else np.iinfo(np.int32).max  # (stop=None fails in pyarrow 26)
        values = pc.binary_slice(values.cast(pa.binary()), int(lead), stop)
    try:
        watts = to_numpy(values.cast(pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if not np.isfinite(watts).all():
        return None  # NaN / inf text: the slow path counts it
    return watts if tail or unit_factor == 1.0 else watts * unit_factor


def as_text(values):
    """A string array of ``values``; invalid UTF-8 is replaced rather than failing."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    try:
        return values.cast(pa.string())
    except pa.ArrowInvalid:
        cells = values.to_pylist()
        return pa.array(
            [c.decode("utf-8", "replace") if isinstance(c, bytes) else c for c in cells],
            pa.string(),
        )


def _reject_negative(watts: np.ndarray, kinds: dict) -> tuple[np.ndarray, dict]:
    negative = watts < 0
    if negative.any():
        watts = np.where(negative, np.nan, watts)
        kinds["negative_power"] = negative
    return watts, kinds


def _parse_power_slow(text, unit_factor: float) -> tuple[np.ndarray, dict]:
    import pyarrow as pa
    import pyarrow.compute as pc

    stripped = pc.utf8_trim_whitespace(text.fill_null(""))
    lowered = pc.utf8_lower(stripped)
    missing = to_numpy(pc.is_in(lowered, value_set=pa.array(_MISSING)))
    parts = pc.extract_regex(stripped, _POWER_RE)  # struct of (number, unit) or null
    matched = to_numpy(parts.is_valid())
    numbers = pc.struct_field(parts, [0]).cast(pa.float64(), safe=False)
    watts = to_numpy(numbers.fill_null(np.nan)).astype(np.float64)
    matched &= np.isfinite(watts)  # "1e999" overflows to inf: not a power
    units = pc.utf8_lower(pc.struct_field(parts, [1])).fill_null("")
    units = np.array(units.to_pylist(), dtype=object)
    factors = np.full(len(watts), unit_factor)
    for unit, factor in UNIT_FACTORS.items():
        factors[units == unit] = factor
    converted = matched & (factors != unit_factor)
    watts = np.where(matched, watts * factors, np.nan)
    kinds = {
        "missing_power": missing & ~matched,
        "bad_power": ~missing & ~matched,
        "converted_units": converted,
    }
    return _reject_negative(watts, kinds)
