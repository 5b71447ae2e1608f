"""Safe loading: bombs, truncated, corrupt, empty and transparent images."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from iclr25.core.style_check.imageio import ImageSkip, decode_image, load_image


def _png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def forged_bomb_png(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height pixels, with almost no data behind it."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    idat = zlib.compress(b"\x00" * 64)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", idat)
        + _chunk(b"IEND", b"")
    )


def test_decompression_bomb_rejected_before_decoding():
    data = forged_bomb_png(40_000, 40_000)  # 1.6 gigapixels claimed, 100 bytes on disk
    assert len(data) < 200
    with pytest.raises(ImageSkip, match="decompression bomb"):
        decode_image(data, max_pixels=89_478_485)


def test_pixel_limit_is_configurable():
    data = _png_bytes(Image.new("RGB", (200, 100), (10, 20, 30)))
    with pytest.raises(ImageSkip, match="200x100 pixels is over the 19,999-pixel limit"):
        decode_image(data, max_pixels=19_999)
    assert decode_image(data, max_pixels=20_000).size == (200, 100)


def test_truncated_png_is_skipped():
    rng = np.random.default_rng(0)
    noise = Image.fromarray(rng.integers(0, 255, (64, 64, 3), dtype=np.uint8))
    data = _png_bytes(noise)
    with pytest.raises(ImageSkip, match="corrupt or truncated"):
        decode_image(data[: len(data) // 2])


def test_non_image_and_empty_files(tmp_path: Path):
    text = tmp_path / "notes.jpg"
    text.write_text("this is not a picture")
    with pytest.raises(ImageSkip, match="not a readable image"):
        load_image(text)
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ImageSkip, match="empty file"):
        load_image(empty)
    with pytest.raises(ImageSkip, match="unreadable file"):
        load_image(tmp_path / "missing.png")


def test_transparency_composited_over_white_and_hash():
    rgba = Image.new("RGBA", (4, 4), (255, 0, 0, 0))  # fully transparent red
    rgba.putpixel((0, 0), (0, 0, 255, 255))  # one opaque blue pixel
    image = decode_image(_png_bytes(rgba))
    assert image.mode == "RGB"
    assert image.getpixel((1, 1)) == (255, 255, 255)
    assert image.getpixel((0, 0)) == (0, 0, 255)


def test_load_image_hash_is_sha256_of_bytes(tmp_path: Path):
    import hashlib

    path = tmp_path / "a.png"
    data = _png_bytes(Image.new("RGB", (8, 8), (1, 2, 3)))
    path.write_bytes(data)
    loaded = load_image(path)
    assert loaded.sha256 == hashlib.sha256(data).hexdigest()
    assert (loaded.width, loaded.height) == (8, 8)
