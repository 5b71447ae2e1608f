"""Listing reference works and generated images (no decoding here).

References: a folder of ``<artist>/<image>`` files (images anywhere below the artist's
folder count for that artist) or a CSV manifest with ``path`` and ``artist`` columns
(relative paths are relative to the CSV's folder). Generated images: a folder read
recursively; an image under ``<name>/`` was made for artist ``name``.

Hidden files (``.name``) are ignored; other non-image files, images outside any artist
folder and missing manifest entries are returned as skips with a reason.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from iclr25.core.style_check.imageio import is_image_name
from iclr25.errors import InputError


@dataclass(frozen=True)
class WorkRef:
    path: Path  # absolute, resolved
    artist: str | None  # the reference artist, or the artist a generated image was made for


@dataclass
class Listing:
    works: list[WorkRef] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # {"path", "reason"}
    empty_artists: list[str] = field(default_factory=list)


def _visible_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def list_reference_folder(refs: Path) -> Listing:
    listing = Listing()
    for entry in sorted(refs.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file():
            reason = "not inside an artist folder (use REFS/<artist>/<image>)"
            listing.skipped.append({"path": str(entry), "reason": reason})
            continue
        if not entry.is_dir():
            continue
        found = 0
        for path in _visible_files(entry):
            if is_image_name(path):
                listing.works.append(WorkRef(path.resolve(), entry.name))
                found += 1
            else:
                listing.skipped.append({"path": str(path), "reason": "not an image file type"})
        if found == 0:
            listing.empty_artists.append(entry.name)
    return listing


def list_reference_manifest(manifest: Path) -> Listing:
    listing = Listing()
    try:
        with open(manifest, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            columns = [c.strip().lower() for c in (reader.fieldnames or [])]
            if "path" not in columns or "artist" not in columns:
                raise InputError(
                    f"{manifest}: the CSV needs 'path' and 'artist' columns, found {columns}",
                    "add a header line 'path,artist'",
                )
            rows = [
                {k.strip().lower(): (v or "").strip() for k, v in r.items() if k} for r in reader
            ]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(
            f"{manifest}: cannot read the CSV manifest ({exc})", "check the file"
        ) from None
    for line, row in enumerate(rows, start=2):
        raw, artist = row.get("path", ""), row.get("artist", "")
        if not raw or not artist:
            listing.skipped.append({"path": f"{manifest}:{line}", "reason": "empty path or artist"})
            continue
        path = Path(raw).expanduser()
        path = path if path.is_absolute() else manifest.parent / path
        if not path.is_file():
            listing.skipped.append({"path": str(path), "reason": "file not found"})
        elif not is_image_name(path):
            listing.skipped.append({"path": str(path), "reason": "not an image file type"})
        else:
            listing.works.append(WorkRef(path.resolve(), artist))
    return listing


def list_references(refs: Path) -> Listing:
    """The reference works under ``refs`` (a folder or a CSV manifest)."""
    refs = Path(refs).expanduser()
    if not refs.exists():
        raise InputError(
            f"{refs}: no such file or folder", "pass a folder of <artist>/<image> or a CSV"
        )
    if refs.is_file() and refs.suffix.lower() != ".csv":
        raise InputError(f"{refs}: not a folder or a .csv manifest", "pass REFS as a folder or CSV")
    listing = list_reference_manifest(refs) if refs.is_file() else list_reference_folder(refs)
    unique = {w.path: w for w in listing.works}  # a manifest may list a file twice
    listing.works = sorted(unique.values(), key=lambda w: str(w.path))
    if not listing.works:
        raise InputError(
            f"{refs}: no reference images found",
            "put images in REFS/<artist>/ folders (jpg, png, webp) or list them in a CSV",
        )
    return listing


def list_generated(folder: Path, artist: str | None = None) -> Listing:
    """Images under ``folder``; each made for ``artist`` or its first-level subfolder."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder", "pass the folder holding the generated images")
    listing = Listing()
    for path in _visible_files(folder):
        if not is_image_name(path):
            listing.skipped.append({"path": str(path), "reason": "not an image file type"})
            continue
        parts = path.relative_to(folder).parts
        made_for = artist if artist is not None else (parts[0] if len(parts) > 1 else None)
        listing.works.append(WorkRef(path.resolve(), made_for))
    if not listing.works:
        raise InputError(
            f"{folder}: no images found", "put the generated images (jpg, png, webp) there"
        )
    return listing
