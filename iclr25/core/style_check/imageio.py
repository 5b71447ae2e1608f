"""Safe image loading: every failure becomes a skip with a reason, never a crash.

``load_image`` reads the header first and refuses images above ``max_pixels``
(decompression bombs) before decoding; truncated, corrupt and non-image files raise
:class:`ImageSkip` with a one-line reason. EXIF orientation is applied, animated files
give their first frame, and transparency is composited over white, so every image
comes back as an 8-bit RGB ``PIL.Image``.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

#: Pillow's own default guard (``Image.MAX_IMAGE_PIXELS``), about 89.5 megapixels
DEFAULT_MAX_PIXELS = 89_478_485
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff", ".gif")


class ImageSkip(Exception):
    """An image that cannot be used; ``str(exc)`` is the reason shown to the user."""


@dataclass(frozen=True)
class LoadedImage:
    image: object  # PIL.Image.Image, RGB
    sha256: str
    width: int
    height: int


def is_image_name(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_SUFFIXES


def _to_rgb(im):
    from PIL import Image

    if im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return im.convert("RGB")


def decode_image(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS):
    """Decode bytes into an RGB ``PIL.Image``; raise :class:`ImageSkip` on any problem."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    if not data:
        raise ImageSkip("empty file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                width, height = im.size
                if width * height > max_pixels:
                    raise ImageSkip(
                        f"{width}x{height} pixels is over the {max_pixels:,}-pixel limit "
                        "(possible decompression bomb; raise --max-pixels to allow it)"
                    )
                im.seek(0)
                im.load()  # decodes now: truncated or corrupt data fails here
                im = ImageOps.exif_transpose(im)
                return _to_rgb(im)
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


def load_image(path: Path, max_pixels: int = DEFAULT_MAX_PIXELS) -> LoadedImage:
    """Read and decode ``path`` (hashing the bytes read); raise :class:`ImageSkip`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImageSkip(f"unreadable file ({exc.strerror or exc})") from None
    image = decode_image(data, max_pixels)
    return LoadedImage(image, hashlib.sha256(data).hexdigest(), image.width, image.height)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def thumbnail(path: Path, side: int, max_pixels: int = DEFAULT_MAX_PIXELS):
    """An RGB thumbnail fitting in ``side`` x ``side``, or a grey placeholder."""
    from PIL import Image

    try:
        image = load_image(path, max_pixels).image
        image.thumbnail((side, side), Image.Resampling.LANCZOS)
        return image
    except ImageSkip:
        return Image.new("RGB", (side, side), (200, 200, 200))
