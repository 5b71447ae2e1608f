"""Arrow arrays to numpy without pyarrow's pandas-backed conversion.

``pyarrow.Array.to_numpy`` imports pandas on first use when it is installed (~0.15 s of
CPU and ~40 MB of memory for a library this command never uses). For the primitive arrays
the power-log readers produce, the values buffer *is* the numpy array: these helpers view
it directly (read-only), and fall back to ``to_numpy`` for anything else.
"""

from __future__ import annotations

import numpy as np

_NUMERIC = {
    "double": np.float64,
    "float": np.float32,
    "int64": np.int64,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint64": np.uint64,
    "uint32": np.uint32,
    "uint16": np.uint16,
    "uint8": np.uint8,
}


def to_numpy(array) -> np.ndarray:
    """A read-only numpy view (copy for booleans) of a primitive Arrow array.

    Floats: nulls become NaN. Booleans: nulls become False. Other types, and integers
    with nulls, go through ``array.to_numpy(zero_copy_only=False)``."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    n, offset, kind = len(array), array.offset, str(array.type)
    if pa.types.is_boolean(array.type):
        bits = np.frombuffer(array.buffers()[1], dtype=np.uint8) if n else np.zeros(0, np.uint8)
        values = np.unpackbits(bits, bitorder="little")[offset : offset + n].astype(bool)
        if array.null_count:
            values &= to_numpy(array.is_valid())
        return values
    if kind not in _NUMERIC or (array.null_count and not kind.startswith(("double", "float"))):
        return array.to_numpy(zero_copy_only=False)
    if n == 0:
        return np.zeros(0, dtype=_NUMERIC[kind])
    values = np.frombuffer(array.buffers()[1], dtype=_NUMERIC[kind])[offset : offset + n]
    if array.null_count:
        values = np.where(to_numpy(array.is_valid()), values, np.nan)
    return values
