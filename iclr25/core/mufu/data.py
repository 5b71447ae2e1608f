"""Mufu data files: TSV (header row, tab-separated) or JSONL (one object per line).

Columns: ``source``, ``target`` (the reference; optional at inference), ``draft`` (the
teacher's translation into the target language) and ``cand.<lang>`` (the teacher's
translation into auxiliary language <lang>). Any other column is kept and ignored.
Errors name the file, the line and the column; nothing is written on error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from iclr25 import atomic
from iclr25.errors import InputError

Row = dict[str, str]


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".tsv", ".txt", ".tab"):
        return "tsv"
    raise InputError(f"{path}: unknown data format {suffix!r}", "use a .tsv or .jsonl file")


def _read_text(path: Path) -> str:
    if not path.exists():
        raise InputError(f"{path} does not exist", "check the path")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a data file", "pass a .tsv or .jsonl file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path} is not UTF-8 text (byte {exc.start})", "save it as UTF-8"
        ) from None
    if not text.strip():
        raise InputError(f"{path} is empty", "give a file with a header and at least one row")
    return text


def read_rows(path: Path | str, required: Sequence[str] = ("source",)) -> list[Row]:
    """Rows of a TSV or JSONL file; an input error names the first missing column."""
    path = Path(path)
    fmt = _format(path)
    text = _read_text(path)
    rows = _read_jsonl(path, text) if fmt == "jsonl" else _read_tsv(path, text)
    if not rows:
        raise InputError(f"{path} has a header but no rows", "add at least one row")
    check_columns(path, rows, required, fmt)
    return rows


def _read_jsonl(path: Path, text: str) -> list[Row]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}, line {number}: not valid JSON ({exc.msg})", "one JSON object per line"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"{path}, line {number}: a JSON line must be an object", 'write {"source": ...}'
            )
        row = {str(k): ("" if v is None else str(v)) for k, v in obj.items()}
        row["_line"] = str(number)
        rows.append(row)
    return rows


def _read_tsv(path: Path, text: str) -> list[Row]:
    lines = text.splitlines()
    header = lines[0].split("\t")
    if len(set(header)) != len(header):
        raise InputError(f"{path}, line 1: repeated column names {header}", "name each column once")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            raise InputError(
                f"{path}, line {number}: {len(fields)} fields but the header has {len(header)}",
                "separate columns with one tab; no tabs inside a sentence",
            )
        row = dict(zip(header, fields, strict=True))
        row["_line"] = str(number)
        rows.append(row)
    return rows


def check_columns(path, rows: Sequence[Row], required: Sequence[str], fmt: str = "jsonl") -> None:
    for column in required:
        for row in rows:
            if column not in row:
                line = "1 (header)" if fmt == "tsv" else row.get("_line", "?")
                raise InputError(
                    f"{path}, line {line}: column {column!r} is missing",
                    _column_fix(column),
                )


def _column_fix(column: str) -> str:
    if column.startswith("cand.") or column == "draft":
        return "produce it with `iclr25 mufu candidates`, or choose other --aux-langs"
    return f"add a {column!r} column"


def candidate_langs(rows: Sequence[Row]) -> list[str]:
    """Auxiliary languages with a ``cand.<lang>`` column in every row."""
    langs = [c[5:] for c in rows[0] if c.startswith("cand.")]
    return [lang for lang in langs if all(f"cand.{lang}" in r for r in rows)]


def read_lines(path: Path | str, what: str) -> list[str]:
    """Segments of a plain text file, one per line (empty lines kept)."""
    path = Path(path)
    text = _read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return [line.rstrip("\r") for line in lines]


def write_rows(
    path: Path | str, rows: Sequence[Row], columns: Sequence[str], overwrite: bool
) -> None:
    """Write ``columns`` of ``rows`` atomically as TSV or JSONL (by the suffix)."""
    path = Path(path)
    fmt = _format(path)
    atomic.refuse_existing(path, overwrite)
    if fmt == "jsonl":
        text = "".join(
            json.dumps({c: r.get(c, "") for c in columns}, ensure_ascii=False) + "\n" for r in rows
        )
    else:
        for r in rows:
            for c in columns:
                if "\t" in r.get(c, "") or "\n" in r.get(c, ""):
                    raise InputError(
                        f"a {c!r} value holds a tab or newline", "write .jsonl instead of .tsv"
                    )
        lines = ["\t".join(columns)] + ["\t".join(r.get(c, "") for c in columns) for r in rows]
        text = "\n".join(lines) + "\n"
    atomic.write_text(path, text)


def write_lines(path: Path | str, lines: Sequence[str], overwrite: bool) -> None:
    path = Path(path)
    atomic.refuse_existing(path, overwrite)
    atomic.write_text(path, "".join(line.replace("\n", " ") + "\n" for line in lines))
