"""``style-check study``: does a generative model trained on artists' works copy their
styles, as the check sees it? A study that can fail.

Pipeline per seed (one task of the execution layer; everything is drawn from the seed):

1. references: ``n_artists`` synthetic artists at ``hard`` difficulty (pairs sharing
   palette and stroke shape; the first pair identical, so not every style is unique),
   ``works_per_artist`` works each, rendered at ``render_px`` and reduced to ``size_px``;
   the last ``heldout_per_artist`` works of each artist are held out;
2. encoders: the style statistics, and the self-supervised CNN (``ssl.py``) trained on
   the reference works; for each, DeepMatch uniqueness and the attributor
   (``verdict.fit_reference``);
3. generative models (``generator.py``): a class-conditional DDPM on the references, and
   the control, the same network trained unconditionally for the same number of steps;
   both cached under the iclr25 cache folder;
4. generated sets of ``generated_per_artist`` images: conditional samples for each
   artist, and unconditional samples assigned to the artists in turn (they were made
   for no one, so attributing them "to their artist" is chance, 1 / n_artists);
5. the check (``verdict.assess_sets``, the code ``check`` runs) on four conditions:
   ``heldout`` (real works of the artist, positive control), ``other_artists`` (real
   held-out works of the *other* artists, negative control), ``conditional`` and
   ``unconditional``.

Per seed and condition and encoder: the share of artists whose set is attributed to them
(set level, the paper's framing), the per-image top-1 and attributed shares, and the
artists at risk (unique *and* attributed). Across seeds: mean and 95% t-interval.

Hypothesis and pass conditions, fixed here before any run (``PASS_CONDITIONS``), per
encoder, on the set attribution rate r:
  P1  r(conditional) is above chance: the interval's lower bound > 1 / n_artists;
  P2  r(conditional) > r(unconditional): the paired per-seed difference's lower bound > 0;
  C1  positive control: r(heldout) lower bound > 1 / n_artists;
  C2  negative control: r(other_artists) mean <= 1 / n_artists;
  C3  unconditional control not above chance: r(unconditional) lower bound <= 1 / n_artists.
The effect appeared under an encoder when P1 and P2 hold with the controls C1-C3; when P1
or P2 fails, the study says plainly that class-conditional samples are not attributed
above chance at this size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from iclr25.core.style_check.check import CheckConfig
from iclr25.core.style_check.configs import GeneratorConfig, SSLConfig
from iclr25.core.style_check.deepmatch import DeepMatchConfig

CONDITIONS = ("heldout", "other_artists", "conditional", "unconditional")
METRICS = ("set_attribution_rate", "set_classified_rate", "image_top1", "image_attributed")
PASS_CONDITIONS = {
    "P1": "conditional set attribution rate above chance (95% interval lower bound > 1/A)",
    "P2": "conditional above unconditional (paired difference, interval lower bound > 0)",
    "C1": "positive control: held-out real works, lower bound > 1/A",
    "C2": "negative control: other artists' real works, mean <= 1/A",
    "C3": "unconditional samples not above chance: lower bound <= 1/A",
}
HYPOTHESIS = (
    "Images a class-conditional generative model trained on the reference works makes for "
    "an artist are attributed to that artist at the set level above chance, and above the "
    "samples of the same model trained without artist labels (equal budget)."
)


@dataclass(frozen=True)
class StudyConfig:
    n_artists: int = 8
    works_per_artist: int = 40  # references + held-out
    heldout_per_artist: int = 8  # positive control, and negative control for the others
    generated_per_artist: int = 10  # images per generated set
    size_px: int = 32  # what the generator, the CNN and the check see
    render_px: int = 96  # the works are drawn at this side, then reduced (anti-aliased)
    difficulty: str = "hard"
    n_seeds: int = 3
    generator: GeneratorConfig = field(default_factory=GeneratorConfig)
    ssl: SSLConfig = field(default_factory=SSLConfig)
    check: CheckConfig = field(default_factory=CheckConfig)
    deepmatch: DeepMatchConfig = field(default_factory=DeepMatchConfig)
    model_cache: bool = True  # reuse trained generators and CNNs from the cache folder


def quick_config() -> StudyConfig:
    """The reduced study (``--quick``): 6 artists at 16 px, shorter training."""
    return StudyConfig(
        n_artists=6,
        works_per_artist=30,
        heldout_per_artist=6,
        generated_per_artist=8,
        size_px=16,
        render_px=64,
        generator=GeneratorConfig(size_px=16, steps=500),
        ssl=SSLConfig(size_px=16, steps=150),
    )


def with_size(config: StudyConfig) -> StudyConfig:
    """Keep the generator's and the CNN's input side equal to the study's."""
    return replace(
        config,
        generator=replace(config.generator, size_px=config.size_px),
        ssl=replace(config.ssl, size_px=config.size_px),
    )


