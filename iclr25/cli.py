"""The root ``iclr25`` Typer app.

Subcommands live in ``iclr25/commands/<module>.py``; each module defines ``app`` (a
Typer app or a single command function registered under ``NAME``), ``NAME``, ``HELP``
and optionally ``DEMO`` (see :mod:`iclr25.commands.demo`). Adding a subcommand is one
line in :data:`COMMAND_MODULES`.

Importing this module must stay cheap: command modules import typer and their own
option parsing only; torch, transformers and cupy are imported inside command bodies.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Annotated

import typer

from iclr25 import __version__

#: Command modules in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "icl_order",
    "diffusion_at",
    "dro_bound",
    "bandit_replicable",
    "style_check",
    "carbon_report",
    "exicl",
    "gpu_bench",
    "diffusion_probe",
    "mufu",
    "ph_dgn",
    "pi_dion",
    "pn_gail",
    "mim_refine",
    "info",
    "cite",
    "demo",
)


def load_command_modules() -> list[ModuleType]:
    return [importlib.import_module(f"iclr25.commands.{name}") for name in COMMAND_MODULES]


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"iclr25 {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="iclr25",
        help="ICLR 2025 papers as measured research tools. Run `iclr25 demo` for a tour.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        version: Annotated[
            bool,
            typer.Option(
                "--version", callback=_version_callback, is_eager=True, help="Print the version."
            ),
        ] = False,
    ) -> None:
        """ICLR 2025 papers as measured research tools."""

    for module in load_command_modules():
        sub = module.app
        if isinstance(sub, typer.Typer):
            app.add_typer(sub, name=module.NAME, help=module.HELP)
        else:  # a single command function
            app.command(module.NAME, help=module.HELP)(sub)
    return app


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    app = build_app()
    app(args=argv if argv is not None else sys.argv[1:], prog_name="iclr25")
