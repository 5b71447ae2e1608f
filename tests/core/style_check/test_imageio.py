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


# -- the image kinds real corpora hold --------------------------------------------------
def _save(image: Image.Image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def _ramp(width: int = 48, height: int = 32) -> np.ndarray:
    """(H, W) uint8 horizontal ramp 0..255."""
    return np.tile(np.linspace(0, 255, width).round().astype(np.uint8), (height, 1))


def test_grey_and_high_bit_depth_are_rescaled_not_clipped():
    ramp = _ramp()
    expected = np.stack([ramp] * 3, axis=-1)
    grey = decode_image(_save(Image.fromarray(ramp, "L"), "PNG"))
    assert np.array_equal(np.asarray(grey), expected)
    # 16-bit grey PNG (I;16): v * 257 must come back as v (clipping gave white)
    sixteen = Image.fromarray(ramp.astype(np.uint16) * 257)
    assert sixteen.mode == "I;16"
    assert np.array_equal(np.asarray(decode_image(_save(sixteen, "PNG"))), expected)
    # 32-bit integer TIFF holding 16-bit values, and a float TIFF in [0, 1]
    as_int = Image.fromarray(ramp.astype(np.int32) * 257)
    assert np.array_equal(np.asarray(decode_image(_save(as_int, "TIFF"))), expected)
    as_float = Image.fromarray((ramp / 255.0).astype(np.float32))
    got = np.asarray(decode_image(_save(as_float, "TIFF"))).astype(int)
    assert np.abs(got - expected).max() <= 1


def test_sixteen_bit_rgb_png_keeps_its_colours():
    # a 16-bit RGB PNG written by hand (Pillow cannot write one): orange 0xC8C8 0x6464 0x1010
    row = b"\x00" + bytes.fromhex("c8c864641010") * 4  # filter byte + 4 pixels
    header = struct.pack(">IIBBBBB", 4, 2, 16, 2, 0, 0, 0)
    data = (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(row * 2))
        + _chunk(b"IEND", b"")
    )
    assert decode_image(data).getpixel((3, 1)) == (200, 100, 16)


def test_cmyk_palette_and_alpha_modes():
    cyan = Image.new("CMYK", (8, 8), (255, 0, 0, 0))
    assert decode_image(_save(cyan, "TIFF")).getpixel((0, 0)) == (0, 255, 255)
    jpeg = decode_image(_save(cyan, "JPEG", quality=95)).getpixel((4, 4))
    assert max(jpeg[0], 255 - jpeg[1], 255 - jpeg[2]) <= 3  # CMYK JPEG, within JPEG loss
    palette = Image.new("P", (8, 8), 1)
    palette.putpalette([0, 0, 0, 200, 10, 10] + [0] * 762)
    palette.putpixel((0, 0), 0)
    decoded = decode_image(_save(palette, "PNG", transparency=0))  # index 0 transparent
    assert decoded.getpixel((0, 0)) == (255, 255, 255) and decoded.getpixel((1, 1)) == (200, 10, 10)
    la = Image.new("LA", (4, 4), (0, 0))  # transparent black grey+alpha
    assert decode_image(_save(la, "PNG")).getpixel((0, 0)) == (255, 255, 255)
    one_bit = Image.new("1", (4, 4), 1)
    assert decode_image(_save(one_bit, "PNG")).getpixel((0, 0)) == (255, 255, 255)


def test_exif_orientation_is_applied():
    # a 40 x 20 picture, left half red, right half blue, stored rotated with EXIF tag 6
    # ("rotate 90 CW to display"): decoded it must be 40 x 20 again, red on the left
    upright = Image.new("RGB", (40, 20), (220, 0, 0))
    upright.paste((0, 0, 220), (20, 0, 40, 20))
    stored = upright.transpose(Image.Transpose.ROTATE_90)  # what the camera wrote, 20 x 40
    exif = Image.Exif()
    exif[0x0112] = 6
    decoded = decode_image(_save(stored, "JPEG", quality=95, exif=exif.tobytes()))
    assert decoded.size == (40, 20)
    left, right = decoded.getpixel((5, 10)), decoded.getpixel((35, 10))
    assert left[0] > 180 > left[2] and right[2] > 180 > right[0]


