"""Token ids of prompts, built segment by segment.

A prompt for the ordering ``(d_1, ..., d_k)`` and query ``q`` is

    special prefix (e.g. BOS) + ids(demo d_1) + ... + ids(demo d_k) + ids(query q)

where each segment is tokenized on its own (``add_special_tokens=False``). Tokenizing
segments separately makes every prompt a concatenation of shared pieces, which is what
lets the prefix tree reuse the key/value cache of a shared prefix; naive and cached
scoring use exactly these ids, so their scores agree. (With BPE tokenizers the result can
differ from tokenizing the joined string only at segment boundaries, which end in the
template's newline.)

Label words are scored as the tokens that continue the query (``' positive'`` for GPT-2,
whose BPE puts the space into the word; ``'▁positive'`` for SentencePiece-style
tokenizers). A word of several tokens is scored by the *mean* log-probability of its
tokens, as self-adaptive ICL averages the label's cross-entropy (``scoring.py``).
:func:`label_tokens` refuses a word the tokenizer does not know (``[UNK]``), one whose
tokens would merge with the query's, and words that tokenize alike — saying which.
"""

from __future__ import annotations

from dataclasses import dataclass

from iclr25.core.icl_order.tasks import Task
from iclr25.errors import InputError


def _ids(tokenizer, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def special_prefix(tokenizer) -> list[int]:
    """The ids a tokenizer puts before any text (BOS for Llama-style ones, none for GPT-2)."""
    with_special = list(tokenizer("x", add_special_tokens=True)["input_ids"])
    plain = _ids(tokenizer, "x")
    if plain and with_special[-len(plain) :] == plain:
        return with_special[: len(with_special) - len(plain)]
    return []


def label_tokens(tokenizer, task: Task) -> list[list[int]]:
    """The token ids of each label word, as the model would produce them after a query."""
    query = task.query(0)
    base = _ids(tokenizer, query)
    unk = tokenizer.unk_token_id
    out = []
    for word in task.label_words:
        full = _ids(tokenizer, query + task.template.label_continuation(word))
        extra = full[len(base) :]
        pieces = tokenizer.convert_ids_to_tokens(extra)
        if full[: len(base)] != base or not extra:
            raise InputError(
                f"label word {word!r} merges with the end of the query {query!r} "
                f"in this tokenizer (it becomes {tokenizer.convert_ids_to_tokens(full)})",
                "put a space or newline before {label} in --template",
            )
        if unk is not None and unk in extra:
            raise InputError(
                f"label word {word!r} is not in the tokenizer's vocabulary (it becomes {pieces})",
                "choose label words the tokenizer knows with --label-words "
                "(or pass --model for a real language model)",
            )
        out.append(extra)
    if len({tuple(t) for t in out}) != len(out):
        raise InputError(
            f"label words {list(task.label_words)} do not map to distinct tokens",
            "choose label words that tokenize differently",
        )
    return out


@dataclass
class EncodedTask:
    """Every example of a task as a demonstration segment and as a query segment."""

    prefix: list[int]  # special tokens before the first demonstration
    demos: list[list[int]]  # demos[i] = ids of example i as a demonstration
    queries: list[list[int]]  # queries[i] = ids of example i as the query
    label_tokens: list[list[int]]  # the token ids of each label word (>= 1 each)
    labels: list[int]  # label index each example shows as a demonstration
    label_words: tuple[str, ...] = ()
    unknown_share: float = 0.0  # share of the queries' tokens that are the tokenizer's UNK
    answers: list[int] | None = None  # gold label of each example as a query (None: labels)

    def answer(self, index: int) -> int:
        """The gold label of example ``index`` asked as a query."""
        return (self.answers if self.answers is not None else self.labels)[index]

    @property
    def single_token_labels(self) -> bool:
        return all(len(t) == 1 for t in self.label_tokens)

    def restricted(self, indices) -> EncodedTask:
        """The same task holding only the examples ``indices`` (as dicts keyed by the
        original index, so every index still means the same example): what a parallel
        task needs of a large pool, small to ship and to hash."""
        keep = sorted(set(indices))
        return EncodedTask(
            list(self.prefix),
            {i: self.demos[i] for i in keep},  # type: ignore[arg-type]
            {i: self.queries[i] for i in keep},  # type: ignore[arg-type]
            self.label_tokens,
            {i: self.labels[i] for i in keep},  # type: ignore[arg-type]
            self.label_words,
            self.unknown_share,
            None if self.answers is None else {i: self.answers[i] for i in keep},  # type: ignore[arg-type]
        )

    def prompt(self, order: tuple[int, ...], query: int) -> list[int]:
        ids = list(self.prefix)
        for index in order:
            ids += self.demos[index]
        return ids + self.queries[query]


def encode_task(tokenizer, task: Task) -> EncodedTask:
    labels = label_tokens(tokenizer, task)
    prefix = special_prefix(tokenizer)
    demos = [_ids(tokenizer, task.demonstration(i)) for i in range(len(task))]
    queries = [_ids(tokenizer, task.query(i)) for i in range(len(task))]
    for i, query in enumerate(queries):
        if not query:
            raise InputError(f"example {i} of {task.name} tokenizes to nothing", "remove it")
    unk = tokenizer.unk_token_id
    total = sum(map(len, queries))
    unknown = sum(q.count(unk) for q in queries) / total if unk is not None else 0.0
    answers = None if task.answers is None else list(task.answers)
    return EncodedTask(
        prefix, demos, queries, labels, list(task.labels), task.label_words, unknown, answers
    )


def check_length(encoded: EncodedTask, k: int, max_positions: int | None) -> None:
    """Refuse prompts of k demonstrations the model cannot take (positions)."""
    if not max_positions:
        return
    longest = len(encoded.prefix) + sum(sorted(map(len, encoded.demos))[-k:])
    longest += max(map(len, encoded.queries)) + max(map(len, encoded.label_tokens)) - 1
    if longest > max_positions:
        raise InputError(
            f"prompts of k={k} demonstrations can reach {longest} tokens, above the model's "
            f"{max_positions} positions",
            "lower --k or use shorter texts",
        )
