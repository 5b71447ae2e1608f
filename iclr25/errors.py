"""The one error path of the toolkit.

Core code raises these typed exceptions; the CLI layer (`iclr25.runner`) turns them into
one line on stderr, ``Error: <what> — <how to fix>``, and an exit code:

- 2 for bad usage or bad input (:class:`InputError`, :class:`UsageError`),
- 1 for failures at run time (:class:`RunFailure` and anything unexpected),
- 130 on Ctrl-C, 143 on SIGTERM (both clean up staged output first).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class IclrError(Exception):
    """Base class: ``what`` went wrong and ``fix`` says how to fix it."""

    exit_code = EXIT_FAILURE

    def __init__(self, what: str, fix: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.fix = fix

    def message(self) -> str:
        return f"{self.what} — {self.fix}" if self.fix else self.what

    def __str__(self) -> str:
        return self.message()


class UsageError(IclrError):
    """An invalid option value or combination (exit 2)."""

    exit_code = EXIT_USAGE


class InputError(IclrError):
    """A missing, malformed or unsuitable input file or value (exit 2)."""

    exit_code = EXIT_USAGE


class DeviceError(UsageError):
    """A requested device (e.g. ``--device cuda``) is not available (exit 2)."""


class RunFailure(IclrError):
    """The work itself failed at run time (exit 1)."""

    exit_code = EXIT_FAILURE


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwound like Ctrl-C (staged output removed), exit 143."""
