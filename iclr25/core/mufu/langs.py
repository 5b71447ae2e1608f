"""Auxiliary languages A_k(t): the k languages nearest to the target (``--aux-langs auto``).

The paper picks "the k closest languages in URIEL" without saying which URIEL distance.
Ours, measured on the paper's own example (paper note: for Acehnese the nearest are
Balinese, Sundanese, Minangkabau, Malay, Indonesian — the group of its Table 1):

- **URIEL** (real language codes): cosine distance between the languages' ``fam``
  vectors (membership in each Glottolog family and sub-family, lang2vec's
  ``family_features.npz``), ties broken by the cosine distance of their ``geo`` vectors
  (``geocoord_features.npz``), then by code. A language with no family data is at
  distance 1 from every other. The data files are read with numpy: ``import
  lang2vec.lang2vec`` fails on current setuptools (it imports ``pkg_resources``).
- **the embedded world** (its language codes): the same cosine distance on its tree
  (:func:`iclr25.core.mufu.world.family_distance`).

Codes: ISO 639-3 (``fra``), ISO 639-1 (``fr``, mapped by lang2vec's table) or NLLB
style (``fra_Latn``, the part before ``_``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.core.mufu import world as world_mod
from iclr25.errors import InputError, UsageError

URIEL_HINT = "install the extra: pip install 'iclr25[mufu]' (it brings lang2vec's URIEL data)"


def is_world(codes: Sequence[str]) -> bool:
    return all(c in world_mod.LANGUAGES for c in codes)


@functools.lru_cache(maxsize=1)
def _uriel() -> dict:
    try:
        import lang2vec  # noqa: F401  (the package itself imports fine; its module does not)
    except ImportError:
        raise UsageError("--aux-langs auto needs lang2vec's URIEL data files", URIEL_HINT) from None
    from importlib import resources

    root = Path(str(resources.files("lang2vec") / "data"))
    fam = np.load(root / "family_features.npz")
    geo = np.load(root / "geocoord_features.npz")
    letters = json.loads((root / "letter_codes.json").read_text())
    fam_langs = [str(x) for x in fam["langs"]]
    geo_langs = [str(x) for x in geo["langs"]]
    return {
        "fam": fam["data"][:, :, 0].astype(np.float64),
        "fam_index": {c: i for i, c in enumerate(fam_langs)},
        "geo": geo["data"][:, :, 0].astype(np.float64),
        "geo_index": {c: i for i, c in enumerate(geo_langs)},
        "letters": letters,
    }


def iso3(code: str) -> str:
    """``fra_Latn`` -> ``fra``; ``fr`` -> ``fra`` (lang2vec's table); else the code."""
    base = code.split("_")[0].split("-")[0].lower()
    return _uriel()["letters"].get(base, base)


def _cosine_distance(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 1.0
    return float(1.0 - a @ b / (na * nb))


def uriel_distance(a: str, b: str) -> tuple[float, float]:
    """(fam cosine distance, geo cosine distance) between two language codes."""
    data = _uriel()
    ia, ib = _index(data, iso3(a), a), _index(data, iso3(b), b)
    fam = _cosine_distance(data["fam"][ia], data["fam"][ib])
    ga, gb = data["geo_index"].get(iso3(a)), data["geo_index"].get(iso3(b))
    geo = 1.0 if ga is None or gb is None else _cosine_distance(data["geo"][ga], data["geo"][gb])
    return fam, geo


def _index(data: dict, code3: str, original: str) -> int:
    if code3 not in data["fam_index"]:
        raise InputError(
            f"unknown language code {original!r} for --aux-langs auto (not in URIEL)",
            "use ISO 639-3 codes (e.g. fra, swh), or list the languages with --aux-langs a,b,c",
        )
    return data["fam_index"][code3]


def distances(target: str, pool: Sequence[str]) -> dict[str, float]:
    """Distance from ``target`` to each language of ``pool`` (world table or URIEL fam)."""
    if is_world([target, *pool]):
        return {lang: world_mod.family_distance(target, lang) for lang in pool}
    return {lang: uriel_distance(target, lang)[0] for lang in pool}


def nearest(target: str, pool: Sequence[str], k: int) -> list[str]:
    """The ``k`` languages of ``pool`` nearest to ``target`` (module docstring)."""
    pool = [lang for lang in dict.fromkeys(pool) if lang != target]
    if k < 1:
        raise UsageError(f"--k {k} must be at least 1", "use --k 1 or more")
    if k > len(pool):
        raise UsageError(
            f"--k {k} is larger than the {len(pool)} languages available "
            f"({', '.join(pool) or 'none'})",
            f"use --k {len(pool)} or fewer, or widen the pool",
        )
    if is_world([target, *pool]):
        key = {lang: (world_mod.family_distance(target, lang), 0.0, lang) for lang in pool}
    else:
        key = {lang: (*uriel_distance(target, lang), lang) for lang in pool}
    return sorted(pool, key=lambda lang: key[lang])[:k]


def parse_aux(value: str, target: str, pool: Sequence[str], k: int) -> list[str]:
    """``--aux-langs``: ``auto`` (k nearest of ``pool``), ``all`` (the pool) or ``a,b,c``."""
    value = value.strip()
    if value == "auto":
        return nearest(target, pool, k)
    if value == "all":
        langs = [lang for lang in pool if lang != target]
    else:
        langs = [x.strip() for x in value.split(",") if x.strip()]
    if not langs:
        raise UsageError("--aux-langs is empty", "give auto, all or a comma-separated list")
    if target in langs:
        raise UsageError(
            f"the target language {target!r} is among the auxiliary languages",
            "remove it from --aux-langs",
        )
    if len(set(langs)) != len(langs):
        raise UsageError(f"--aux-langs repeats a language: {value}", "name each language once")
    return langs


def seq2seq_pool(tokenizer) -> list[str]:
    """Language codes a seq2seq teacher's tokenizer knows (``fra_Latn``, ``__fr__``)."""
    import re

    found = []
    for token in tokenizer.get_vocab():
        if re.fullmatch(r"[a-z]{3}_[A-Z][a-z]{3}", token):
            found.append(token)
        elif re.fullmatch(r"__[a-z]{2,3}__", token):
            found.append(token.strip("_"))
    return sorted(found)
