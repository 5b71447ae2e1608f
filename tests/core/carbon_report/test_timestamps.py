"""The vectorised timestamp parser against Python's datetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.carbon_report.timestamps import days_from_civil, parse_timestamps

moments = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2099, 12, 31))


@given(
    st.lists(moments, min_size=1, max_size=30),
    st.sampled_from(["/", "-"]),
    st.sampled_from([" ", "T"]),
    st.sampled_from([0, 3, 6]),
)
def test_fixed_width_matches_datetime(stamps, date_sep, time_sep, digits):
    stamps = [
        s.replace(
            microsecond=(s.microsecond // 10 ** (6 - digits)) * 10 ** (6 - digits) if digits else 0
        )
        for s in stamps
    ]
    fmt = f"%Y{date_sep}%m{date_sep}%d{time_sep}%H:%M:%S"
    text = [
        s.strftime(fmt) + (f".{s.microsecond:06d}"[: digits + 1] if digits else "") for s in stamps
    ]
    origin = 1_700_000_000
    got = parse_timestamps(pa.array(text), origin)
    want = np.array([s.replace(tzinfo=UTC).timestamp() - origin for s in stamps])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_repeated_rows_and_day_change_within_a_batch():
    base = datetime(2024, 12, 31, 23, 59, 59)
    stamps = [base + timedelta(milliseconds=250 * (i // 4)) for i in range(40)]  # 4 GPUs per time
    text = [s.strftime("%Y/%m/%d %H:%M:%S.") + f"{s.microsecond // 1000:03d}" for s in stamps]
    got = parse_timestamps(pa.array(text).cast(pa.binary()))
    want = np.array([s.replace(tzinfo=UTC).timestamp() for s in stamps])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_other_shapes_and_invalid_values():
    text = [
        "1714564800.25",
        "2024-05-01T12:00:00+02:00",
        "2024-05-01 12:00:00.5Z",
        "",
        "garbage",
        "2024/13/01 00:00:00",
        "2024/01/01 25:00:00",
        None,
    ]
    got = parse_timestamps(pa.array(text))
    assert got[0] == 1714564800.25
    assert got[1] == datetime(2024, 5, 1, 10, tzinfo=UTC).timestamp()
    assert got[2] == datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=UTC).timestamp()
    assert np.isnan(got[3:]).all()


def test_numeric_and_timestamp_columns():
    assert parse_timestamps(pa.array([0.5, 1.5]), 0).tolist() == [0.5, 1.5]
    stamps = pa.array([datetime(2024, 5, 1, 12, tzinfo=UTC)], type=pa.timestamp("ms", tz="UTC"))
    assert parse_timestamps(stamps, 1714564800).tolist() == [0.0]


def test_days_from_civil_matches_the_calendar():
    dates = [
        datetime(1970, 1, 1),
        datetime(2000, 2, 29),
        datetime(2024, 3, 1),
        datetime(2100, 3, 1),
    ]
    y, m, d = (np.array([getattr(x, k) for x in dates]) for k in ("year", "month", "day"))
    assert days_from_civil(y, m, d).tolist() == [(x - datetime(1970, 1, 1)).days for x in dates]


def test_utc_designator_as_track_writes_it():
    from iclr25.core.carbon_report.track import iso_utc

    epoch = 1714564800.0 + np.array([0.0, 0.25, 86399.999999, 86400.5])
    text = [iso_utc(t) for t in epoch]  # 2024-05-01T12:00:00.000000Z ...
    got = parse_timestamps(pa.array(text), 1714564800)
    np.testing.assert_allclose(got, epoch - 1714564800, rtol=0, atol=1e-6)
    mixed = parse_timestamps(pa.array([text[0], text[1].replace("Z", "+00:00"), "x" * 27]))
    np.testing.assert_allclose(mixed[:2], epoch[:2], rtol=0, atol=1e-6)
    assert np.isnan(mixed[2])


def test_non_finite_numeric_times_are_invalid():
    got = parse_timestamps(pa.array([1.0, float("inf"), float("nan"), -float("inf")]))
    assert got[0] == 1.0 and np.isnan(got[1:]).all()
