"""Token ids of prompts, built segment by segment.

A prompt for the ordering ``(d_1, ..., d_k)`` and query ``q`` is

    special prefix (e.g. BOS) + ids(demo d_1) + ... + ids(demo d_k) + ids(query q)

where each segment is tokenized on its own (``add_special_tokens=False``). Tokenizing
segments separately makes every prompt a concatenation of shared pieces, which is what
lets the prefix tree reuse the key/value cache of a shared prefix; naive and cached
scoring use exactly these ids, so their scores agree. (With BPE tokenizers the result can
differ from tokenizing the joined string only at segment boundaries, which end in the
template's newline.)

Label words must each be one token in the position after the query (``' positive'`` for
GPT-2), distinct, and known to the tokenizer; otherwise :func:`label_token_ids` says which
word fails and why.
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


def label_token_ids(tokenizer, task: Task) -> list[int]:
    """One token id per label word, as the model would produce it after a query."""
    query = task.query(0)
    base = _ids(tokenizer, query)
    unk = tokenizer.unk_token_id
    ids = []
    for word in task.label_words:
        full = _ids(tokenizer, query + task.template.label_continuation(word))
        extra = full[len(base) :]
        pieces = tokenizer.convert_ids_to_tokens(extra)
        if full[: len(base)] != base or len(extra) != 1:
            raise InputError(
                f"label word {word!r} is not a single token of this tokenizer "
                f"(it becomes {pieces})",
                "choose single-token label words, e.g. with --label-words '0=no,1=yes'",
            )
        if unk is not None and extra[0] == unk:
            raise InputError(
                f"label word {word!r} is not in the tokenizer's vocabulary (it becomes {pieces})",
                "choose label words the tokenizer knows, with --label-words",
            )
        ids.append(extra[0])
    if len(set(ids)) != len(ids):
        raise InputError(
            f"label words {list(task.label_words)} do not map to distinct tokens",
            "choose label words that differ in their first token",
        )
    return ids


@dataclass
class EncodedTask:
    """Every example of a task as a demonstration segment and as a query segment."""

    prefix: list[int]  # special tokens before the first demonstration
    demos: list[list[int]]  # demos[i] = ids of example i as a demonstration
    queries: list[list[int]]  # queries[i] = ids of example i as the query
    label_ids: list[int]  # one token id per label word
    labels: list[int]  # gold label index of each example
    label_words: tuple[str, ...] = ()

    def prompt(self, order: tuple[int, ...], query: int) -> list[int]:
        ids = list(self.prefix)
        for index in order:
            ids += self.demos[index]
        return ids + self.queries[query]


def encode_task(tokenizer, task: Task, max_length: int | None = None) -> EncodedTask:
    label_ids = label_token_ids(tokenizer, task)
    prefix = special_prefix(tokenizer)
    demos = [_ids(tokenizer, task.demonstration(i)) for i in range(len(task))]
    queries = [_ids(tokenizer, task.query(i)) for i in range(len(task))]
    for i, query in enumerate(queries):
        if not query:
            raise InputError(f"example {i} of {task.name} tokenizes to nothing", "remove it")
    return EncodedTask(prefix, demos, queries, label_ids, list(task.labels), task.label_words)


def check_length(encoded: EncodedTask, k: int, max_positions: int | None) -> None:
    """Refuse prompts of k demonstrations the model cannot take (positions)."""
    if not max_positions:
        return
    longest = len(encoded.prefix) + sum(sorted(map(len, encoded.demos))[-k:])
    longest += max(map(len, encoded.queries))
    if longest > max_positions:
        raise InputError(
            f"prompts of k={k} demonstrations can reach {longest} tokens, above the model's "
            f"{max_positions} positions",
            "lower --k or use shorter texts",
        )
