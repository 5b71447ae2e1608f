"""The papers behind each subcommand, as BibTeX (``iclr25/data/citations.bib``)."""

from __future__ import annotations

import re

from iclr25.errors import UsageError
from iclr25.paths import package_file

#: subcommand -> BibTeX keys of the papers it implements (main paper first)
PAPERS: dict[str, tuple[str, ...]] = {
    "icl-order": ("pham2025rapid", "wu2023selfadaptive"),
    "diffusion-at": ("wang2025improved",),
    "dro-bound": ("le2025universal", "azizian2023exact"),
    "bandit-replicable": ("chen2025regret",),
    "style-check": ("moayeri2025rethinking",),
    "carbon-report": ("morrison2025holistically",),
    "gpu-bench": ("spector2025thunderkittens",),
    "diffusion-probe": ("sclocchi2025probing", "cagnetta2024rhm"),
    "exicl": ("zhao2025exploratory", "malik2021inverse", "janner2022planning"),
    "mufu": ("lim2025mufu",),
    "ph-dgn": ("heilig2025porthamiltonian",),
    "pi-dion": ("cho2025physicsinformed",),
    "pn-gail": ("liu2025pngail", "wu2019imperfect", "ho2016gail"),
    "mim-refine": ("alkin2025mimrefiner",),
}

_ENTRY_START = re.compile(r"^@\w+\{([^,\s]+),", re.MULTILINE)


def load_bibtex() -> dict[str, str]:
    """Every entry of the bundled .bib file, keyed by its citation key."""
    text = package_file("iclr25.data", "citations.bib").read_text(encoding="utf-8")
    starts = list(_ENTRY_START.finditer(text))
    entries = {}
    for match, nxt in zip(starts, starts[1:] + [None], strict=True):
        end = nxt.start() if nxt else len(text)
        entries[match.group(1)] = text[match.start() : end].strip()
    return entries


def citations_for(command: str | None) -> list[tuple[str, str]]:
    """(key, bibtex) pairs for one subcommand, or for all of them when ``command`` is None."""
    entries = load_bibtex()
    if command is None:
        keys = list(dict.fromkeys(k for ks in PAPERS.values() for k in ks))
    elif command in PAPERS:
        keys = list(PAPERS[command])
    else:
        raise UsageError(
            f"no paper is registered for {command!r}",
            f"use one of: {', '.join(sorted(PAPERS))}",
        )
    return [(key, entries[key]) for key in keys]
