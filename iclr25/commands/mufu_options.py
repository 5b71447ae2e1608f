"""Options shared by the `iclr25 mufu` subcommands, and their parsing.

Like every command module this imports only typer, the stdlib and light iclr25 modules
at module level; core modules (torch, transformers) are imported inside functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from iclr25.errors import UsageError

DATA, PROMPT, MODEL, TRAIN = "Data", "Prompt", "Model", "Training"

DataOpt = Annotated[
    Path,
    typer.Option(
        "--data",
        help="TSV or JSONL with source, target, draft, cand.<lang> columns.",
        rich_help_panel=DATA,
    ),
]
TargetLangOpt = Annotated[
    str,
    typer.Option(
        "--target-lang",
        help="Target language code t (the embedded world's: tel).",
        rich_help_panel=PROMPT,
    ),
]
SourceLangOpt = Annotated[
    str,
    typer.Option(
        "--source-lang", help="Source language code, shown in prompts.", rich_help_panel=PROMPT
    ),
]
AuxOpt = Annotated[
    str,
    typer.Option(
        "--aux-langs",
        help="Auxiliary languages: a,b,c | auto (the --k nearest to the target by URIEL "
        "family distance, or the world's table) | all (every cand.<lang> column).",
        rich_help_panel=PROMPT,
    ),
]
KOpt = Annotated[
    int, typer.Option("--k", help="Number of auxiliary languages for auto.", rich_help_panel=PROMPT)
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format", help="mufu (candidates + draft) or plain (source only).", rich_help_panel=PROMPT
    ),
]
TemplateOpt = Annotated[
    str | None,
    typer.Option(
        "--template",
        help="Prompt template with {instruction} {source} {candidates} {draft} {target_lang} "
        "{source_lang} (\\n for newlines). Default: the model's, else the built-in one.",
        rich_help_panel=PROMPT,
    ),
]
InstructionOpt = Annotated[
    str | None,
    typer.Option(
        "--instruction", help="Instruction text ({target_lang} allowed).", rich_help_panel=PROMPT
    ),
]
NamesOpt = Annotated[
    str | None,
    typer.Option(
        "--lang-names",
        help="Display names in prompts, e.g. fra=French,deu=German.",
        rich_help_panel=PROMPT,
    ),
]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="Local model folder, or `bundled` (the embedded GPT-2 of the world).",
        rich_help_panel=MODEL,
    ),
]
DownloadOpt = Annotated[
    bool,
    typer.Option(
        "--allow-download",
        help="Allow hub ids (downloads); default local files only.",
        rich_help_panel=MODEL,
    ),
]
RemoteCodeOpt = Annotated[
    bool,
    typer.Option(
        "--trust-remote-code", help="Allow a model's own Python code.", rich_help_panel=MODEL
    ),
]
MaxNewOpt = Annotated[
    int,
    typer.Option("--max-new-tokens", help="Longest translation in tokens.", rich_help_panel=MODEL),
]
BatchOpt = Annotated[
    int, typer.Option("--batch-size", help="Sentences per generation batch.", rich_help_panel=MODEL)
]


def parse_names(value: str | None) -> dict[str, str]:
    """``fra=French,deu=German`` -> {"fra": "French", "deu": "German"}."""
    if not value:
        return {}
    names = {}
    for part in value.split(","):
        if "=" not in part:
            raise UsageError(
                f"--lang-names entry {part!r} is not code=Name", "write e.g. fra=French,deu=German"
            )
        code, name = part.split("=", 1)
        names[code.strip()] = name.strip()
    return names


def parse_template(value: str | None) -> str | None:
    return None if value is None else value.replace("\\n", "\n")


def parse_ints(value: str, option: str) -> tuple[int, ...]:
    try:
        out = tuple(int(x) for x in value.split(",") if x.strip())
    except ValueError:
        raise UsageError(
            f"{option} {value!r} is not a list of integers", f"write e.g. {option} 1,3,5"
        ) from None
    if not out:
        raise UsageError(f"{option} is empty", f"write e.g. {option} 1,3,5")
    return out


def check_format(value: str) -> str:
    if value not in ("mufu", "plain"):
        raise UsageError(f"--format {value!r} is unknown", "use mufu or plain")
    return value


def positive(value: int, option: str) -> int:
    if value < 1:
        raise UsageError(f"{option} {value} must be at least 1", f"pass a positive {option}")
    return value
