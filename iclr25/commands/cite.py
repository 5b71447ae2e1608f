"""`iclr25 cite [COMMAND]`: the BibTeX of the paper(s) behind a command."""

from typing import Annotated

import typer

from iclr25.citations import citations_for
from iclr25.runner import Run, with_common_options

NAME = "cite"
HELP = "Print the BibTeX of the paper(s) behind a command (all papers without COMMAND)."


def cite(
    command: Annotated[
        str | None, typer.Argument(help="Subcommand name, e.g. icl-order.", show_default=False)
    ] = None,
    *,
    run: Run,
) -> None:
    """JSON results: ``entries`` (list of ``{"key", "bibtex"}``)."""
    entries = [{"key": key, "bibtex": bib} for key, bib in citations_for(command)]

    def render(console, results) -> None:
        console.print("\n\n".join(e["bibtex"] for e in results["entries"]), markup=False)

    run.finish({"command": command, "entries": entries}, {"command": command}, render)


app = with_common_options(cite)
