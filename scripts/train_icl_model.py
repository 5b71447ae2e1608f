"""Train the embedded icl-order model: a tiny GPT-2 that learns classification in context.

Reproducible and deterministic (fixed seeds, single-process data generation, fixed torch
thread count, deterministic algorithms). Run from the repository root::

    nice -n 10 .venv/bin/python scripts/train_icl_model.py            # writes iclr25/data/icl_model
    .venv/bin/python scripts/train_icl_model.py --steps 50 --out /tmp/m   # a smoke run
    torchrun --standalone --nproc-per-node 2 scripts/train_icl_model.py   # 2 CPU processes

Data (generated on the fly, nothing downloaded): episodes of the synthetic world in
``iclr25/core/icl_order/synthetic.py``. Each training sequence is ``[BOS]`` followed by
10 demonstrations ``"{text} {label}\\n"`` whose text is one invented word. An episode
picks 2 to 6 of the 6 categories (15/20/25/20/20 %), so a short prompt often lacks the
query's category, and restricts each category to 1, 2, 4 or all 16 of its words
(20/20/20/40 %): repeated words make token-level induction easy to find, and it then
carries over to whole categories. With probability 0.75 the labels are symbols assigned
to the categories at random for that episode only (so they can only be read from the
context), otherwise the categories' natural names. Label noise: in 60 % of the episodes
10, 20 or 30 % of the demonstrations show another of the episode's labels (conflicting
demonstrations, as in crowd-labelled data), so the model meets contradicting evidence
and must weigh it. Nothing in the data or the loss says which position to trust: any
order effect the model shows (recency, majority label, copying a neighbour's label) is
learned, and ``iclr25 icl-order sensitivity`` measures it. The loss is the
cross-entropy of every label token, so one sequence trains all context sizes k = 0..9.

Model: ``GPT2LMHeadModel``, 4 layers, width 128, 4 heads, 128 positions (0.83 M
parameters, 3.3 MB of float32 safetensors), a 137-word word-level tokenizer
(``tokenizers`` WordLevel saved as a ``PreTrainedTokenizerFast``).

Training: AdamW (lr 1e-3, betas 0.9/0.98, weight decay 0.01), 200 warm-up steps then
cosine decay to 10 %, batch 64, gradient clipping at 1.0, one torch thread. Held-out
accuracy (four-class symbolic episodes from a seed never used in training, among the
episode's labels) is printed during training; everything, with the measured wall time
and the provenance of the run, is written next to the weights as ``training_log.json``
(the docs quote it from there).

Under ``torchrun`` the training runs data-parallel (gloo, :mod:`iclr25.distributed_torch`):
every process draws the same global batch of ``--batch-size`` episodes from the same
generator and computes the loss on its rows, weighted by its share of the batch's label
tokens, so the update is the one-process update (the mean over all label tokens of the
batch) and the logged loss is the whole batch's; rank 0 alone evaluates, prints and
writes.

Why this format: in development runs with ``--templates mixed``
(``"Input: {text}\\nLabel: {label}\\n"`` and two variants, the label four tokens after
the text, and filler words before it) the model learned the natural
labels perfectly but stayed at chance on symbolic ones for thousands of steps — no
induction circuit formed within a CPU budget.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from iclr25.core.icl_order import synthetic  # noqa: E402

TEMPLATE_SETS = {
    "mixed": (
        ("Input: {text}\nLabel: {label}\n", 0.70),
        ("Text: {text}\nCategory: {label}\n", 0.15),
        ("Q: {text}\nA: {label}\n", 0.15),
    ),
    "compact": (("{text} {label}\n", 1.0),),
    "equals": (("{text} = {label}\n", 1.0),),
}
TEMPLATES = TEMPLATE_SETS["compact"]
FILLERS = (1.0,)  # texts are one content word, no filler words (see the docstring)
N_DEMOS = 10
# classes per episode: up to 6, so a prompt of k = 4 often lacks the query's class
CLASS_PROBS = {2: 0.15, 3: 0.2, 4: 0.25, 5: 0.2, 6: 0.2}
# label noise per episode (share of demonstrations whose label is replaced by another of
# the episode's labels): conflicting demonstrations, as in crowd-labelled data
NOISE_PROBS = {0.0: 0.4, 0.1: 0.2, 0.2: 0.2, 0.3: 0.2}
SYMBOLIC_PROB = 0.75
# words per category in an episode: few words repeat often (token-level induction is
# learned first), all 16 is the evaluation setting (category-level induction)
WORDS_PER_CLASS = {1: 0.2, 2: 0.2, 4: 0.2, None: 0.4}
STEPS = 4000


def build_tokenizer(out: Path | None):
    """A word-level tokenizer: spaces separate words, newline and punctuation are tokens;
    ``[BOS]`` is prepended when special tokens are requested (like Llama's tokenizers).
    Saved to ``out`` unless it is None."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(synthetic.vocabulary())}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=synthetic.UNK))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"[^\S\n]+"), behavior="removed"),
            pre_tokenizers.Split(Regex(r"->|[\n:,.?!=]"), behavior="isolated"),
        ]
    )
    bos_id = vocab[synthetic.BOS]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{synthetic.BOS} $A", special_tokens=[(synthetic.BOS, bos_id)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=synthetic.BOS,
        unk_token=synthetic.UNK,
        pad_token=synthetic.PAD,
        padding_side="left",
        model_max_length=128,
    )
    if out is None:
        return fast
    fast.save_pretrained(out)
    # transformers 5 writes its own class name; the generic name loads on 4.x and 5.x
    config_path = out / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    return fast


