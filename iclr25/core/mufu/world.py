"""A seeded synthetic language world: the offline analog of FLORES for the Mufu experiment.

Lim, Gupta, Yu, Cohn, "Mufu: Multilingual Fused Learning for Low-Resource Translation with
LLM" (ICLR 2025) finetune on 787 FLORES-200 pairs of a low-resource target t, prompted
with automatic translations ŷ_a into the k URIEL-nearest auxiliary languages a ∈ A_k(t).
FLORES cannot be downloaded here, so this module builds a world with the properties the
method relies on (paper note, "Offline analog"):

- a **source** language ``src`` (word-level: one token per word, written in capitals);
- a **family** whose proto-language has random CV-syllable word forms for a Zipfian
  lexicon (``n_lemmas`` lemmas in four classes: nouns, verbs, adjectives, adpositions),
  and whose daughters inherit them along a tree with
  * regular sound changes: on each edge some consonants (and vowels) shift to sounds the
    parent does not have, in *every* syllable that contains them (a renaming, so the
    correspondence between two daughters is a function on syllables),
  * lexical replacement: on each edge a share of lemmas gets a new, unrelated form,
  * word-order parameters (verb position, adjective and adposition order) set at the
    internal nodes, so close sisters share the target's order;
- the target ``tel`` with two close sisters (``sam``, ``ser``) and three distant
  relatives (``dov``, ``dil``, ``dek``);
- an **unrelated family** of five languages (``ubo``, ``ura``, ``uki``, ``umi``, ``une``)
  built the same way from an independent proto-lexicon.

Distances (the role URIEL plays in the paper): each language's feature vector marks the
tree nodes above it and itself (as URIEL's ``fam`` features mark a language's families);
the distance is the cosine distance of these vectors, so languages of different families
are at distance 1. For ``tel``: sisters 0.25 < ``dov`` 0.42 < ``dil``/``dek`` 0.71 <
unrelated 1. Everything is a pure function of :class:`WorldConfig`.

Lexicon frequencies: within each class p(rank r) ∝ r^-s with ``zipf_s`` = 1.0, Zipf's
law for natural text (round 3; it was 0.8). With 0.8 the 200 most frequent lemmas were
76 % of the word tokens and the rarest lemma came once in ~650 sentences; with 1.0 they
are 84 % and once in ~1,200. chrF weighs every word by its characters, so with 0.8 a
model had to know most of the tail to reach chrF 80; 1.0 keeps rare words (787 test-size
sentences still miss many lemmas: tested) while the frequent core decides most of the
score, as in real text. The word forms do not depend on ``zipf_s`` (only sentence
sampling does).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

SOURCE = "src"
TARGET = "tel"
SISTERS = ("sam", "ser")
DISTANT = ("dov", "dil", "dek")
UNRELATED = ("ubo", "ura", "uki", "umi", "une")
FAMILY = (TARGET, *SISTERS, *DISTANT)
LANGUAGES = (*FAMILY, *UNRELATED)  # every language a sentence can be translated into

#: (child, parent, edge length): the family trees. Edge length scales the changes.
TREE = (
    ("west", "proto", 1.0),
    ("core", "west", 0.5),
    ("tel", "core", 1.0),
    ("sam", "core", 1.0),
    ("ser", "core", 1.0),
    ("dov", "west", 1.5),
    ("east", "proto", 1.0),
    ("dil", "east", 1.0),
    ("dek", "east", 1.0),
    ("u_north", "u_proto", 1.0),
    ("ubo", "u_north", 1.0),
    ("ura", "u_north", 1.0),
    ("u_south", "u_proto", 1.0),
    ("uki", "u_south", 1.0),
    ("umi", "u_south", 1.0),
    ("une", "u_south", 1.0),
)
ROOTS = ("proto", "u_proto")

# Phoneme pools: one character each, so a syllable is exactly two characters (C + V).
PROTO_CONSONANTS = "ptkmnslrwjbd"
EXTRA_CONSONANTS = "fgvzhcxqčšžŋñłřçďťśźńĺŕ"
PROTO_VOWELS = "aeiou"
EXTRA_VOWELS = "yäöüáéíóú"
SOURCE_LETTERS = "ABDEFGHIKLMNOPRSTUVZ"  # capitals: source words never look like targets

POS_SHARES = {"N": 0.55, "V": 0.25, "A": 0.15, "P": 0.05}  # lexicon share per class


@dataclass(frozen=True)
class WorldConfig:
    seed: int = 0
    n_lemmas: int = 500  # ~500 lemmas, as in the issue
    zipf_s: float = 1.0  # p(rank r) ∝ r^-s within a class: Zipf's law (module docstring)
    adjective_p: float = 0.3  # chance a noun phrase carries an adjective
    adposition_p: float = 0.4  # chance of an adpositional phrase
    consonant_shifts_per_length: float = 1.5  # shifted consonants per unit edge length
    vowel_shifts_per_length: float = 0.7
    replacement_per_length: float = 0.06  # share of lemmas replaced per unit edge length
    order_flip_p: float = 0.5  # chance an internal edge flips each word-order parameter


@dataclass(frozen=True)
class Sentence:
    """A sentence as lemma ids with its roles: (lemma, role) pairs, roles S/V/O/Sa/Oa/P/Pn/Pa."""

    words: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Language:
    code: str
    lexicon: tuple[str, ...]  # lemma id -> word form (CV syllables)
    verb_position: str  # "SVO", "SOV" or "VSO"
    adjective_after: bool
    postpositions: bool
    ancestors: tuple[str, ...]  # tree nodes from the root down to the language itself


class World:
    """The languages of one :class:`WorldConfig` and sentence sampling."""

    def __init__(self, config: WorldConfig = WorldConfig()) -> None:
        self.config = config
        rng = np.random.default_rng([config.seed, 7001])
        self.pos = _assign_classes(config.n_lemmas)  # (n_lemmas,) class letter
        self.class_lemmas = {c: np.flatnonzero(self.pos == c) for c in POS_SHARES}
        self.class_probs = {
            c: _zipf(len(ids), config.zipf_s) for c, ids in self.class_lemmas.items()
        }
        self.source_lexicon = _source_words(rng, config.n_lemmas)
        self.languages: dict[str, Language] = {}
        for root in ROOTS:
            self._grow(root, rng)

    # -- building ---------------------------------------------------------------------
    def _grow(self, root: str, rng: np.random.Generator) -> None:
        """Proto-lexicon of ``root`` and its daughters, depth first (edges in TREE order)."""
        forms = _proto_lexicon(rng, self.config.n_lemmas, self.frequency_quantile)
        order = (int(rng.integers(3)), int(rng.integers(2)), int(rng.integers(2)))
        nodes = {root: (forms, PROTO_CONSONANTS, PROTO_VOWELS, order, (root,))}
        for child, parent, length in TREE:
            if parent not in nodes:
                continue
            nodes[child] = self._descend(nodes[parent], child, length, rng)
            if child in LANGUAGES:
                forms_c, _, _, order_c, path = nodes[child]
                self.languages[child] = Language(
                    child,
                    tuple(forms_c),
                    ("SVO", "SOV", "VSO")[order_c[0]],
                    bool(order_c[1]),
                    bool(order_c[2]),
                    path,
                )

    def _descend(self, node, child: str, length: float, rng: np.random.Generator):
        forms, consonants, vowels, order, path = node
        cfg = self.config
        n_c = max(1, round(cfg.consonant_shifts_per_length * length))
        n_v = round(cfg.vowel_shifts_per_length * length)
        shift_c, consonants = _shift(rng, consonants, EXTRA_CONSONANTS + PROTO_CONSONANTS, n_c)
        shift_v, vowels = _shift(rng, vowels, EXTRA_VOWELS + PROTO_VOWELS, n_v)
        table = {**shift_c, **shift_v}
        new = ["".join(table.get(ch, ch) for ch in form) for form in forms]
        replaced = rng.random(len(new)) < cfg.replacement_per_length * length
        taken = set(new)
        for lemma in np.flatnonzero(replaced):
            new[lemma] = _fresh_form(rng, consonants, vowels, len(forms[lemma]) // 2, taken)
            taken.add(new[lemma])
        if child in LANGUAGES:
            child_order = order  # leaves keep their parent's word order (sisters share it)
        else:
            flips = rng.random(3) < cfg.order_flip_p
            child_order = (
                int((order[0] + rng.integers(1, 3)) % 3) if flips[0] else order[0],
                1 - order[1] if flips[1] else order[1],
                1 - order[2] if flips[2] else order[2],
            )
        return new, consonants, vowels, child_order, (*path, child)

    def frequency_quantile(self, lemma: int) -> float:
        """The lemma's rank within its class over the class size (0 = most frequent)."""
        ids = self.class_lemmas[self.pos[lemma]]
        return float(np.searchsorted(ids, lemma)) / len(ids)

    # -- sentences ----------------------------------------------------------------------
    def sample(self, rng: np.random.Generator) -> Sentence:
        """A sentence: subject (adj) verb object (adj) [adposition noun (adj)]."""
        cfg = self.config
        words: list[tuple[int, str]] = [(self._draw(rng, "N"), "S")]
        if rng.random() < cfg.adjective_p:
            words.append((self._draw(rng, "A"), "Sa"))
        words.append((self._draw(rng, "V"), "V"))
        words.append((self._draw(rng, "N"), "O"))
        if rng.random() < cfg.adjective_p:
            words.append((self._draw(rng, "A"), "Oa"))
        if rng.random() < cfg.adposition_p:
            words.append((self._draw(rng, "P"), "P"))
            words.append((self._draw(rng, "N"), "Pn"))
            if rng.random() < cfg.adjective_p:
                words.append((self._draw(rng, "A"), "Pa"))
        return Sentence(tuple(words))

    def sample_many(self, rng: np.random.Generator, n: int, exclude=()) -> list[Sentence]:
        """``n`` distinct sentences, none of them in ``exclude`` (e.g. another split)."""
        seen = set(exclude)
        out: list[Sentence] = []
        while len(out) < n:
            s = self.sample(rng)
            if s not in seen:
                seen.add(s)
                out.append(s)
        return out

    def _draw(self, rng: np.random.Generator, pos: str) -> int:
        ids = self.class_lemmas[pos]
        return int(ids[rng.choice(len(ids), p=self.class_probs[pos])])

    def lemma_order(self, sentence: Sentence, lang: str) -> list[int]:
        """The sentence's lemma ids in ``lang``'s word order."""
        return _ordered(sentence, self.languages[lang])

    def render(self, sentence: Sentence, lang: str) -> str:
        """The sentence in ``lang`` (``src`` or a world language), words joined by spaces."""
        if lang == SOURCE:
            return " ".join(self.source_lexicon[w] for w, _ in sentence.words)
        language = self.languages[lang]
        return " ".join(language.lexicon[w] for w in _ordered(sentence, language))

    # -- distances ----------------------------------------------------------------------
    @functools.cached_property
    def distances(self) -> dict[str, dict[str, float]]:
        """Cosine distance of tree-membership vectors (URIEL ``fam`` style), all pairs."""
        return {a: {b: family_distance(a, b) for b in LANGUAGES if b != a} for a in LANGUAGES}

    def nearest(self, target: str, k: int, pool=LANGUAGES) -> list[str]:
        """The ``k`` languages of ``pool`` nearest to ``target`` (ties: by code)."""
        ranked = sorted((family_distance(target, b), b) for b in pool if b != target)
        return [b for _, b in ranked[:k]]


