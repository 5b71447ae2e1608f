"""Safe image loading: every failure becomes a skip with a reason, never a crash.

``load_image`` reads the header first and refuses images above ``max_pixels``
(decompression bombs) before decoding; truncated, corrupt and non-image files raise
:class:`ImageSkip` with a one-line reason. Every image that decodes comes back as an
8-bit sRGB ``PIL.Image`` in mode RGB:

- EXIF orientation is applied (a phone photo stored sideways comes back upright);
- animated GIF / WebP / APNG and multi-frame TIFF give their first frame;
- transparency (RGBA, LA, palette images with a transparent index) is composited over
  white;
- high bit depths are rescaled, not clipped: 16-bit grey (``I;16``) and 32-bit integer
  (``I``) images with values above 255 are divided by 257 (65535 -> 255); float images
  (``F``) in [0, 1] are multiplied by 255, others above 255 divided by their maximum
  / 255 (NaN -> 0); 16-bit RGB PNGs keep their high byte (Pillow's reader);
- an embedded ICC profile (Adobe RGB, Display P3, a CMYK press profile, a grey
  profile) is converted to sRGB with LittleCMS (perceptual intent); without a profile,
  CMYK is converted with Pillow's plain formula;
- large JPEGs are decoded at a reduced DCT scale (1/2, 1/4 or 1/8) that keeps both sides
  at least ``min_side`` (default 512) pixels: every encoder works far below that size,
  and it makes a 24-megapixel photo about ten times cheaper to read.

The width and height reported are those of the upright picture at the file's
resolution, before any reduction.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Pillow's own default guard (``Image.MAX_IMAGE_PIXELS``), about 89.5 megapixels
DEFAULT_MAX_PIXELS = 89_478_485
#: smallest side a large JPEG is reduced to while decoding (DCT scaling)
DECODE_MIN_SIDE = 512
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff", ".gif")
ORIENTATION_TAG = 0x0112  # EXIF
_PROFILE_SPACE_MODE = {"RGB": "RGB", "CMYK": "CMYK", "GRAY": "L"}


class ImageSkip(Exception):
    """An image that cannot be used; ``str(exc)`` is the reason shown to the user."""


@dataclass(frozen=True)
class LoadedImage:
    image: object  # PIL.Image.Image, RGB
    sha256: str
    width: int  # upright, at the file's resolution (before any reduction while decoding)
    height: int


def is_image_name(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_SUFFIXES


def _to_8bit(im):
    """``I;16*``, ``I`` and ``F`` images as 8-bit grey (``L``), rescaled (see above)."""
    from PIL import Image

    if not (im.mode.startswith("I") or im.mode == "F"):
        return im
    values = np.asarray(im, dtype=np.float64)  # (H, W)
    values = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)
    top = float(values.max()) if values.size else 0.0
    if im.mode == "F" and top <= 1.0:
        values = values * 255.0
    elif im.mode == "F" and top > 255.0:
        values = values * (255.0 / top)
    elif im.mode != "F" and top > 255.0:
        values = np.minimum(values, 65535.0) / 257.0
    return Image.fromarray(np.clip(np.rint(values), 0, 255).astype(np.uint8), "L")


def _without_alpha(im):
    """Composite transparency over white; other modes are returned unchanged."""
    from PIL import Image

    if im.mode in ("RGBA", "LA", "RGBa", "La", "PA") or (
        im.mode == "P" and "transparency" in im.info
    ):
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if im.mode == "P":
        return im.convert("RGB")
    return im


@functools.lru_cache(maxsize=16)
def _icc_transform(icc: bytes, mode: str):
    """A LittleCMS transform from the embedded profile to sRGB, or None when the profile
    is unreadable, already sRGB, or of another colour space than the pixels."""
    from PIL import ImageCms

    try:
        source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        space = source.profile.xcolor_space.strip()
        if _PROFILE_SPACE_MODE.get(space) != mode:
            return None
        if ImageCms.getProfileDescription(source).strip().lower().startswith("srgb"):
            return None
        srgb = ImageCms.createProfile("sRGB")
        return ImageCms.buildTransform(source, srgb, mode, "RGB", ImageCms.Intent.PERCEPTUAL)
    except (OSError, ValueError, TypeError, ImageCms.PyCMSError):
        return None


def _to_rgb(im, icc: bytes | None):
    im = _without_alpha(_to_8bit(im))
    transform = _icc_transform(icc, im.mode) if icc else None
    if transform is not None:
        from PIL import ImageCms

        try:
            return ImageCms.applyTransform(im, transform)
        except (OSError, ValueError, ImageCms.PyCMSError):
            pass  # a broken profile: plain conversion below
    return im.convert("RGB")


def _open_checked(im, max_pixels: int, min_side: int):
    """Refuse bombs from the header; ask a large JPEG for a reduced DCT scale."""
    width, height = im.size
    if width * height > max_pixels:
        raise ImageSkip(
            f"{width}x{height} pixels is over the {max_pixels:,}-pixel limit "
            "(possible decompression bomb; raise --max-pixels to allow it)"
        )
    im.seek(0)
    if im.format == "JPEG" and min(width, height) >= 2 * min_side:
        im.draft(im.mode, (min_side, min_side))  # both sides stay >= min_side
    return width, height


@contextlib.contextmanager
def _pillow_pixel_limit(max_pixels: int):
    """Let Pillow's own bomb check (``Image.MAX_IMAGE_PIXELS``) follow a raised
    ``--max-pixels`` while decoding; our header check above is the one that applies."""
    from PIL import Image

    before = Image.MAX_IMAGE_PIXELS
    if before is not None and max_pixels > before:
        Image.MAX_IMAGE_PIXELS = max_pixels
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = before


def decode_image(
    data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS, min_side: int = DECODE_MIN_SIDE
):
    """Decode bytes into an RGB ``PIL.Image``; raise :class:`ImageSkip` on any problem."""
    return _decode(data, max_pixels, min_side)[0]


def _decode(data: bytes, max_pixels: int, min_side: int):
    """(RGB image, file width, file height)."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    if not data:
        raise ImageSkip("empty file")
    try:
        with warnings.catch_warnings(), _pillow_pixel_limit(max_pixels):
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                width, height = _open_checked(im, max_pixels, min_side)
                im.load()  # decodes now: truncated or corrupt data fails here
                icc = im.info.get("icc_profile")
                if im.getexif().get(ORIENTATION_TAG) in (5, 6, 7, 8):  # quarter turns
                    width, height = height, width
                im = ImageOps.exif_transpose(im)
                return _to_rgb(im, icc), width, height
    except ImageSkip:
        raise
    except UnidentifiedImageError:
        raise ImageSkip("not a readable image (unknown format)") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageSkip(f"rejected by Pillow as a decompression bomb: {exc}") from None
    except MemoryError:
        raise ImageSkip("too large to decode in memory") from None
    except Exception as exc:  # noqa: BLE001 - decoders raise many types for corrupt data
        raise ImageSkip(f"corrupt or truncated image ({type(exc).__name__}: {exc})") from None


def load_image(
    path: Path, max_pixels: int = DEFAULT_MAX_PIXELS, min_side: int = DECODE_MIN_SIDE
) -> LoadedImage:
    """Read and decode ``path`` (hashing the bytes read); raise :class:`ImageSkip`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImageSkip(f"unreadable file ({exc.strerror or exc})") from None
    image, width, height = _decode(data, max_pixels, min_side)
    return LoadedImage(image, hashlib.sha256(data).hexdigest(), width, height)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def thumbnail(path: Path, side: int, max_pixels: int = DEFAULT_MAX_PIXELS):
    """An RGB picture filling ``side`` x ``side`` (aspect kept; small images are enlarged
    so that reports show them at one scale), or None when it cannot be read."""
    from PIL import Image, ImageOps

    try:
        image = load_image(path, max_pixels, min_side=2 * side).image
    except ImageSkip:
        return None
    return ImageOps.contain(image, (side, side), Image.Resampling.LANCZOS)