def render_episode(rng: np.random.Generator, words) -> tuple[list[str], list[str]]:
    """(segments, labels) of one training sequence."""
    template = TEMPLATES[rng.choice(len(TEMPLATES), p=[p for _, p in TEMPLATES])][0]
    n_classes = int(rng.choice(list(CLASS_PROBS), p=list(CLASS_PROBS.values())))
    symbolic = bool(rng.random() < SYMBOLIC_PROB)
    keys = list(WORDS_PER_CLASS)
    per_class = keys[rng.choice(len(keys), p=list(WORDS_PER_CLASS.values()))]
    examples = synthetic.sample_episode(
        rng, N_DEMOS, n_classes, symbolic, words, per_class, filler_probs=FILLERS
    )
    noise = float(rng.choice(list(NOISE_PROBS), p=list(NOISE_PROBS.values())))
    shown = synthetic.add_label_noise(rng, [e.label for e in examples], noise)
    segments = [
        template.format(text=e.text, label=lab) for e, lab in zip(examples, shown, strict=True)
    ]
    return segments, shown


def encode_batch(tokenizer, rng, words, batch_size: int):
    """input_ids (B, T) right-padded, and targets (B, T) = next label token or -100."""
    vocab = tokenizer.get_vocab()
    rows, targets = [], []
    for _ in range(batch_size):
        segments, labels = render_episode(rng, words)
        ids = tokenizer("".join(segments))["input_ids"]  # [BOS] + words
        target = [-100] * len(ids)
        label_ids = {vocab[lab] for lab in labels}
        for pos in range(1, len(ids)):
            # every label token of this episode is a target
            if ids[pos] in label_ids:
                target[pos - 1] = ids[pos]
        rows.append(ids)
        targets.append(target)
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
    target_ids = torch.tensor([t + [-100] * (width - len(t)) for t in targets])
    return input_ids, target_ids


def held_out_accuracy(
    model, tokenizer, n_episodes: int = 400, words_per_class: int | None = None
) -> dict[int, float]:
    """Accuracy of the label after k demonstrations (4 classes, symbolic, main template),
    among the episode's label words, on episodes from a seed never used in training."""
    rng = np.random.default_rng(10_000)
    words = synthetic.content_words()
    vocab = tokenizer.get_vocab()
    symbols = {vocab[s] for s in synthetic.SYMBOL_LABELS}
    correct = np.zeros(N_DEMOS)
    model.eval()
    with torch.no_grad():
        for _ in range(n_episodes):
            ex = synthetic.sample_episode(
                rng, N_DEMOS, 4, True, words, words_per_class, filler_probs=FILLERS
            )
            cand = sorted({vocab[e.label] for e in ex})
            text = "".join(TEMPLATES[0][0].format(text=e.text, label=e.label) for e in ex)
            ids = tokenizer(text)["input_ids"]
            logits = model(torch.tensor([ids])).logits[0]  # (T, V)
            before_label = [p - 1 for p in range(1, len(ids)) if ids[p] in symbols]
            for k, pos in enumerate(before_label):
                pred = cand[int(torch.argmax(logits[pos, cand]))]
                correct[k] += pred == ids[pos + 1]
    model.train()
    return {k: float(correct[k] / n_episodes) for k in range(N_DEMOS)}


