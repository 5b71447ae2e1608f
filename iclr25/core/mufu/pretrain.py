"""Pretraining the embedded base model (the experiment's "LLM" and teacher) on a World.

The paper's students are LLMs that already translate into many languages and can copy
from text in their context; its teacher is such an LLM prompted to translate. The
offline analog (issue 22) is a GPT-2-architecture model (3 layers, width 128, syllable
tokens) trained from scratch on a stream of examples from :mod:`world`:

- **plain** prompts P_0(x) → y_L (share ``1 - mufu_share``): translation from the source
  into every language L; unlimited fresh sentences for the ten high-resource languages,
  and for the target ``tel`` only its ``target_pool`` sentences (share ``target_share``)
  — the low-resource condition;
- **mufu** prompts P_k(x) → y_L (share ``mufu_share``) whose target L is never ``tel``:
  k ∈ {1..max_aux} candidates in L's nearest languages (``tel`` excluded), a draft of L
  with word errors (a sister's cognate, a random word of L, a dropped word; error rate
  drawn per prompt up to ``draft_error_max``), source words hidden as ``[UNK]`` with
  probability ``source_dropout`` (so some answers can only come from the candidates),
  and with probability ``bad_candidates_p`` useless candidates (another sentence's, or
  an unrelated family's) — the analog of an LLM's in-context copying, and of its
  robustness to poor candidates.

Deterministic: seeded numpy streams for data, ``torch.manual_seed`` for the weights,
one torch thread (set by the caller). Training: AdamW, linear warm-up then cosine decay
to 10 %, gradient clipping at 1.0, loss on answer tokens only (:mod:`sft`).

Recipe choices (issue 22, round 3; short runs of plain prompts only, 1 thread,
``scripts/mufu_short_run.py``):

- **What limits learning: how often the model sees each word.** The data, loss mask and
  tokenizer were checked first: answers are syllable tokens with no ``[UNK]`` (vocabulary
  1,099: 4 specials, 3 punctuation, instruction words and 500 source words, 284
  syllables and their 284 ``##`` forms), the prompt gets no loss, sentences are 4.5 words
  (~25 tokens with the prompt). The loss sits near the per-language syllable unigram
  level (~5) for the first few hundred steps, then falls slowly: a word of a language
  is known only after ~300-1,000 appearances in answers into that language
  (``scripts/mufu_word_exposure.py``; docs/mufu.md, "The base model"). At equal compute (~100
  CPU-s), 400 steps of batch 32 reached loss 4.47 and chrF 8.9 (``sam``) against 200
  steps of batch 64 at 4.92 and 4.7 (those chrF, by mistake, on 60 of the final check's
  sentences; the loss ranks the runs the same way): halving the batch (``plain_batch`` 32,
  ``mufu_batch`` 12) and doubling the steps is the change that helped.
- **Learning rate 3e-3**: 1e-2 was worse at step 150 (loss 5.49 against 5.22); the
  warm-up stays at 6 % of the steps.
- **Sinusoidal initial position embeddings** (still GPT-2's learned table) did not help
  (loss 5.17 against 4.95 at step 200): not used.
- **Zipf exponent 1.0** (:mod:`world`): see there.
- The mufu share was 0.3 of the steps (rounds 1-3); round 4 lowers it to 0.15 and
  trains longer (5,000 steps have 750 mufu steps, round 3 had 900): those prompts teach
  the copying the experiment's students need, but carry 12 answers against a plain
  step's 32. Measured (30 steps each, 1 thread, an idle-ish machine): a mufu step ~0.11
  CPU-s, a plain step ~0.09, so at 0.15 a CPU-second carries ~1.15x the answers it did
  at 0.3. (Round 3 logged 0.24 CPU-s per step for the same mix: CPU seconds on this
  shared 2-core machine grow with its load, ~2.5x then.)

Round 4 (issue 22): what the budget allows. The word-exposure table (docs/mufu.md)
fits a known-share curve (1 % at ~17 exposures per language, 30 % at ~170, 69 % at
~550, 86 % at ~1,700); under it the share of characters known after N training
sentences per language is 0.28 at N = 7,000 (the round-3 run: 29 % measured),
0.40 at 15,000, 0.53 at 30,000, 0.79 at 150,000 (85 % ≈ chrF 80 needs ~200,000,
~60,000 steps of batch 32: ~4 CPU-hours even with plain steps only). **Flattening the
training sentences' Zipf exponent** (``train_zipf_s``: the high-resource sentences of
both prompt kinds drawn with a smaller exponent, same lexicon; ``tel``'s pool and all
evaluation sentences unchanged) moves exposures from the frequent words to the tail;
under the same curve it gains nothing at N ≤ 15,000 (0.8: 0.41, 0.5: 0.40, 0.0: 0.26
against 0.40) and pays only from ~30,000 sentences per language (0.5: 0.57 against
0.53; at 150,000: 0.85 against 0.79). Short runs (``scripts/mufu_short_run.py
--steps 800 --warmup 50``, plain prompts only, ~100 CPU-s each, 1 thread, chrF on 60
validation sentences into sam / dov / ubo / une / tel):

  ============================  =====================================  =============
  run                           chrF sam / dov / ubo / une / tel       loss, last 50
  ============================  =====================================  =============
  defaults                      12.5 / 11.2 / 12.6 / 12.2 / 11.2       3.40
  ``--train-zipf 0.5``          8.9 / 7.3 / 8.7 / 6.8 / 10.3           4.03
  ``--lr 6e-3``                 8.9 / 7.0 / 6.3 / 6.9 / 9.2            3.86
  ============================  =====================================  =============

  Flattening costs chrF this early, as the exposure curve predicts (N ≈ 2,500 here);
  it was not tested at the N where it would pay, so it stays off (``None``). A 1,200-step
  comparison of exponents 1.0 / 0.5 / 0.0 was stopped at step ~600 (the machine was
  shared by five agents and the full run came first). The higher learning rate is worse.

- **The full runs say the exposure curve was too pessimistic.** The round-4 recipe (mufu
  share 0.15, 5,000 steps, so the learning rate is still high at step 3,000) reached a
  training loss of 1.98 at step 2,000 and 1.38 at step 3,000 where the round-3 run had
  3.14 and 2.22, and validation chrF (30 sentences, every language) rose from 12-24 at
  step 1,500 to 43-60 at 3,500 (round 3: 13-18 at 1,500, 20-25 at its end, 3,000); a
  step cost ~0.11 CPU-s. The round-3 curve had flattened as its learning rate decayed,
  so the ~300-1,000 exposures per known word it measured belong to that run, not to
  the model (the 5,000-step model knows half the words seen 30-100 times per language;
  round 3: 6 %). Which change did it, the mufu share (more plain answers, fewer prompts
  whose answer can be copied from a draft) or the longer high-learning-rate phase, is
  not separated: no run changed one alone. Full runs of this recipe (the script's
  check, 200 held-out sentences per language; high-resource min / ``tel``): 5,000
  steps 53.7 / 37.4 (9.4 CPU-min), 7,000 steps 62.8 / 43.9 (11.4), 10,000 steps (the
  default) 72.6 / 50.0 (17.6). The minimum gains ~27 chrF per doubling of the steps;
  80 is extrapolated near 13,000 steps (~23 CPU-min), not run. Details: docs/mufu.md.

The script (``scripts/train_mufu_model.py``) records a learning curve: chrF into every
language on 30 validation sentences every 500 steps (``probe``), in ``training_log.json``.

Under ``torchrun`` (``parallel``, :mod:`iclr25.distributed_torch`): every rank draws the
whole step's examples from the same streams, keeps its contiguous rows, and back-propagates
its answer-token loss sum divided by the *global* answer-token count, times the number of
ranks (DDP averages gradients over ranks), so the update is the one-process update to float
summation order; the logged loss is the global mean (one all-reduce). Gradients are
synchronised once per step (``no_sync`` on all but a rank's last length group).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from iclr25.core.mufu import prompts, sft
from iclr25.core.mufu.world import LANGUAGES, SOURCE, TARGET, Sentence, World, WorldConfig
from iclr25.core.mufu.world_tokenizer import UNK, display_names

HIGH_RESOURCE = tuple(lang for lang in LANGUAGES if lang != TARGET)


@dataclass(frozen=True)
class PretrainConfig:
    world: WorldConfig = field(default_factory=WorldConfig)
    steps: int = 15000  # ~0.1 CPU-s per step (1 thread): ~27 CPU-minutes (module docstring)
    plain_batch: int = 32  # ~24 tokens per example
    mufu_batch: int = 12  # ~85 tokens per example: about the same tokens per step
    lr: float = 3e-3  # 1e-2 was worse than 3e-3 at equal steps (module docstring)
    warmup: int = 900  # 6 % of the steps
    weight_decay: float = 0.01
    mufu_share: float = 0.15  # share of steps on mufu prompts (0.3 until round 3)
    target_share: float = 0.04  # share of plain examples that translate into tel (its pool)
    target_pool: int = 200  # tel's parallel sentences: the low-resource condition
    train_zipf_s: float | None = None  # training sentences' Zipf exponent (None: the world's)
    max_aux: int = 5
    source_dropout: float = 0.15
    draft_error_max: float = 0.5
    candidate_noise: float = 0.05  # word error rate of pretraining candidates
    bad_candidates_p: float = 0.1
    n_layer: int = 3
    n_embd: int = 128
    n_head: int = 4
    n_positions: int = 256
    length_groups: int = 3  # a step's examples, sorted by length, run in this many pieces
    seed: int = 0
    eval_sentences: int = 200  # per language, for the chrF printed at the end


def target_pool(world: World, n: int) -> list[Sentence]:
    """tel's pretraining sentences: a function of the world alone."""
    return world.sample_many(np.random.default_rng([world.config.seed, 2]), n)


