"""The built wheel carries every package data file (kernel sources, presets, weights...)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tracked_package_data() -> set[str]:
    proc = subprocess.run(
        ["git", "ls-files", "iclr25"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    files = {line for line in proc.stdout.splitlines() if line and (ROOT / line).exists()}
    return {f for f in files if not f.endswith(".py")}


def test_wheel_contains_package_data(tmp_path):
    expected = tracked_package_data()
    assert any(f.endswith(".cu") for f in expected)
    assert "iclr25/data/citations.bib" in expected
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("iclr25-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(expected - names)
    assert not missing, f"package data missing from the wheel: {missing}"
    assert "iclr25/cli.py" in names
    assert not any(n.startswith("tests/") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "iclr25 = iclr25.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