# -- 1. references ---------------------------------------------------------------------------
@dataclass
class Corpus:
    names: list[str]
    images: np.ndarray  # (A * W, S, S, 3) uint8
    labels: np.ndarray  # (A * W,) artist index
    heldout: np.ndarray  # (A * W,) bool


def build_corpus(config: StudyConfig, seed: int) -> Corpus:
    from PIL import Image

    from iclr25.core.style_check.synthetic import make_styled_artist, render_work, work_rng

    images, labels, names = [], [], []
    for a in range(config.n_artists):
        style = make_styled_artist(seed, a, config.difficulty)
        names.append(style.name)
        for j in range(config.works_per_artist):
            work = render_work(style, work_rng(seed, seed, a, j), config.render_px)
            small = work.resize((config.size_px,) * 2, Image.Resampling.LANCZOS)
            images.append(np.asarray(small, dtype=np.uint8))
            labels.append(a)
    index = np.arange(len(labels)) % config.works_per_artist
    heldout = index >= config.works_per_artist - config.heldout_per_artist
    return Corpus(names, np.stack(images), np.array(labels), heldout)


# -- 2./3. encoders and models (cached) -----------------------------------------------------------
def _cached(kind: str, key: str, make: Callable[[], bytes], use_cache: bool) -> bytes:
    from iclr25 import atomic
    from iclr25.paths import cache_dir

    path = cache_dir("style-check", "study") / f"{kind}-{key}.safetensors"
    if use_cache and path.exists():
        return path.read_bytes()
    data = make()
    atomic.write_bytes(path, data)
    return data


def train_ssl_encoder(config: StudyConfig, corpus: Corpus, seed: int):
    from PIL import Image

    from iclr25.core.style_check.encoders.cnn import SSLCNNEncoder, train_encoder
    from iclr25.core.style_check.generator import cache_key

    train = ~corpus.heldout
    key = cache_key(config.ssl, corpus.images[train], corpus.labels[train] * 0, seed)

    def make() -> bytes:
        images = [Image.fromarray(x) for x in corpus.images[train]]
        return train_encoder(images, config.ssl, seed).weights

    return SSLCNNEncoder(_cached("ssl", key, make, config.model_cache))


def train_models(config: StudyConfig, corpus: Corpus, seed: int) -> dict:
    """The class-conditional DDPM and its unconditional control (same budget)."""
    from iclr25.core.style_check import generator as gen

    train = ~corpus.heldout
    x, y = corpus.images[train], corpus.labels[train]
    models = {}
    for conditional in (True, False):
        cfg = replace(config.generator, conditional=conditional)
        key = gen.cache_key(cfg, x, y, seed)

        def make(cfg=cfg) -> bytes:
            return gen.to_bytes(gen.train_generator(x, y, config.n_artists, cfg, seed))

        data = _cached("ddpm", key, make, config.model_cache)
        models["conditional" if conditional else "unconditional"] = gen.from_bytes(data)
    return models


# -- 4. sets -------------------------------------------------------------------------------------
def generated_sets(config: StudyConfig, corpus: Corpus, models: dict, seed: int) -> dict:
    """(images, made_for artist index) per condition."""
    from iclr25.core.style_check.generator import sample

    A, G = config.n_artists, config.generated_per_artist
    target = np.repeat(np.arange(A), G)  # (A * G,)
    rng = np.random.default_rng(seed)
    held = np.flatnonzero(corpus.heldout)
    other = np.concatenate(
        [rng.choice(held[corpus.labels[held] != a], G, replace=False) for a in range(A)]
    )
    return {
        "heldout": (corpus.images[held], corpus.labels[held]),
        "other_artists": (corpus.images[other], target),
        "conditional": (sample(models["conditional"], target, seed + 1), target),
        "unconditional": (sample(models["unconditional"], target, seed + 2), target),
    }


