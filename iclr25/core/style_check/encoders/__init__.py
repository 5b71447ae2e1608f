"""Image encoders: ``stats`` (default, no weights) and ``hf:PATH`` (a local vision model).

An encoder has ``spec`` (what the user typed, e.g. ``stats`` or ``hf:/models/clip``),
``name``, ``version``, ``identity`` (a fingerprint: a DB built with one identity refuses
another), ``dim``, ``feature_names`` / ``feature_groups`` (named features; None for
learned embeddings) and ``encode(list of RGB PIL images) -> (n, dim) float32``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from iclr25.errors import UsageError

DEFAULT_ENCODER = "stats"


@dataclass(frozen=True)
class EncoderInfo:
    """What the DB records about the encoder that made its embeddings."""

    spec: str
    name: str
    version: str
    identity: str
    dim: int
    feature_names: list[str] | None = None
    feature_groups: list[str] | None = None
    zero_shot: bool = False  # True when a text tower allows CLIP zero-shot tags

    def as_dict(self) -> dict:
        return asdict(self)


def encoder_info(encoder) -> EncoderInfo:
    return EncoderInfo(
        spec=encoder.spec,
        name=encoder.name,
        version=encoder.version,
        identity=encoder.identity,
        dim=encoder.dim,
        feature_names=getattr(encoder, "feature_names", None),
        feature_groups=getattr(encoder, "feature_groups", None),
        zero_shot=bool(getattr(encoder, "zero_shot", False)),
    )


def parse_spec(spec: str) -> tuple[str, Path | None]:
    """``stats`` -> ("stats", None); ``hf:PATH`` -> ("hf", resolved PATH)."""
    spec = (spec or DEFAULT_ENCODER).strip()
    if spec == "stats":
        return "stats", None
    if spec.startswith("hf:") and len(spec) > 3:
        return "hf", Path(spec[3:]).expanduser().resolve()
    raise UsageError(
        f"unknown encoder {spec!r}",
        "use --encoder stats (default) or --encoder hf:PATH (a local CLIP/DINOv2/SigLIP folder)",
    )


def load_encoder(spec: str, device: str = "cpu", batch_size: int = 32):
    """Build the encoder named by ``spec`` (heavy imports happen here, lazily)."""
    kind, path = parse_spec(spec)
    if kind == "stats":
        from iclr25.core.style_check.encoders.stats import StyleStatsEncoder

        return StyleStatsEncoder()
    from iclr25.core.style_check.encoders.hf import HFVisionEncoder

    return HFVisionEncoder(path, device=device, batch_size=batch_size)