# ---------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------
@functools.cache
def _ancestors(lang: str) -> tuple[str, ...]:
    parent = {c: p for c, p, _ in TREE}
    path = [lang]
    while path[-1] in parent:
        path.append(parent[path[-1]])
    return tuple(reversed(path))


def family_distance(a: str, b: str) -> float:
    """1 - cosine of the 0/1 vectors of tree nodes above (and including) each language."""
    if a == b:
        return 0.0
    na, nb = set(_ancestors(a)), set(_ancestors(b))
    return 1.0 - len(na & nb) / math.sqrt(len(na) * len(nb))


def _assign_classes(n: int) -> np.ndarray:
    """Class letter per lemma id, classes interleaved so every class has low and high ids."""
    counts = {c: max(1, round(share * n)) for c, share in POS_SHARES.items()}
    counts["N"] += n - sum(counts.values())
    letters = [c for c, k in counts.items() for _ in range(k)]
    # interleave deterministically: lemma i takes the class whose quota is furthest behind
    out, used = [], dict.fromkeys(counts, 0)
    for i in range(n):
        c = max(counts, key=lambda c: counts[c] * (i + 1) / n - used[c])
        out.append(c)
        used[c] += 1
    assert sorted(out) == sorted(letters)
    return np.array(out)


def _zipf(n: int, s: float) -> np.ndarray:
    p = np.arange(1, n + 1, dtype=np.float64) ** -s
    return p / p.sum()


