"""Mufu and plain prompts (Lim et al., ICLR 2025, Table 1's prompt; its wording is not public).

Symbols (paper note → code):

- source sentence x → ``row["source"]``; target language t → ``target_lang``;
- auxiliary languages A_k(t) = {a_1..a_k} → ``aux_langs``; candidates ŷ_a → ``row["cand.<a>"]``;
- the teacher's draft ŷ_t (the "postediting target") → ``row["draft"]``;
- Mufu prompt P_k(x) → :func:`mufu_prompt`; plain prompt P_0(x) → :func:`plain_prompt`.

A template is a ``str.format`` pattern over ``{instruction}``, ``{source}``,
``{candidates}`` (one ``"<lang>: <text>"`` line per auxiliary language, in the order
given), ``{draft}``, ``{target_lang}`` and ``{source_lang}``. The student's answer follows
the prompt after one space. The defaults below are ours (the paper's exact prompt is not
public): the instruction asks to correct a possibly inaccurate draft using translations
in related languages, as the paper's reviews describe it.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from iclr25.errors import InputError, UsageError

MUFU_INSTRUCTION = (
    "Correct the possibly inaccurate {target_lang} draft using translations in related languages."
)
PLAIN_INSTRUCTION = "Translate into {target_lang}."
MUFU_TEMPLATE = (
    "{instruction}\n{source_lang}: {source}\n{candidates}\n{target_lang} draft: {draft}\n"
    "{target_lang}:"
)
PLAIN_TEMPLATE = "{instruction}\n{source_lang}: {source}\n{target_lang}:"
FIELDS = {"instruction", "source", "candidates", "draft", "target_lang", "source_lang"}
FORMATS = ("mufu", "plain")


@dataclass(frozen=True)
class PromptSpec:
    """How prompts are written: format, template, languages and their display names."""

    format: str = "mufu"  # "mufu" (candidates + draft) or "plain" (P_0: source only)
    target_lang: str = "tel"
    aux_langs: tuple[str, ...] = ()
    template: str | None = None  # None: MUFU_TEMPLATE or PLAIN_TEMPLATE
    instruction: str | None = None  # None: MUFU_INSTRUCTION or PLAIN_INSTRUCTION
    source_lang: str = "src"
    names: Mapping[str, str] = field(default_factory=dict)  # code -> display name

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise UsageError(f"--format {self.format!r} is unknown", "use mufu or plain")
        if self.format == "mufu" and not self.aux_langs:
            raise UsageError("a mufu prompt needs auxiliary languages", "pass --aux-langs a,b,c")
        if self.target_lang in self.aux_langs:
            raise UsageError(
                f"the target language {self.target_lang!r} is among the auxiliary languages",
                "remove it from --aux-langs",
            )
        check_template(self.resolved_template(), self.format)

    def resolved_template(self) -> str:
        if self.template is not None:
            return self.template
        return MUFU_TEMPLATE if self.format == "mufu" else PLAIN_TEMPLATE

    def resolved_instruction(self) -> str:
        if self.instruction is not None:
            return self.instruction
        return MUFU_INSTRUCTION if self.format == "mufu" else PLAIN_INSTRUCTION

    def name(self, code: str) -> str:
        return self.names.get(code, code)


def check_template(template: str, fmt: str) -> None:
    """A usage error unless ``template`` only uses known fields and has what ``fmt`` needs."""
    try:
        used = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        raise UsageError(f"--template is not a valid format string ({exc})", _fix()) from None
    unknown = used - FIELDS
    if unknown:
        raise UsageError(f"--template uses unknown field(s) {sorted(unknown)}", _fix())
    needed = {"source", "target_lang"} | ({"candidates", "draft"} if fmt == "mufu" else set())
    missing = needed - used
    if missing:
        raise UsageError(f"a {fmt} --template needs the field(s) {sorted(missing)}", _fix())


def _fix() -> str:
    return "use {instruction} {source} {candidates} {draft} {target_lang} {source_lang} only"


def candidate_lines(row: Mapping[str, str], spec: PromptSpec) -> str:
    return "\n".join(f"{spec.name(a)}: {row[f'cand.{a}']}" for a in spec.aux_langs)


def render(row: Mapping[str, str], spec: PromptSpec) -> str:
    """The prompt for one data row (candidates and draft only in the mufu format)."""
    target = spec.name(spec.target_lang)
    values = {
        "instruction": spec.resolved_instruction().format(target_lang=target),
        "source": row["source"],
        "target_lang": target,
        "source_lang": spec.name(spec.source_lang),
        "candidates": candidate_lines(row, spec) if spec.format == "mufu" else "",
        "draft": row.get("draft", "") if spec.format == "mufu" else "",
    }
    return spec.resolved_template().format(**values)


def render_all(rows: Sequence[Mapping[str, str]], spec: PromptSpec) -> list[str]:
    check_columns(rows, spec)
    return [render(row, spec) for row in rows]


def check_columns(rows: Sequence[Mapping[str, str]], spec: PromptSpec, where: str = "") -> None:
    """An input error naming the first row without a column the prompt needs."""
    needed = ["source"]
    if spec.format == "mufu":
        needed += ["draft", *[f"cand.{a}" for a in spec.aux_langs]]
    for i, row in enumerate(rows):
        for column in needed:
            if column not in row or row[column] is None:
                at = f"{where} row {i + 1}" if where else f"row {i + 1}"
                raise InputError(
                    f"{at}: column {column!r} is missing",
                    "produce it with `iclr25 mufu candidates`, or choose other --aux-langs",
                )


def mufu_prompt(row: Mapping[str, str], target_lang: str, aux_langs: Sequence[str], **kw) -> str:
    """P_k(x): instruction, x, the candidates ŷ_a for a ∈ aux_langs, and the draft ŷ_t."""
    return render(row, PromptSpec("mufu", target_lang, tuple(aux_langs), **kw))


def plain_prompt(row: Mapping[str, str], target_lang: str, **kw) -> str:
    """P_0(x): instruction and x only (the finetune-only baseline)."""
    return render(row, PromptSpec("plain", target_lang, (), **kw))