# -- 5. the check --------------------------------------------------------------------------------
def _rates(ref, sets: dict, names: list[str]) -> dict:
    """Set- and image-level figures of one condition under one encoder."""
    rows = []
    for name in names:
        found = sets[name]
        unique = ref.unique_row(name)
        s = found["set_attribution"]
        rows.append(
            {
                "name": name,
                "unique": None if unique is None else bool(unique["unique"]),
                "set_attributed": bool(s["attributed"]),
                "set_classified": bool(s["matches_target"]),
                "image_top1": found["top1_share"],
                "image_attributed": found["image_share"],
                "at_risk": bool(unique is not None and unique["unique"] and s["attributed"]),
            }
        )
    return {
        "set_attribution_rate": float(np.mean([r["set_attributed"] for r in rows])),
        "set_classified_rate": float(np.mean([r["set_classified"] for r in rows])),
        "image_top1": float(np.mean([r["image_top1"] for r in rows])),
        "image_attributed": float(np.mean([r["image_attributed"] for r in rows])),
        "n_at_risk": sum(r["at_risk"] for r in rows),
        "n_attributed_not_unique": sum(r["set_attributed"] and r["unique"] is False for r in rows),
        "artists": rows,
    }


def _encode_all(encoder, arrays: list[np.ndarray]) -> list[np.ndarray]:
    from PIL import Image

    return [encoder.encode([Image.fromarray(x) for x in arr]) for arr in arrays]


def run_seed(config: StudyConfig, seed: int) -> dict:
    """One seed of the study (a pure function of its arguments; JSON-able result). One
    BLAS and one torch thread, so the floats are the same in every process."""
    from iclr25.threads import small_problem_threads

    with small_problem_threads(0):
        return _run_seed(config, seed)


def _run_seed(config: StudyConfig, seed: int) -> dict:
    from iclr25.core.style_check.encoders.stats import StyleStatsEncoder
    from iclr25.core.style_check.verdict import assess_sets, fit_reference

    corpus = build_corpus(config, seed)
    models = train_models(config, corpus, seed)
    sets = generated_sets(config, corpus, models, seed)
    stats = StyleStatsEncoder()
    encoders = [("style-stats", stats, stats.feature_groups)]
    encoders.append(("ssl-cnn", train_ssl_encoder(config, corpus, seed), None))
    train = ~corpus.heldout
    names = corpus.names
    out = {"artists": names, "uniqueness": {}, "conditions": {c: {} for c in CONDITIONS}}
    for enc_name, encoder, groups in encoders:
        X_ref, *X_sets = _encode_all(
            encoder, [corpus.images[train]] + [v[0] for v in sets.values()]
        )
        ref = fit_reference(
            enc_name,
            X_ref,
            np.array(names)[corpus.labels[train]],
            groups,
            config.check,
            config.deepmatch,
            seed,
        )
        out["uniqueness"][enc_name] = {
            "mean_heldout_accuracy": ref.uniqueness["mean_heldout_accuracy"],
            "n_unique": ref.uniqueness["n_unique"],
            "unique": {r["name"]: r["unique"] for r in ref.uniqueness["artists"]},
        }
        for (cond, (_, target)), X in zip(sets.items(), X_sets, strict=True):
            made_for = [names[t] for t in target]
            found = assess_sets(ref, X, made_for, config.check)
            out["conditions"][cond][enc_name] = _rates(ref, found["sets"], names)
    out["generator_final_loss"] = {k: float(np.mean(m.losses[-50:])) for k, m in models.items()}
    return out