@pytest.mark.parametrize("fmt", ["GIF", "WEBP", "PNG"])
def test_animated_images_give_their_first_frame(fmt):
    frames = [Image.new("RGB", (16, 16), c) for c in ((250, 0, 0), (0, 250, 0), (0, 0, 250))]
    options = {"lossless": True} if fmt == "WEBP" else {}
    data = _save(frames[0], fmt, save_all=True, append_images=frames[1:], duration=50, **options)
    assert Image.open(io.BytesIO(data)).n_frames == 3
    r, g, b = decode_image(data).getpixel((8, 8))
    assert r > 200 and g < 40 and b < 40


def test_embedded_icc_profile_is_converted_to_srgb():
    # a hand-made ICC profile: sRGB primaries with linear curves. Linear grey 128/255
    # is sRGB 255 * (1.055 * 0.50196 ** (1 / 2.4) - 0.055) = 187.8 (IEC 61966-2-1)
    grey = Image.new("RGB", (4, 4), (128, 128, 128))
    decoded = decode_image(_save(grey, "PNG", icc_profile=linear_srgb_profile()))
    assert all(abs(v - 188) <= 1 for v in decoded.getpixel((1, 1)))
    # a profile that cannot be parsed is ignored: plain pixels, no skip
    junk = decode_image(_save(grey, "PNG", icc_profile=b"not a profile" * 10))
    assert junk.getpixel((1, 1)) == (128, 128, 128)


def test_large_jpeg_is_decoded_reduced_but_reports_its_size(tmp_path: Path):
    rng = np.random.default_rng(1)
    big = Image.fromarray(rng.integers(0, 255, (45, 60, 3), dtype=np.uint8)).resize(
        (2400, 1800), Image.Resampling.NEAREST
    )
    path = tmp_path / "photo.jpg"
    big.save(path, quality=90)
    loaded = load_image(path)
    assert (loaded.width, loaded.height) == (2400, 1800)  # the file's size
    assert loaded.image.size == (1200, 900)  # DCT scale 1/2: both sides stay >= 512
    assert min(load_image(path, min_side=200).image.size) == 225  # scale 1/8


def test_raised_pixel_limit_also_lifts_pillows_own_guard():
    # 9,500^2 = 90.25 M pixels, above Pillow's default 89.48 M: with --max-pixels raised
    # the file is decoded (and found truncated), not rejected as a bomb
    data = forged_bomb_png(9_500, 9_500)
    with pytest.raises(ImageSkip, match="decompression bomb"):
        decode_image(data)
    with pytest.raises(ImageSkip, match="corrupt or truncated"):
        decode_image(data, max_pixels=100_000_000)
    from PIL import Image as PILImage

    assert PILImage.MAX_IMAGE_PIXELS == 89_478_485  # restored


def linear_srgb_profile() -> bytes:
    """An ICC v2 display profile: sRGB's D50-adapted primaries, identity (gamma 1) curves."""

    def s15(v: float) -> bytes:
        return struct.pack(">i", int(round(v * 65536)))

    def xyz(x: float, y: float, z: float) -> bytes:
        return b"XYZ " + b"\0" * 4 + s15(x) + s15(y) + s15(z)

    text = b"linear sRGB test\0"
    desc = b"desc" + b"\0" * 4 + struct.pack(">I", len(text)) + text
    desc += struct.pack(">IIHB", 0, 0, 0, 0) + b"\0" * 67
    identity = b"curv" + b"\0" * 4 + struct.pack(">I", 0)
    tags = [
        (b"desc", desc),
        (b"wtpt", xyz(0.9642, 1.0, 0.8249)),
        (b"rXYZ", xyz(0.4361, 0.2225, 0.0139)),
        (b"gXYZ", xyz(0.3851, 0.7169, 0.0971)),
        (b"bXYZ", xyz(0.1431, 0.0606, 0.7141)),
        (b"rTRC", identity),
        (b"gTRC", identity),
        (b"bTRC", identity),
        (b"cprt", b"text" + b"\0" * 4 + b"none\0"),
    ]
    start = 128 + 4 + 12 * len(tags)
    table, body = struct.pack(">I", len(tags)), b""
    for sig, data in tags:
        body += b"\0" * (-(start + len(body)) % 4)
        table += sig + struct.pack(">II", start + len(body), len(data))
        body += data
    header = struct.pack(">I", start + len(body)) + b"\0" * 4 + struct.pack(">I", 0x02100000)
    header += b"mntrRGB XYZ " + b"\0" * 12 + b"acsp" + b"\0" * 28
    header += s15(0.9642) + s15(1.0) + s15(0.8249)
    return header + b"\0" * (128 - len(header)) + table + body
