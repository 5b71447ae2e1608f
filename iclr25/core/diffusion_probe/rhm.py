"""The Random Hierarchy Model (Cagnetta, Petrini, Tomasini, Favero & Wyart, PRX 2024), and
any fixed-branching tree grammar given as a rules file.

A grammar has L levels of production rules. Level ℓ = 0 is the root (the class), level L
holds the d = s^L leaves (the datum's tokens). A symbol ``a`` of level ℓ rewrites into one
of its rules, an s-tuple of level-(ℓ+1) symbols, chosen with the rule's weight.

Paper symbols -> code:
    v           -> ``vocab[ℓ]`` for ℓ ≥ 1 (symbols per level; the RHM uses the same v)
    n_c         -> ``vocab[0]`` (classes: the root's symbols)
    m           -> ``rules[ℓ].shape[1]`` (rules per symbol; padded rules have weight 0)
    s           -> ``s`` (branching)
    L           -> ``depth``
    R_ℓ[a, k, i] -> ``rules[ℓ][a, k, i]`` (child i of rule k of symbol a)

The RHM draws, for every level independently, n_ℓ·m distinct s-tuples of level-(ℓ+1)
symbols uniformly without replacement from the v^s possible ones, so no tuple belongs to
two symbols of a level (an unambiguous grammar: every datum has one parse). That needs
n_ℓ·m ≤ v^s. Rules and data are generated from seeds; the rules file format is described
in :func:`load_rules`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.errors import InputError, UsageError


@dataclass(frozen=True)
class RHMSpec:
    v: int = 9  # symbols per level
    m: int = 6  # rules per symbol
    s: int = 3  # branching
    depth: int = 4  # L: levels of rules; d = s^L leaves
    classes: int | None = None  # root symbols n_c (None = v)

    @property
    def n_classes(self) -> int:
        return self.v if self.classes is None else self.classes

    def validate(self) -> None:
        if self.v < 2:
            raise UsageError(f"--v {self.v} is below 2", "use a vocabulary of 2 symbols or more")
        if self.s < 2:
            raise UsageError(f"--s {self.s} is below 2", "use a branching of 2 or more")
        if self.m < 1:
            raise UsageError(f"--m {self.m} is below 1", "use 1 rule per symbol or more")
        if self.depth < 1:
            raise UsageError(f"depth {self.depth} is below 1", "use depths of 1 or more")
        if self.n_classes < 1:
            raise UsageError(f"--classes {self.n_classes} is below 1", "use 1 class or more")
        tuples = self.v**self.s
        largest = tuples // max(self.n_classes, self.v)
        if max(self.n_classes, self.v) * self.m > tuples:
            raise UsageError(
                f"classes·m = {max(self.n_classes, self.v)}·{self.m} exceeds v^s = {tuples}: "
                "the rules cannot be distinct",
                f"use --m {largest} or less (or a larger --v / --s)",
            )


@dataclass
class Grammar:
    """Rules and weights per level (module docstring); ``vocab`` has L + 1 entries."""

    rules: list[np.ndarray]  # rules[ℓ]: (vocab[ℓ], m_ℓ, s) int64
    weights: list[np.ndarray]  # weights[ℓ]: (vocab[ℓ], m_ℓ) float64, rows sum to 1
    vocab: list[int]  # symbols at levels 0..L (vocab[0] = classes, vocab[L] = leaf symbols)
    s: int

    @property
    def depth(self) -> int:
        return len(self.rules)

    @property
    def d(self) -> int:
        return self.s**self.depth

    @property
    def classes(self) -> int:
        return self.vocab[0]

    def truncated(self, depth: int) -> Grammar:
        """The grammar of the top ``depth`` levels (depths share the upper rules)."""
        return Grammar(self.rules[:depth], self.weights[:depth], self.vocab[: depth + 1], self.s)

    def to_json(self) -> dict:
        return {
            "s": self.s,
            "vocab": list(self.vocab),
            "levels": [
                {"rules": r.tolist(), "weights": w.tolist()}
                for r, w in zip(self.rules, self.weights, strict=True)
            ],
        }


def sample_rules(spec: RHMSpec, rng: np.random.Generator) -> Grammar:
    """Random rules per level (distinct tuples within a level), uniform rule weights."""
    spec.validate()
    vocab = [spec.n_classes] + [spec.v] * spec.depth
    rules, weights = [], []
    tuples = spec.v**spec.s
    # digits of tuple index t in base v, most significant first: (v^s, s)
    digits = (np.arange(tuples)[:, None] // spec.v ** np.arange(spec.s - 1, -1, -1)) % spec.v
    for level in range(spec.depth):
        n = vocab[level]
        chosen = rng.choice(tuples, size=n * spec.m, replace=False)
        rules.append(digits[chosen].reshape(n, spec.m, spec.s).astype(np.int64))
        weights.append(np.full((n, spec.m), 1.0 / spec.m))
    return Grammar(rules, weights, vocab, spec.s)


def generate(grammar: Grammar, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` data: (leaves (n, d) int64, classes (n,) int64). Root uniform over classes."""
    root = rng.integers(0, grammar.classes, size=n)
    symbols = root[:, None]  # (n, 1)
    for level in range(grammar.depth):
        cum = np.cumsum(grammar.weights[level], axis=1)  # (n_ℓ, m)
        u = rng.random(symbols.shape)
        k = (cum[symbols] < u[..., None] * cum[symbols][..., -1:]).sum(-1)  # (n, s^ℓ)
        k = np.minimum(k, grammar.rules[level].shape[1] - 1)
        children = grammar.rules[level][symbols, k]  # (n, s^ℓ, s)
        symbols = children.reshape(n, -1)  # (n, s^(ℓ+1))
    return symbols.astype(np.int64), root.astype(np.int64)


