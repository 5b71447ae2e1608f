"""Demo registration: each command module lists ``DEMO`` steps that ``iclr25 demo`` runs.

A step is the command line of a quick, offline run on the command's embedded default.
The demo runs it through the real CLI (a subprocess with ``--json --quiet --out``) and
shows one headline figure picked from the JSON document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class DemoStep:
    title: str  # shown in the summary table, e.g. "carbon-report estimate"
    args: tuple[str, ...]  # CLI arguments after `iclr25`, without the common options
    headline: Callable[[dict], str]  # the JSON document -> one short figure
    timeout_s: float = 180.0  # a step that takes longer is stopped and reported

    @property
    def folder(self) -> str:
        return self.title.replace(" ", "-")
