"""What the embedded mufu base model has learnt, word by word, against how often it saw each word.

For every word of 400 validation sentences (the training script's probe sentences, never
its final check's) translated into four high-resource languages (``sam``, ``dov`` from the
target's family, ``ubo``, ``une`` from the unrelated one), the model reads the plain prompt
and the reference up to that word (teacher forcing) and the word counts as known when the
greedy choice of every one of its syllable tokens is right. Each word is binned by the
expected number of times its lemma appeared in answers into that language during
pretraining: steps × (plain examples per step × (1 − tel share) + Mufu examples per
step) / 10 languages × the lemma's expected count per sentence (class draws × Zipf
probability, with the training exponent ``train_zipf_s`` when the recipe sets one).
The table says how many exposures per language a word needs before the model knows it,
and which share of the characters (what chrF counts) those words carry.

    python scripts/mufu_word_exposure.py            # the bundled model
    python scripts/mufu_word_exposure.py --model DIR --out FILE.json

Writes ``experiments/results/mufu-word-exposure.json`` (docs/mufu.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LANGS = ("sam", "dov", "ubo", "une")
BINS = (0, 10, 30, 100, 300, 1000, 3000, 10**9)


def expected_exposures(world, cfg: dict) -> list[float]:
    """Per lemma: expected appearances in answers into one high-resource language."""
    import numpy as np

    if cfg.get("train_zipf_s") is not None:  # training sentences drawn with a flatter Zipf
        from dataclasses import replace

        from iclr25.core.mufu.world import World

        world = World(replace(world.config, zipf_s=cfg["train_zipf_s"]))
    wc = world.config
    draws = {
        "N": 2 + wc.adposition_p,  # subject, object, adpositional noun
        "V": 1.0,
        "A": wc.adjective_p * (2 + wc.adposition_p),
        "P": wc.adposition_p,
    }
    per_sentence = np.zeros(wc.n_lemmas)
    for c, ids in world.class_lemmas.items():
        per_sentence[ids] = draws[c] * world.class_probs[c]
    plain = cfg["plain_batch"] * (1 - cfg["mufu_share"]) * (1 - cfg["target_share"])
    mufu = cfg["mufu_batch"] * cfg["mufu_share"]
    sentences = cfg["steps"] * (plain + mufu) / 10
    return list(per_sentence * sentences)


def analyse(model_dir: Path, n: int = 400) -> dict:
    import numpy as np
    import torch

    from iclr25.core.mufu import prompts, sft
    from iclr25.core.mufu.models import load
    from iclr25.core.mufu.pretrain import probe_sentences
    from iclr25.core.mufu.world import SOURCE, World, WorldConfig
    from iclr25.core.mufu.world_tokenizer import display_names

    torch.set_num_threads(1)
    log = json.loads((model_dir / "training_log.json").read_text())
    world = World(WorldConfig(**json.loads((model_dir / "world.json").read_text())))
    loaded = load(model_dir, kinds=("causal",))
    model, tok = loaded.model, loaded.tokenizer
    model.eval()
    exposures = expected_exposures(world, log["config"])
    sentences = probe_sentences(world, n)
    rows = []  # (exposures, known, characters)
    for lang in LANGS:
        spec = prompts.PromptSpec("plain", lang, names=display_names())
        enc = sft.encode(
            tok,
            [prompts.render({"source": world.render(s, SOURCE)}, spec) for s in sentences],
            [world.render(s, lang) for s in sentences],
        )
        ids, mask, labels = sft.collate(enc, range(len(enc)), tok.pad_token_id)
        with torch.no_grad():
            right = (
                model(input_ids=ids, attention_mask=mask).logits[:, :-1].argmax(-1)
                == (labels[:, 1:])
            )
        for b, sentence in enumerate(sentences):
            start = enc.prompt_lengths[b]
            tokens = tok.convert_ids_to_tokens(enc.input_ids[b][start:-1])  # not the EOS
            words: list[list[bool]] = []
            for j, t in enumerate(tokens):
                if not t.startswith("##"):
                    words.append([])
                words[-1].append(bool(right[b, start + j - 1]))
            for lemma, ok in zip(world.lemma_order(sentence, lang), words, strict=True):
                form = world.languages[lang].lexicon[lemma]
                rows.append((exposures[lemma], all(ok), len(form)))
    data = np.array(rows, dtype=np.float64)
    chars = data[:, 2].sum()
    bins = []
    for lo, hi in zip(BINS, BINS[1:], strict=False):
        sel = (data[:, 0] >= lo) & (data[:, 0] < hi)
        if sel.any():
            bins.append(
                {
                    "exposures": [lo, hi],
                    "words": int(sel.sum()),
                    "known": float(data[sel, 1].mean()),
                    "char_share": float(data[sel, 2].sum() / chars),
                }
            )
    return {
        "model_sha256": log.get("sha256"),
        "steps": log["config"]["steps"],
        "languages": list(LANGS),
        "sentences": n,
        "bins": bins,
        "known_words": float(data[:, 1].mean()),
        "known_chars": float((data[:, 1] * data[:, 2]).sum() / chars),
    }


def main(argv=None) -> int:
    from iclr25 import atomic
    from iclr25.core.mufu.models import bundled_path
    from iclr25.provenance import provenance

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=bundled_path())
    parser.add_argument(
        "--out", type=Path, default=ROOT / "experiments" / "results" / "mufu-word-exposure.json"
    )
    args = parser.parse_args(argv)
    result = analyse(args.model)
    for b in result["bins"]:
        lo, hi = b["exposures"]
        print(
            f"exposures {lo:>5}-{hi:<6} words {b['words']:5d}  known {b['known']:.2f}  "
            f"chars {b['char_share']:.2f}"
        )
    print(f"known: {result['known_words']:.2f} of words, {result['known_chars']:.2f} of chars")
    result["provenance"] = provenance(["python", "scripts/mufu_word_exposure.py"], [0])
    atomic.write_json(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