def _syllables_for_rank(q: float) -> int:
    """Frequent lemmas are short: 1 syllable for the top 5 % of a class, 3 for the rarest 40 %."""
    return 1 if q < 0.05 else 2 if q < 0.6 else 3


def _proto_lexicon(rng, n_lemmas: int, quantile_of) -> list[str]:
    taken: set[str] = set()
    forms = []
    for lemma in range(n_lemmas):
        n_syl = _syllables_for_rank(quantile_of(lemma))
        form = _fresh_form(rng, PROTO_CONSONANTS, PROTO_VOWELS, n_syl, taken)
        taken.add(form)
        forms.append(form)
    return forms


def _fresh_form(rng, consonants: str, vowels: str, n_syl: int, taken: set[str]) -> str:
    for _ in range(10_000):
        form = "".join(
            consonants[rng.integers(len(consonants))] + vowels[rng.integers(len(vowels))]
            for _ in range(max(1, n_syl))
        )
        if form not in taken:
            return form
        n_syl += 1 if rng.random() < 0.05 else 0  # a crowded length: allow a longer form
    raise RuntimeError("could not draw a fresh word form")


def _shift(rng, inventory: str, pool: str, n: int) -> tuple[dict[str, str], str]:
    """Shift ``n`` sounds of ``inventory`` to sounds it lacks: ({old: new}, new inventory)."""
    if n <= 0:
        return {}, inventory
    free = [ch for ch in pool if ch not in inventory]
    old = rng.choice(list(inventory), size=min(n, len(inventory)), replace=False)
    new = rng.choice(free, size=len(old), replace=False)
    table = {str(o): str(w) for o, w in zip(old, new, strict=True)}
    return table, "".join(table.get(ch, ch) for ch in inventory)


