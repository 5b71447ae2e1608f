"""Refusing work whose arrays would clearly not fit a workstation, before any work starts."""

from __future__ import annotations

from iclr25.errors import UsageError

#: coarse estimates above this are refused with the fix (a smaller --n / --batch-size)
MEMORY_LIMIT_BYTES = 8 * 2**30


def check_memory(n_bytes: float, what: str, fix: str) -> None:
    """UsageError when ``n_bytes`` exceeds :data:`MEMORY_LIMIT_BYTES` (before any work)."""
    if n_bytes > MEMORY_LIMIT_BYTES:
        raise UsageError(f"{what} would need about {n_bytes / 2**30:,.0f} GiB of memory", fix)