def eval_sentences(world: World, n: int, exclude=()) -> list[Sentence]:
    """The held-out sentences of the final check (the script's requirement)."""
    return world.sample_many(np.random.default_rng([world.config.seed, 3]), n, exclude)


def probe_sentences(world: World, n: int, exclude=()) -> list[Sentence]:
    """Validation sentences for the learning curve during training (never the final
    check's: recipes are chosen on these, not on :func:`eval_sentences`)."""
    return world.sample_many(np.random.default_rng([world.config.seed, 5]), n, exclude)


class ExampleStream:
    """Seeded (prompt, answer) examples of the two kinds described in the module docstring."""

    def __init__(self, world: World, config: PretrainConfig) -> None:
        self.world = world
        self.config = config
        self.rng = np.random.default_rng([config.seed, 1])
        self.pool = target_pool(world, config.target_pool)
        self.sampler = world  # draws the high-resource sentences (same lexicon, flatter Zipf)
        if config.train_zipf_s is not None:
            self.sampler = World(replace(world.config, zipf_s=config.train_zipf_s))
        self.names = display_names()

    def plain(self) -> tuple[str, str]:
        rng, w = self.rng, self.world
        if rng.random() < self.config.target_share:
            sentence, lang = self.pool[rng.integers(len(self.pool))], TARGET
        else:
            sentence = self.sampler.sample(rng)
            lang = HIGH_RESOURCE[rng.integers(len(HIGH_RESOURCE))]
        row = {"source": w.render(sentence, SOURCE)}
        return prompts.plain_prompt(row, lang, names=self.names), w.render(sentence, lang)

    def mufu(self) -> tuple[str, str]:
        rng, w, cfg = self.rng, self.world, self.config
        sentence = self.sampler.sample(rng)
        lang = HIGH_RESOURCE[rng.integers(len(HIGH_RESOURCE))]
        k = int(rng.integers(1, cfg.max_aux + 1))
        pool = [x for x in LANGUAGES if x not in (TARGET, lang)]
        aux = w.nearest(lang, k, pool)
        cand_sentence = sentence
        if rng.random() < cfg.bad_candidates_p:
            if rng.random() < 0.5:
                cand_sentence = self.sampler.sample(rng)
            else:
                far = [x for x in pool if w.distances[lang][x] >= 1.0]
                aux = [far[i] for i in rng.choice(len(far), size=min(k, len(far)), replace=False)]
        sister = w.nearest(lang, 1, pool)[0]
        row = {
            "source": self._source(sentence),
            "draft": noisy_render(
                w, sentence, lang, rng.uniform(0, cfg.draft_error_max), rng, sister
            ),
        }
        for a in aux:
            row[f"cand.{a}"] = noisy_render(w, cand_sentence, a, cfg.candidate_noise, rng)
        prompt = prompts.mufu_prompt(row, lang, aux, names=self.names)
        return prompt, w.render(sentence, lang)

    def _source(self, sentence: Sentence) -> str:
        words = self.world.render(sentence, SOURCE).split()
        hide = self.rng.random(len(words)) < self.config.source_dropout
        return " ".join(UNK if h else word for word, h in zip(words, hide, strict=True))