def _source_words(rng, n: int) -> tuple[str, ...]:
    taken: set[str] = set()
    words = []
    for _ in range(n):
        while True:
            length = int(rng.integers(3, 7))
            word = "".join(
                SOURCE_LETTERS[i] for i in rng.integers(len(SOURCE_LETTERS), size=length)
            )
            if word not in taken:
                break
        taken.add(word)
        words.append(word)
    return tuple(words)


def _ordered(sentence: Sentence, lang: Language) -> list[int]:
    """Lemma ids in the language's word order."""
    by_role: dict[str, list[int]] = {}
    for lemma, role in sentence.words:
        by_role.setdefault(role, []).append(lemma)

    def noun_phrase(noun: str, adj: str) -> list[int]:
        n, a = by_role.get(noun, []), by_role.get(adj, [])
        return n + a if lang.adjective_after else a + n

    subject, obj = noun_phrase("S", "Sa"), noun_phrase("O", "Oa")
    verb = by_role["V"]
    core = {"SVO": subject + verb + obj, "SOV": subject + obj + verb, "VSO": verb + subject + obj}
    words = core[lang.verb_position]
    if "P" in by_role:
        pp = noun_phrase("Pn", "Pa")
        words = words + (pp + by_role["P"] if lang.postpositions else by_role["P"] + pp)
    return words
