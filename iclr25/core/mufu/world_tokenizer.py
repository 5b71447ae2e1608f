"""The syllable-level tokenizer of the embedded model, built offline from a :class:`World`.

A ``tokenizers`` WordPiece model saved as a ``PreTrainedTokenizerFast``:

- words of the world's languages split into CV syllables: the first syllable of a word is
  a token (``ke``), the others continuation tokens (``##de``, ``##ñu``), so
  ``kedeñu`` → ``ke ##de ##ñu`` and decoding joins them back;
- source words (capitals), language names (``Tel``), the default prompts' instruction
  words, ``:`` ``.`` and the newline are whole tokens;
- ``[BOS]`` starts every encoded text; ``[EOS]`` ends a translation; ``[PAD]``, ``[UNK]``.

WordPiece matches the longest vocabulary entry first, so a whole-word entry must never
be a prefix of a target-language word: :func:`build_tokenizer` checks it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from iclr25.core.mufu import prompts
from iclr25.core.mufu.world import LANGUAGES, SOURCE, World

PAD, BOS, EOS, UNK = "[PAD]", "[BOS]", "[EOS]", "[UNK]"
SPECIALS = (PAD, BOS, EOS, UNK)
PUNCT = ("\n", ":", ".")
MAX_POSITIONS = 256


def display_names() -> dict[str, str]:
    """Language code -> the name used in prompts (``tel`` -> ``Tel``)."""
    return {code: code.capitalize() for code in (SOURCE, *LANGUAGES)}


def instruction_words() -> list[str]:
    names = display_names()
    text = " ".join(
        [
            prompts.MUFU_INSTRUCTION,
            prompts.PLAIN_INSTRUCTION,
            prompts.MUFU_TEMPLATE,
            prompts.PLAIN_TEMPLATE,
        ]
    )
    for field in prompts.FIELDS:
        text = text.replace("{" + field + "}", " ")
    words = re.split(r"[\s:.]+", text)
    return sorted({w for w in words if w} | set(names.values()))


def syllables(world: World) -> list[str]:
    found = set()
    for lang in LANGUAGES:
        for form in world.languages[lang].lexicon:
            found.update(form[i : i + 2] for i in range(0, len(form), 2))
    return sorted(found)


def vocabulary(world: World) -> list[str]:
    sylls = syllables(world)
    whole = instruction_words() + list(world.source_lexicon)
    vocab = [*SPECIALS, *PUNCT, *whole, *sylls, *[f"##{s}" for s in sylls]]
    if len(set(vocab)) != len(vocab):
        raise ValueError("duplicate entries in the world vocabulary")
    target_words = {f for lang in LANGUAGES for f in world.languages[lang].lexicon}
    prefixes = {t[:i] for t in target_words for i in range(1, len(t) + 1)}
    clashes = [w for w in whole if w in prefixes]  # w is a prefix of a target word
    if clashes:
        raise ValueError(f"whole-word tokens are prefixes of target words: {clashes[:5]}")
    return vocab


def build_tokenizer(world: World, out: Path | None = None):
    """The PreTrainedTokenizerFast (saved to ``out`` when given)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(vocabulary(world))}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token=UNK, max_input_chars_per_word=64))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"[^\S\n]+"), behavior="removed"),
            pre_tokenizers.Split(Regex(r"[\n:.]"), behavior="isolated"),
        ]
    )
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", special_tokens=[(BOS, vocab[BOS])]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=PAD,
        padding_side="left",
        model_max_length=MAX_POSITIONS,
    )
    if out is not None:
        fast.save_pretrained(out)
        config_path = Path(out) / "tokenizer_config.json"
        config = json.loads(config_path.read_text())
        config["tokenizer_class"] = "PreTrainedTokenizerFast"  # loads on transformers 4 and 5
        config_path.write_text(json.dumps(config, indent=2) + "\n")
    return fast