def noisy_render(
    world: World, sentence: Sentence, lang: str, error_p: float, rng, sister=None
) -> str:
    """``sentence`` in ``lang`` with each word wrong with probability ``error_p``: a
    sister's cognate (40 %), a random word of ``lang`` (40 %) or dropped (20 %)."""
    language = world.languages[lang]
    words = []
    for lemma in world.lemma_order(sentence, lang):
        if rng.random() >= error_p:
            words.append(language.lexicon[lemma])
            continue
        kind = rng.random()
        if kind < 0.4 and sister is not None:
            words.append(world.languages[sister].lexicon[lemma])
        elif kind < 0.8:
            words.append(language.lexicon[int(rng.integers(len(language.lexicon)))])
    return " ".join(words) if words else language.lexicon[world.lemma_order(sentence, lang)[0]]


def build_model(config: PretrainConfig, vocab_size: int, tokenizer):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(config.seed)
    model_config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=config.n_positions,
        n_embd=config.n_embd,
        n_layer=config.n_layer,
        n_head=config.n_head,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(model_config)


def lr_at(step: int, config: PretrainConfig) -> float:
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def _accumulate(model, enc: sft.Encoded, pad_id: int, groups: int, parallel=None) -> float:
    """Gradients of the batch's mean answer-token loss, computed on length-sorted groups
    (less padding, same gradient); returns the loss. ``parallel``: this rank's rows only
    (module docstring), through the DDP wrapper ``parallel.module`` (sum of :func:`sft.loss`)."""
    total = enc.answer_tokens()
    if parallel is None:
        loss_sum = 0.0
        for index in sft.length_groups(enc, range(len(enc)), groups):
            ids, mask, labels = sft.collate(enc, index, pad_id)
            part = sft.loss(model, ids, mask, labels, reduction="sum")
            (part / total).backward()
            loss_sum += part.item()
        return loss_sum / total
    import contextlib

    import torch
    import torch.distributed as dist

    rows = range(len(enc))[parallel.rows(len(enc))]
    pieces = sft.length_groups(enc, rows, groups)
    world = parallel.ctx.world_size
    loss_sum = torch.zeros(1, dtype=torch.float64)
    for k, index in enumerate(pieces):
        ids, mask, labels = sft.collate(enc, index, pad_id)
        last = k == len(pieces) - 1
        with contextlib.nullcontext() if last else parallel.module.no_sync():
            part = parallel.module(ids, mask, labels)
            (part * (world / total)).backward()
        loss_sum += part.detach().double()
    dist.all_reduce(loss_sum)
    return float(loss_sum) / total


