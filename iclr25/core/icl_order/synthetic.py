"""The synthetic world the embedded model is trained on, and its built-in tasks draw from.

Invented words belong to latent *categories* (six of them, sixteen words each). A text is
one content word, optionally surrounded by filler words (``"the old bako"``). A task maps
categories to label words:

* **symbolic** labels (``foo``, ``bar``, ...) are assigned to categories at random per
  episode during training, so the model can only get them from the demonstrations — the
  symbolic-label setting of the paper, where ICL must read the mapping in context;
* **natural** labels (``animal``, ``plant``, ...) are fixed per category, so a model may
  answer them from its weights (zero-shot-able control).

Everything here is deterministic: the words come from a fixed syllable table, not from a
random generator, so the vocabulary never changes between Python versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Invented content words: consonant-vowel-consonant-vowel, taken in a fixed stride through
# the syllable table so that neighbouring words of one category do not share a prefix.
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
N_CATEGORIES = 6
WORDS_PER_CATEGORY = 16

NATURAL_LABELS = ("animal", "plant", "tool", "food", "place", "colour")
SYMBOL_LABELS = ("foo", "bar", "baz", "qux", "zip", "zap", "wug", "dax")
FILLER_WORDS = ("the", "a", "some", "small", "big", "old", "new", "very")
# Template words a user prompt format on this vocabulary may use.
TEMPLATE_WORDS = ("Input", "Label", "Text", "Answer", "Q", "A", "Category", "Sentence")
PUNCTUATION = (":", "\n", ",", ".", "?", "!", "->", "=")

PAD, UNK, BOS = "[PAD]", "[UNK]", "[BOS]"
SPECIAL_TOKENS = (PAD, UNK, BOS)


def _syllables() -> list[str]:
    return [c + v for c in _CONSONANTS for v in _VOWELS]


def content_words() -> list[list[str]]:
    """``N_CATEGORIES`` lists of ``WORDS_PER_CATEGORY`` distinct invented words."""
    syl = _syllables()  # 70 syllables
    words: list[str] = []
    index = 0
    stride = 37  # coprime with 70*70, visits every pair once
    while len(words) < N_CATEGORIES * WORDS_PER_CATEGORY:
        a, b = divmod(index % (len(syl) ** 2), len(syl))
        word = syl[a] + syl[b]
        if syl[a] != syl[b] and word not in words:
            words.append(word)
        index += stride
    return [
        words[c * WORDS_PER_CATEGORY : (c + 1) * WORDS_PER_CATEGORY] for c in range(N_CATEGORIES)
    ]


def vocabulary() -> list[str]:
    """Every token of the word-level tokenizer, special tokens first."""
    tokens = list(SPECIAL_TOKENS) + list(PUNCTUATION) + list(TEMPLATE_WORDS)
    tokens += list(NATURAL_LABELS) + list(SYMBOL_LABELS) + list(FILLER_WORDS)
    for words in content_words():
        tokens += words
    assert len(tokens) == len(set(tokens)), "vocabulary has duplicates"
    return tokens


@dataclass(frozen=True)
class Example:
    text: str
    label: str
    category: int


FILLER_PROBS = (0.5, 0.3, 0.2)  # 0, 1 or 2 filler words before the content word


def sample_text(
    rng: np.random.Generator,
    category: int,
    words: Sequence[Sequence[str]],
    filler_probs: Sequence[float] = FILLER_PROBS,
) -> str:
    """One content word of ``category`` with 0-2 filler words before it."""
    word = words[category][rng.integers(len(words[category]))]
    n_fillers = rng.choice(len(filler_probs), p=filler_probs)
    fillers = [FILLER_WORDS[i] for i in rng.integers(len(FILLER_WORDS), size=n_fillers)]
    return " ".join([*fillers, word])


def sample_episode(
    rng: np.random.Generator,
    n_examples: int,
    n_classes: int,
    symbolic: bool,
    words: Sequence[Sequence[str]] | None = None,
    words_per_class: int | None = None,
    filler_probs: Sequence[float] = FILLER_PROBS,
) -> list[Example]:
    """Examples of one episode: ``n_classes`` random categories, a fresh label mapping
    (random symbols when ``symbolic``, the categories' natural names otherwise).
    ``words_per_class`` restricts each category to that many random words for the
    episode (repeated words make token-level induction easy to learn; None = all)."""
    words = words if words is not None else content_words()
    categories = rng.choice(N_CATEGORIES, size=n_classes, replace=False)
    if words_per_class is not None:
        words = [
            [cat_words[i] for i in rng.choice(len(cat_words), words_per_class, replace=False)]
            for cat_words in words
        ]
    if symbolic:
        labels = [SYMBOL_LABELS[i] for i in rng.choice(len(SYMBOL_LABELS), n_classes, False)]
    else:
        labels = [NATURAL_LABELS[c] for c in categories]
    picks = rng.integers(n_classes, size=n_examples)
    return [
        Example(
            sample_text(rng, int(categories[j]), words, filler_probs), labels[j], int(categories[j])
        )
        for j in picks
    ]


def add_label_noise(
    rng: np.random.Generator,
    labels: Sequence[str],
    rate: float,
    label_set: Sequence[str] | None = None,
) -> list[str]:
    """``labels`` with each one, with probability ``rate``, replaced by a different label
    of ``label_set`` (default: the distinct labels present, in order of appearance) —
    conflicting demonstrations. One uniform draw per label, then one choice per flip."""
    options = list(label_set) if label_set is not None else list(dict.fromkeys(labels))
    flips = rng.random(len(labels)) < rate
    out = list(labels)
    for i in np.flatnonzero(flips):
        others = [lab for lab in options if lab != out[i]]
        if others:
            out[i] = others[int(rng.integers(len(others)))]
    return out
