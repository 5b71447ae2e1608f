"""Tags per image: the atomic style elements TagMatch composes.

Two sources, both giving one tag per attribute/category and image (``attribute:level``):

1. **Binned attributes** (every encoder): measured style statistics
   (``encoders/stats.py``) binned into named levels. Ordered attributes use the
   reference corpus' tertiles (so each level holds about a third of the corpus):
   brightness (median L), contrast (L q95 - q5), saturation (mean chroma), hue variety
   (hue entropy), warmth, busyness (edge density at sigma = 1), texture scale (fine vs
   coarse filter energy), surface (local contrast), directionality (orientation
   coherence). Categorical attributes use fixed rules: the dominant hue (the 30-degree
   Lab hue bin with the most chroma; "neutral" when >= 80% of pixels are grey), the
   stroke direction (perpendicular to the mean doubled gradient angle at sigma = 2; "none"
   below coherence 0.15) and the composition (where edge energy gathers on a 3 x 3 grid:
   centred when the centre cell holds > 20%, else top/bottom/left/right-weighted when a
   side third holds 15 points more than the opposite one, else all-over).
2. **CLIP zero-shot** (``hf:`` encoders with a text tower): per category of the bundled
   vocabulary (``iclr25/data/style_vocabulary.json``: medium, palette, brushwork,
   composition, subject, light, mood, movement), the term whose prompt embedding
   (mean over the templates) has the highest cosine with the image embedding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from iclr25.paths import package_file

TERTILE_ATTRIBUTES = {
    "brightness": ("dark", "mid-tone", "light"),
    "contrast": ("low", "medium", "high"),
    "saturation": ("muted", "moderate", "vivid"),
    "hue-variety": ("single-hue", "few-hues", "many-hues"),
    "warmth": ("cool", "neutral", "warm"),
    "busyness": ("sparse", "moderate", "busy"),
    "texture-scale": ("coarse", "medium", "fine"),
    "surface": ("smooth", "textured", "rough"),
    "directionality": ("isotropic", "mixed", "aligned"),
}
#: names of the 12 Lab hue bins of 30 degrees, from the Lab hue of sRGB colours: red 40,
#: orange 64, yellow 96, green 136, cyan 196, azure 285, blue 306, magenta 328, rose 3
HUE_LEVELS = (
    "rose",
    "red",
    "orange",
    "yellow",
    "green",
    "green-cyan",
    "cyan",
    "sky-blue",
    "sky-blue",
    "azure",
    "blue-purple",
    "pink",
)
CATEGORICAL_ATTRIBUTES = {
    "dominant-hue": (*dict.fromkeys(HUE_LEVELS), "neutral"),
    "stroke-direction": ("horizontal", "falling-diagonal", "vertical", "rising-diagonal", "none"),
    "composition": (
        "centred",
        "top-weighted",
        "bottom-weighted",
        "left-weighted",
        "right-weighted",
        "all-over",
    ),
}
NEUTRAL_SHARE = 0.8
MIN_COHERENCE = 0.15
CENTRE_SHARE = 0.2
SIDE_MARGIN = 0.15


@dataclass
class TagMatrix:
    vocabulary: list[str]  # tag names, "attribute:level"
    present: np.ndarray  # (n, T) bool

    def tags_of(self, i: int) -> list[str]:
        return [self.vocabulary[t] for t in np.flatnonzero(self.present[i])]

    def concat(self, other: TagMatrix) -> TagMatrix:
        return TagMatrix(
            self.vocabulary + other.vocabulary, np.hstack([self.present, other.present])
        )

    def rows(self, index) -> TagMatrix:
        return TagMatrix(self.vocabulary, self.present[index])


def _column(A: np.ndarray, names: list[str], name: str) -> np.ndarray:
    return A[:, names.index(name)].astype(np.float64)


def ordered_values(A: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """The measured value behind each tertile attribute, (n,) each."""
    col = lambda n: _column(A, names, n)  # noqa: E731
    fine = np.mean([col(f"energy_{f:02d}") for f in range(0, 4)], axis=0)
    coarse = np.mean([col(f"energy_{f:02d}") for f in range(8, 12)], axis=0)
    return {
        "brightness": col("L_q50"),
        "contrast": col("L_range"),
        "saturation": col("chroma_mean"),
        "hue-variety": col("hue_entropy"),
        "warmth": col("warmth"),
        "busyness": col("edge_density_s1"),
        "texture-scale": fine - coarse,
        "surface": col("local_contrast"),
        "directionality": col("coherence_s2"),
    }


def categorical_levels(A: np.ndarray, names: list[str]) -> dict[str, list[str]]:
    col = lambda n: _column(A, names, n)  # noqa: E731
    hues = np.stack([col(f"hue_{i:02d}") for i in range(12)], axis=1)  # (n, 12)
    hue = [HUE_LEVELS[i] for i in hues.argmax(axis=1)]
    hue = [
        "neutral" if s >= NEUTRAL_SHARE else h
        for h, s in zip(hue, col("neutral_share"), strict=True)
    ]
    grad_deg = np.degrees(np.arctan2(col("orient_sin2_s2"), col("orient_cos2_s2"))) / 2
    stroke_deg = (grad_deg + 90.0) % 180.0  # image coordinates, y down
    bins = ("horizontal", "falling-diagonal", "vertical", "rising-diagonal", "horizontal")
    direction = [
        bins[int((d + 22.5) // 45)] if c >= MIN_COHERENCE else "none"
        for d, c in zip(stroke_deg, col("coherence_s2"), strict=True)
    ]
    return {
        "dominant-hue": hue,
        "stroke-direction": direction,
        "composition": composition_levels(A, names),
    }


def composition_levels(A: np.ndarray, names: list[str]) -> list[str]:
    share = np.stack(
        [_column(A, names, f"cell_edge_{i}{j}") ** 2 for i in range(3) for j in range(3)], axis=1
    ).reshape(-1, 3, 3)  # (n, 3, 3) edge-energy shares, rows top to bottom
    out = []
    for s in share:
        rows, cols = s.sum(axis=1), s.sum(axis=0)
        sides = {
            "top-weighted": rows[0] - rows[2],
            "bottom-weighted": rows[2] - rows[0],
            "left-weighted": cols[0] - cols[2],
            "right-weighted": cols[2] - cols[0],
        }
        side, margin = max(sides.items(), key=lambda kv: kv[1])
        if s[1, 1] > CENTRE_SHARE:
            out.append("centred")
        else:
            out.append(side if margin > SIDE_MARGIN else "all-over")
    return out


@dataclass
class AttributeBinner:
    """Tertile edges of the ordered attributes, fitted on reference works."""

    edges: dict[str, tuple[float, float]]

    @classmethod
    def fit(cls, A: np.ndarray, names: list[str]) -> AttributeBinner:
        values = ordered_values(A, names)
        return cls({k: tuple(np.quantile(v, [1 / 3, 2 / 3]).tolist()) for k, v in values.items()})

    @staticmethod
    def vocabulary() -> list[str]:
        attrs = {**TERTILE_ATTRIBUTES, **CATEGORICAL_ATTRIBUTES}
        return [f"{attr}:{level}" for attr, levels in attrs.items() for level in levels]

    def transform(self, A: np.ndarray, names: list[str]) -> TagMatrix:
        vocab = self.vocabulary()
        position = {tag: t for t, tag in enumerate(vocab)}
        present = np.zeros((len(A), len(vocab)), dtype=bool)
        for attr, v in ordered_values(A, names).items():
            level = np.searchsorted(np.asarray(self.edges[attr]), v, side="right")  # 0, 1, 2
            for i, lv in enumerate(level):
                present[i, position[f"{attr}:{TERTILE_ATTRIBUTES[attr][lv]}"]] = True
        for attr, levels in categorical_levels(A, names).items():
            for i, lv in enumerate(levels):
                present[i, position[f"{attr}:{lv}"]] = True
        return TagMatrix(vocab, present)


def load_vocabulary() -> dict:
    return json.loads(package_file("iclr25.data", "style_vocabulary.json").read_text("utf-8"))


@dataclass
class ZeroShotTagger:
    """Per-category text embeddings of the vocabulary (unit norm), from a CLIP encoder."""

    categories: dict[str, list[str]]
    text_unit: dict[str, np.ndarray]  # category -> (terms, D)

    @classmethod
    def build(cls, encoder, vocabulary: dict | None = None) -> ZeroShotTagger:
        vocabulary = vocabulary or load_vocabulary()
        templates = vocabulary["templates"]
        text_unit = {}
        for category, terms in vocabulary["categories"].items():
            prompts = [t.format(term) for term in terms for t in templates]
            emb = encoder.encode_texts(prompts).reshape(len(terms), len(templates), -1)  # (T, P, D)
            mean = emb / np.linalg.norm(emb, axis=2, keepdims=True).clip(1e-12)
            mean = mean.mean(axis=1)  # (terms, D)
            text_unit[category] = mean / np.linalg.norm(mean, axis=1, keepdims=True).clip(1e-12)
        return cls(dict(vocabulary["categories"]), text_unit)

    def vocabulary(self) -> list[str]:
        return [f"{c}:{term}" for c, terms in self.categories.items() for term in terms]

    def transform(self, embeddings: np.ndarray) -> TagMatrix:
        unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True).clip(1e-12)
        vocab = self.vocabulary()
        present = np.zeros((len(unit), len(vocab)), dtype=bool)
        offset = 0
        for category, terms in self.categories.items():
            best = (unit @ self.text_unit[category].T).argmax(axis=1)  # (n,)
            present[np.arange(len(unit)), offset + best] = True
            offset += len(terms)
        return TagMatrix(vocab, present)


def split_tag(tag: str) -> tuple[str, str]:
    attr, _, level = tag.partition(":")
    return attr, level