# ---------------------------------------------------------------------------------------
# Rules files
# ---------------------------------------------------------------------------------------
def load_rules(path: Path) -> Grammar:
    """A rules file (JSON)::

        {"s": 3, "vocab": [n_0, n_1, ..., n_L],
         "levels": [{"rules": [[[c1, c2, c3], ...], ...],      # per symbol of level ℓ
                     "weights": [[w1, ...], ...]}, ...]}        # optional, positive

    ``levels[ℓ]["rules"][a]`` lists the s-tuples symbol ``a`` of level ℓ rewrites into
    (symbols of level ℓ+1, 0-based). Symbols may have different numbers of rules.
    Weights are normalised per symbol; absent weights are uniform.
    """
    try:
        raw = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: no such rules file", "check the --rules path") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not a JSON rules file ({exc})", "see `--help`") from None
    return parse_rules(raw, str(path))


def parse_rules(raw: object, where: str = "rules") -> Grammar:
    def bad(what: str) -> InputError:
        return InputError(
            f"{where}: {what}", "see the rules format in `diffusion-probe rhm --help`"
        )

    if not isinstance(raw, dict) or not {"s", "vocab", "levels"} <= set(raw):
        raise bad("needs the keys s, vocab and levels")
    s, vocab, levels = raw["s"], raw["vocab"], raw["levels"]
    if not isinstance(s, int) or s < 2:
        raise bad(f"s must be an integer ≥ 2, got {s!r}")
    if not isinstance(levels, list) or not levels:
        raise bad("levels is empty")
    if (
        not isinstance(vocab, list)
        or len(vocab) != len(levels) + 1
        or not all(isinstance(n, int) and n >= 1 for n in vocab)
    ):
        raise bad(f"vocab must list {len(levels) + 1} positive symbol counts (one per level)")
    rules, weights = [], []
    for level, entry in enumerate(levels):
        r, w = _parse_level(entry, level, s, vocab[level], vocab[level + 1], bad)
        rules.append(r)
        weights.append(w)
    return Grammar(rules, weights, list(vocab), s)


def _parse_level(entry, level, s, n_in, n_out, bad):
    table = entry.get("rules") if isinstance(entry, dict) else None
    if not isinstance(table, list) or len(table) != n_in:
        raise bad(f"level {level} must list rules for each of its {n_in} symbols")
    given = entry.get("weights")
    m = max((len(t) for t in table if isinstance(t, list)), default=0)
    rules = np.zeros((n_in, max(m, 1), s), np.int64)
    weights = np.zeros((n_in, max(m, 1)))
    for a, tuples in enumerate(table):
        if not isinstance(tuples, list) or not tuples:
            raise bad(f"level {level}, symbol {a}: empty rule list")
        for k, t in enumerate(tuples):
            if not isinstance(t, list) or len(t) != s:
                raise bad(f"level {level}, symbol {a}, rule {k}: arity {_len(t)} is not s = {s}")
            if not all(isinstance(c, int) and 0 <= c < n_out for c in t):
                raise bad(f"level {level}, symbol {a}, rule {k}: symbols outside 0..{n_out - 1}")
            rules[a, k] = t
        w = [1.0] * len(tuples) if given is None else _weights_row(given, a, len(tuples))
        if w is None or not all(isinstance(x, (int, float)) and x > 0 for x in w):
            raise bad(f"level {level}, symbol {a}: weights must be positive, one per rule")
        weights[a, : len(tuples)] = np.asarray(w, float) / float(np.sum(w))
    return rules, weights


def _weights_row(given, a, count):
    if not isinstance(given, list) or a >= len(given) or not isinstance(given[a], list):
        return None
    return given[a] if len(given[a]) == count else None


def _len(t) -> str:
    return str(len(t)) if isinstance(t, list) else "?"
