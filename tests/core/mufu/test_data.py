"""Data files: TSV/JSONL rows, errors with file, line and column, atomic writes."""

from __future__ import annotations

import pytest

from iclr25.core.mufu import data
from iclr25.errors import InputError, UsageError


def test_tsv_and_jsonl_round_trip(tmp_path):
    rows = [
        {"source": "A B", "target": "ka", "cand.sam": "kä"},
        {"source": "C", "target": "", "cand.sam": "lo"},
    ]
    cols = ["source", "target", "cand.sam"]
    for name in ("d.tsv", "d.jsonl"):
        data.write_rows(tmp_path / name, rows, cols, overwrite=False)
        back = data.read_rows(tmp_path / name, ("source",))
        assert [{c: r[c] for c in cols} for r in back] == rows
        assert data.candidate_langs(back) == ["sam"]


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("a.tsv", "", "is empty"),
        ("a.tsv", "source\ttarget\n", "no rows"),
        ("a.tsv", "target\nx\n", r"a\.tsv, line 1 \(header\): column 'source' is missing"),
        ("a.tsv", "source\ttarget\nx\n", "line 2: 1 fields but the header has 2"),
        (
            "a.jsonl",
            '{"source": "x"}\n{"target": "y"}\n',
            r"a\.jsonl, line 2: column 'source' is missing",
        ),
        ("a.jsonl", '{"source": "x"}\n{oops\n', "line 2: not valid JSON"),
        ("a.csv", "source\n", "unknown data format"),
    ],
)
def test_bad_files_are_input_errors(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=message):
        data.read_rows(tmp_path / name, ("source",))


def test_missing_file_and_refused_overwrite(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        data.read_rows(tmp_path / "none.tsv")
    path = tmp_path / "out.tsv"
    path.write_text("keep\n")
    with pytest.raises(UsageError, match="--overwrite"):
        data.write_rows(path, [{"a": "1"}], ["a"], overwrite=False)
    assert path.read_text() == "keep\n"


def test_lines_keep_empty_segments(tmp_path):
    path = tmp_path / "h.txt"
    path.write_text("a\n\nb\n")
    assert data.read_lines(path, "hypotheses") == ["a", "", "b"]