@dataclass
class PretrainResult:
    model: object
    tokenizer: object
    world: World
    log: dict


def pretrain(
    config: PretrainConfig,
    on_step: Callable[[int, float], None] | None = None,
    log_every: int = 100,
    checkpoint: Path | None = None,
    checkpoint_every: int = 200,
    parallel=None,
    probe: Callable[[object, object, World], dict] | None = None,
    probe_every: int = 0,
) -> PretrainResult:
    """Train the base model from scratch; ``on_step(step, loss)`` after every step.

    With ``checkpoint``, the whole training state (weights, optimizer, every random
    stream, log) is saved there every ``checkpoint_every`` steps, and a run started with
    an existing checkpoint of the same config resumes from it: the result is the same as
    an uninterrupted run's. ``parallel``: a :class:`iclr25.distributed_torch.DataParallel`
    under torchrun (module docstring); only its rank 0 writes the checkpoint.
    ``probe(model, tokenizer, world) -> dict`` runs every ``probe_every`` steps (in eval
    mode, on the main rank; it must not touch the training streams) and its result goes
    into the history as ``{"step": done, "probe": ...}``: the learning curve in chrF.
    """
    import torch

    from iclr25.core.mufu.world_tokenizer import build_tokenizer

    world = World(config.world)
    tokenizer = build_tokenizer(world)
    model = build_model(config, len(tokenizer), tokenizer)
    model.train()
    if parallel is not None:
        from iclr25.distributed_torch import forward_of

        # sft.loss calls the body and output layer directly: DDP must wrap that forward
        parallel.attach(forward_of(model, lambda m, *b: sft.loss(m, *b, reduction="sum")))
    stream = ExampleStream(world, config)
    opt = torch.optim.AdamW(
        model.parameters(), lr=config.lr, betas=(0.9, 0.98), weight_decay=config.weight_decay
    )
    kind_rng = np.random.default_rng([config.seed, 4])
    state = {"step": 0, "history": [], "tokens": 0, "cpu_s": 0.0, "wall_s": 0.0}
    if checkpoint is not None and checkpoint.exists():
        state = _load_checkpoint(checkpoint, config, model, opt, stream, kind_rng)
    history, tokens = state["history"], state["tokens"]
    cpu0 = time.process_time() - state["cpu_s"]
    wall0 = time.perf_counter() - state["wall_s"]
    for step in range(state["step"], config.steps):
        mufu = kind_rng.random() < config.mufu_share
        size = config.mufu_batch if mufu else config.plain_batch
        pairs = [stream.mufu() if mufu else stream.plain() for _ in range(size)]
        enc = sft.encode(tokenizer, [p for p, _ in pairs], [a for _, a in pairs])
        for group in opt.param_groups:
            group["lr"] = lr_at(step, config)
        opt.zero_grad(set_to_none=True)
        loss = _accumulate(model, enc, tokenizer.pad_token_id, config.length_groups, parallel)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tokens += enc.tokens()
        if on_step is not None:
            on_step(step, loss)
        if step % log_every == 0 or step == config.steps - 1:
            history.append(
                {
                    "step": step,
                    "loss": round(loss, 4),
                    "kind": "mufu" if mufu else "plain",
                    "cpu_s": round(time.process_time() - cpu0, 1),
                }
            )
        done = step + 1
        main = parallel is None or parallel.ctx.is_main
        if main and probe is not None and probe_every and done % probe_every == 0:
            model.eval()
            history.append({"step": done, "probe": probe(model, tokenizer, world)})
            model.train()
        if (
            main
            and checkpoint is not None
            and (done % checkpoint_every == 0 or done == config.steps)
        ):
            _save_checkpoint(
                checkpoint,
                config,
                model,
                opt,
                stream,
                kind_rng,
                {
                    "step": done,
                    "history": history,
                    "tokens": tokens,
                    "cpu_s": time.process_time() - cpu0,
                    "wall_s": time.perf_counter() - wall0,
                },
            )
    model.eval()
    log = {
        "config": asdict(config),
        "history": history,
        "tokens": tokens,
        "cpu_s": time.process_time() - cpu0,
        "wall_s": time.perf_counter() - wall0,
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    return PretrainResult(model, tokenizer, world, log)


def _save_checkpoint(path: Path, config, model, opt, stream, kind_rng, state: dict) -> None:
    """Everything a resumed run needs, written atomically (temp file + rename)."""
    import torch

    payload = {
        **state,
        "config": asdict(config),
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "stream_rng": stream.rng.bit_generator.state,
        "kind_rng": kind_rng.bit_generator.state,
        "torch_rng": torch.get_rng_state(),
    }
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)


def _load_checkpoint(path: Path, config, model, opt, stream, kind_rng) -> dict:
    import torch

    payload = torch.load(path, weights_only=False)
    if payload["config"] != asdict(config):
        raise ValueError(f"checkpoint {path} was written by another config; delete it to restart")
    model.load_state_dict(payload["model"])
    opt.load_state_dict(payload["optimizer"])
    stream.rng.bit_generator.state = payload["stream_rng"]
    kind_rng.bit_generator.state = payload["kind_rng"]
    torch.set_rng_state(payload["torch_rng"])
    return {k: payload[k] for k in ("step", "history", "tokens", "cpu_s", "wall_s")}
