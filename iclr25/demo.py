"""Demo registration: each command module lists ``DEMO`` steps that ``iclr25 demo`` runs.

A step is the command line of a quick, offline run on the command's embedded default.
The demo runs it through the real CLI (a subprocess with ``--json --quiet --out``) and
shows one headline figure picked from the JSON document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: a shared, busy machine can run a step several times slower than its budget; only a
#: step past this multiple of its budget is treated as hung and stopped
HANG_FACTOR = 5.0


@dataclass(frozen=True)
class DemoStep:
    title: str  # shown in the summary table, e.g. "carbon-report estimate"
    args: tuple[str, ...]  # CLI arguments after `iclr25`, without the common options
    headline: Callable[[dict], str]  # the JSON document -> one short figure
    #: the step's time budget on a quiet machine; a run over it is reported with the
    #: headline, and only a run over HANG_FACTOR × the budget (a hung step) is stopped
    timeout_s: float = 180.0

    @property
    def folder(self) -> str:
        return self.title.replace(" ", "-")
