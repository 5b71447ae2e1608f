"""Atomic file and folder writes: temp file + rename, so output is whole or absent."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from iclr25.errors import UsageError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (same-folder temp file, fsync, rename).

    The file gets the permissions a plain ``open(path, "w")`` would give (0666 less the
    umask), not mkstemp's private 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, obj: object) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


def refuse_existing(path: Path, overwrite: bool, flag: str = "--overwrite") -> None:
    """Raise a UsageError if ``path`` exists (a non-empty folder, or a file) and
    overwriting was not asked for."""
    path = Path(path)
    if not path.exists() or overwrite:
        return
    if path.is_dir() and not any(path.iterdir()):
        return
    kind = "folder is not empty" if path.is_dir() else "file exists"
    raise UsageError(f"{path}: {kind}", f"choose another path or pass {flag} to replace it")


@contextlib.contextmanager
def staged_dir(final: Path, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling folder; on success it replaces ``final`` in one rename.

    On any exception (Ctrl-C included) the temporary folder is removed and ``final`` is
    left exactly as it was."""
    final = Path(final)
    refuse_existing(final, overwrite)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".partial", dir=final.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    backup = None
    if final.exists():
        if final.is_dir() and not any(final.iterdir()):
            final.rmdir()
        else:  # overwrite was asked for: swap, then drop the old copy
            backup = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, backup)
    os.replace(tmp, final)
    if backup is not None:
        if backup.is_dir():
            shutil.rmtree(backup, ignore_errors=True)
        else:
            backup.unlink(missing_ok=True)
