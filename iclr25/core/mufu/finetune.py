"""Finetuning a causal LM on (prompt, translation) pairs, full or LoRA, at a stated budget.

The paper (Lim et al., ICLR 2025) finetunes every student with "full parameter updates
for 25 epochs" on 787 pairs (plus one LoRA variant, Mufu20 LoRA); the plain
("finetune-only") and Mufu students get the same data and epochs. Here:

- loss on the answer tokens only (:mod:`sft`);
- AdamW, linear warm-up over ``warmup_frac`` of the steps, then linear decay to 0;
  the example order of each epoch is a permutation drawn from ``seed`` alone, so two
  formats trained with the same config see the same examples in the same order;
- after every epoch, greedy translation of the validation prompts and their corpus
  chrF (sacrebleu's); the weights of the best epoch are kept (ties: the earlier);
- ``lora=True``: peft LoRA adapters (rank ``lora_r``) on the model's attention and MLP
  projections, merged into the weights at the end (the saved model is a plain one).

The learning rate, batch size, schedule and selection rule are not public; the defaults
are ours (documented in docs/mufu.md). :class:`Budget` is what two arms must share.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from iclr25.core.mufu import chrf, sft
from iclr25.core.mufu.generate import generate_causal
from iclr25.core.mufu.models import Loaded
from iclr25.errors import RunFailure, UsageError

PEFT_HINT = "install the extra: pip install 'iclr25[mufu]' (it brings peft)"


@dataclass(frozen=True)
class FinetuneConfig:
    epochs: int = 25  # the paper's 25 epochs
    batch_size: int = 16
    lr: float = 1e-3
    weight_decay: float = 0.0
    warmup_frac: float = 0.05
    lora: bool = False
    lora_r: int = 8
    lora_alpha: int = 16
    lora_targets: tuple[str, ...] | None = None  # None: peft's default for the architecture
    seed: int = 0
    max_new_tokens: int = 64
    eval_batch_size: int = 64
    validate_before: bool = True  # also record the validation chrF before training

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise UsageError("--epochs and --batch-size must be at least 1", "pass positive values")
        if not (0 < self.lr < 1):
            raise UsageError(f"--lr {self.lr} is not a learning rate", "use e.g. 1e-4 .. 1e-3")


@dataclass(frozen=True)
class Budget:
    """What two arms must share (the paper's equal data and epochs, made exact)."""

    examples: int
    epochs: int
    batch_size: int
    steps: int
    lr: float

    @staticmethod
    def of(n_examples: int, config: FinetuneConfig) -> Budget:
        steps = config.epochs * math.ceil(n_examples / config.batch_size)
        return Budget(n_examples, config.epochs, config.batch_size, steps, config.lr)


def assert_equal_budgets(budgets: Mapping[str, Budget]) -> None:
    """A run failure unless every arm has the same examples, epochs, batch, steps and lr."""
    distinct = {b for b in budgets.values()}
    if len(distinct) > 1:
        detail = "; ".join(f"{k}: {asdict(v)}" for k, v in budgets.items())
        raise RunFailure(f"arms were trained at different budgets ({detail})", "report this bug")


@dataclass
class FinetuneResult:
    model: object
    budget: Budget
    history: list[dict] = field(default_factory=list)  # per epoch: loss, valid_chrf
    best_epoch: int = 0
    best_valid_chrf: float = float("nan")
    train_tokens: int = 0  # prompt + answer tokens processed over all epochs
    answer_tokens: int = 0  # tokens that carried loss


def validation_chrf(loaded: Loaded, prompts: Sequence[str], refs: Sequence[str], config) -> float:
    hyps = generate_causal(
        loaded, prompts, max_new_tokens=config.max_new_tokens, batch_size=config.eval_batch_size
    )
    return chrf.score(chrf.segment_statistics(hyps, refs))


def wrap_lora(model, config: FinetuneConfig):
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise UsageError("--lora needs peft, which is not installed", PEFT_HINT) from None
    lora = LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=0.0,
        target_modules=list(config.lora_targets) if config.lora_targets else None,
        task_type="CAUSAL_LM",
    )
    try:
        return get_peft_model(model, lora)
    except ValueError as exc:
        raise UsageError(
            f"peft cannot place LoRA adapters on this model ({exc})",
            "name the projection modules with --lora-targets (e.g. q_proj,v_proj)",
        ) from None


def _lr_at(step: int, total: int, config: FinetuneConfig) -> float:
    warm = max(1, round(config.warmup_frac * total))
    if step < warm:
        return config.lr * (step + 1) / warm
    return config.lr * max(0.0, (total - step) / max(1, total - warm))


def finetune(
    loaded: Loaded,
    train_prompts: Sequence[str],
    train_answers: Sequence[str],
    valid_prompts: Sequence[str],
    valid_refs: Sequence[str],
    config: FinetuneConfig,
    on_step: Callable[[int], None] | None = None,
) -> FinetuneResult:
    """Finetune ``loaded.model`` in place (module docstring); returns the best epoch's model."""
    import torch

    torch.manual_seed(config.seed)
    enc = sft.encode(loaded.tokenizer, train_prompts, train_answers)
    budget = Budget.of(len(enc), config)
    model = wrap_lora(loaded.model, config) if config.lora else loaded.model
    student = Loaded(model, loaded.tokenizer, loaded.kind, loaded.path)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    result = FinetuneResult(model, budget)
    if config.validate_before and valid_prompts:
        model.eval()
        result.history.append(
            {
                "epoch": 0,
                "loss": None,
                "valid_chrf": validation_chrf(student, valid_prompts, valid_refs, config),
            }
        )
    best_state, step = None, 0
    pad = loaded.tokenizer.pad_token_id
    for epoch in range(1, config.epochs + 1):
        model.train()
        order = np.random.default_rng([config.seed, epoch]).permutation(len(enc))
        losses = []
        for s in range(0, len(order), config.batch_size):
            index = order[s : s + config.batch_size].tolist()
            ids, mask, labels = sft.collate(enc, index, pad)
            for group in opt.param_groups:
                group["lr"] = _lr_at(step, budget.steps, config)
            loss = sft.loss(model, ids, mask, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            losses.append(float(loss.detach()))
            result.train_tokens += int(mask.sum())
            result.answer_tokens += int((labels != sft.IGNORE).sum())
            step += 1
            if on_step is not None:
                on_step(1)
        model.eval()
        score = (
            validation_chrf(student, valid_prompts, valid_refs, config)
            if valid_prompts
            else float("nan")
        )
        result.history.append({"epoch": epoch, "loss": float(np.mean(losses)), "valid_chrf": score})
        if best_state is None or not valid_prompts or score > result.best_valid_chrf:
            result.best_epoch, result.best_valid_chrf = epoch, score
            best_state = copy.deepcopy({k: v for k, v in model.state_dict().items()})
    if step != budget.steps:
        raise RunFailure(f"took {step} optimizer steps, budget {budget.steps}", "report this bug")
    model.load_state_dict(best_state)
    if config.lora:
        model = model.merge_and_unload()
    model.eval()
    result.model = model
    return result