def label_loss(model, input_ids, targets, pad_id: int, parallel=None):
    """(mean cross-entropy of the batch's label tokens, what to back-propagate).

    One process: the loss itself, twice. Under torchrun: the mean over this rank's rows'
    label tokens, and that mean weighted by its share of the batch's label tokens, so DDP's
    average of the ranks' gradients is the gradient of the mean over all of them (every
    row has labels, so no rank's mean is empty)."""
    if parallel is not None:
        rows = parallel.rows(input_ids.shape[0])
        total = int((targets != -100).sum())
        input_ids, targets = input_ids[rows], targets[rows]  # (b, T): this rank's rows
        count = int((targets != -100).sum())
        model = parallel.module
    attention_mask = (input_ids != pad_id).long()
    logits = model(input_ids, attention_mask=attention_mask).logits  # (B, T, V)
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100
    )
    if parallel is None:
        return loss, loss
    return loss, parallel.scale(loss, count, total)


def batch_mean(loss, input_ids, targets, parallel=None) -> float:
    """The loss over the whole batch (under torchrun one all-reduce: call it on every rank)."""
    if parallel is None:
        return loss.item()
    rows = parallel.rows(input_ids.shape[0])
    return parallel.mean(loss, int((targets[rows] != -100).sum()), int((targets != -100).sum()))


def lr_at(step: int, steps: int, warmup: int = 200) -> float:
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--out", type=Path, default=ROOT / "iclr25" / "data" / "icl_model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--eval-episodes", type=int, default=100, help="per periodic eval")
    parser.add_argument("--final-episodes", type=int, default=1000, help="final eval")
    parser.add_argument("--templates", choices=sorted(TEMPLATE_SETS), default="compact")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--width", type=int, default=128)
    args = parser.parse_args()
    global TEMPLATES
    TEMPLATES = TEMPLATE_SETS[args.templates]

    from iclr25.distributed_torch import process_group

    torch.set_num_threads(1)  # a shared machine: oversubscribed threads spin
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    with process_group("cpu") as group:
        train(args, group)


def train(args, group) -> None:
    """The training run (under torchrun this rank's part: only rank 0 evaluates, prints
    and writes)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from iclr25.distributed_torch import DataParallel

    if group.is_main:
        args.out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(args.out if group.is_main else None)
    config = GPT2Config(
        vocab_size=len(tokenizer.get_vocab()),
        n_positions=128,
        n_embd=args.width,
        n_layer=4,
        n_head=4,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.bos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    model = GPT2LMHeadModel(config)
    parallel = DataParallel(group, args.batch_size).attach(model) if group.active else None
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_at(s, args.steps))
    rng = np.random.default_rng(args.seed)
    words = synthetic.content_words()
    log: dict = {
        "params": n_params,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "evals": [],
    }
    start = time.perf_counter()
    for step in range(args.steps):
        # every rank draws the whole batch: the generator stays the one-process stream
        input_ids, targets = encode_batch(tokenizer, rng, words, args.batch_size)
        loss, share = label_loss(model, input_ids, targets, tokenizer.pad_token_id, parallel)
        opt.zero_grad(set_to_none=True)
        share.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            loss_value = batch_mean(loss, input_ids, targets, parallel)
            if not group.is_main:
                continue
            acc = held_out_accuracy(model, tokenizer, args.eval_episodes)
            repeats = held_out_accuracy(model, tokenizer, args.eval_episodes, words_per_class=1)
            elapsed = time.perf_counter() - start
            entry = {
                "step": step + 1,
                "loss": round(loss_value, 4),
                "elapsed_s": round(elapsed, 1),
                "accuracy_by_k": {k: round(a, 3) for k, a in acc.items()},
                "repeated_words_accuracy_by_k": {k: round(a, 3) for k, a in repeats.items()},
            }
            log["evals"].append(entry)
            print(json.dumps(entry), flush=True)
    wall_s = time.perf_counter() - start
    if not group.is_main:
        return
    model.save_pretrained(args.out, safe_serialization=True)
    final = held_out_accuracy(model, tokenizer, args.final_episodes)
    from iclr25.provenance import provenance

    log.update(
        wall_s=round(wall_s, 1),
        steps_per_s=round(args.steps / wall_s, 2),
        final_accuracy_by_k={k: round(a, 3) for k, a in final.items()},
        torch=torch.__version__,
        torch_threads=torch.get_num_threads(),
        data={
            "demonstrations": N_DEMOS,
            "class_probs": CLASS_PROBS,
            "noise_probs": NOISE_PROBS,
            "symbolic_prob": SYMBOLIC_PROB,
        },
        provenance=provenance(["python", "scripts/train_icl_model.py", *sys.argv[1:]], [args.seed]),
    )
    if group.active:
        log["distributed"] = group.as_dict()
    (args.out / "training_log.json").write_text(json.dumps(log, indent=1) + "\n")
    print(json.dumps(log["final_accuracy_by_k"]), f"wall {wall_s:.0f}s", flush=True)


if __name__ == "__main__":
    main()