# -- across seeds ---------------------------------------------------------------------------------
def t_interval(
    values: list[float], confidence: float = 0.95, bounds: tuple[float, float] = (0.0, 1.0)
) -> dict:
    """Mean and Student-t interval over seeds, clipped to ``bounds`` (the range of a
    rate; (-1, 1) for a difference of rates). A single seed has no interval."""
    from scipy.stats import t

    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    if len(x) < 2:
        return {"mean": mean, "low": None, "high": None, "n": len(x)}
    half = float(t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    low, high = max(bounds[0], mean - half), min(bounds[1], mean + half)
    return {"mean": mean, "low": low, "high": high, "n": len(x)}


def aggregate(per_seed: list[dict], config: StudyConfig) -> dict:
    encoders = list(per_seed[0]["uniqueness"])
    chance = 1.0 / config.n_artists
    table = {
        cond: {
            enc: {m: t_interval([s["conditions"][cond][enc][m] for s in per_seed]) for m in METRICS}
            for enc in encoders
        }
        for cond in CONDITIONS
    }
    verdicts = {enc: judge(per_seed, table, enc, chance) for enc in encoders}
    return {
        "hypothesis": HYPOTHESIS,
        "pass_conditions": PASS_CONDITIONS,
        "chance": chance,
        "conditions": table,
        "uniqueness": {
            enc: t_interval([s["uniqueness"][enc]["mean_heldout_accuracy"] for s in per_seed])
            for enc in encoders
        },
        "n_unique": {enc: [s["uniqueness"][enc]["n_unique"] for s in per_seed] for enc in encoders},
        "at_risk_not_unique": sum(
            r["at_risk"] and r["unique"] is False
            for s in per_seed
            for c in s["conditions"].values()
            for e in c.values()
            for r in e["artists"]
        ),
        "attributed_not_unique": {
            cond: {
                enc: sum(s["conditions"][cond][enc]["n_attributed_not_unique"] for s in per_seed)
                for enc in encoders
            }
            for cond in CONDITIONS
        },
        "verdicts": verdicts,
        "effect_appeared": {enc: v["effect_appeared"] for enc, v in verdicts.items()},
        "statement": statement(verdicts),
    }


def judge(per_seed: list[dict], table: dict, enc: str, chance: float) -> dict:
    """The pass conditions on the set attribution rate under one encoder."""
    metric = "set_attribution_rate"
    cell = {c: table[c][enc][metric] for c in CONDITIONS}
    diff = t_interval(
        [
            s["conditions"]["conditional"][enc][metric]
            - s["conditions"]["unconditional"][enc][metric]
            for s in per_seed
        ],
        bounds=(-1.0, 1.0),
    )
    low = lambda c: cell[c]["low"] if cell[c]["low"] is not None else cell[c]["mean"]  # noqa: E731
    checks = {
        "P1": low("conditional") > chance,
        "P2": (diff["low"] if diff["low"] is not None else diff["mean"]) > 0,
        "C1": low("heldout") > chance,
        "C2": cell["other_artists"]["mean"] <= chance,
        "C3": low("unconditional") <= chance,
    }
    controls = checks["C1"] and checks["C2"] and checks["C3"]
    return {
        "checks": {k: bool(v) for k, v in checks.items()},
        "difference_vs_unconditional": diff,
        "controls_held": bool(controls),
        "effect_appeared": bool(checks["P1"] and checks["P2"] and controls),
    }


def statement(verdicts: dict) -> str:
    """One plain sentence per encoder: did the effect appear?"""
    parts = []
    for enc, v in verdicts.items():
        c = v["checks"]
        if v["effect_appeared"]:
            parts.append(f"{enc}: class-conditional samples are attributed above chance (met)")
        elif not (c["P1"] and c["P2"]):
            parts.append(
                f"{enc}: class-conditional samples are NOT attributed above chance at this size "
                "(not met)"
            )
        else:
            failed = ", ".join(k for k in ("C1", "C2", "C3") if not c[k])
            parts.append(f"{enc}: attributed above chance, but control(s) {failed} failed")
    return "; ".join(parts)


def headline(results: dict) -> str:
    """The figure the demo and the docs quote, from a study's results."""
    first = next(iter(results["verdicts"]))
    cond = results["conditions"]["conditional"][first]["set_attribution_rate"]
    uncond = results["conditions"]["unconditional"][first]["set_attribution_rate"]
    interval = "" if cond["low"] is None else f" [{cond['low']:.2f}, {cond['high']:.2f}]"
    return (
        f"{first}: conditional samples' sets attributed {cond['mean']:.2f}{interval} vs "
        f"unconditional {uncond['mean']:.2f} (chance {results['chance']:.2f}) — "
        f"{results['statement']}"
    )
