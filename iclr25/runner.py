"""The CLI contract, defined once: common options, the run context and the error path.

Every subcommand is a plain function decorated with :func:`command` (or wrapped by
:func:`with_common_options` for a group callback). The decorator appends the common
options to the function's signature, so they are accepted after any subcommand::

    --json  --out DIR  --overwrite  --seed INT  --device auto|cpu|cuda  --quiet  --verbose

and passes the function a :class:`Run` (keyword ``run``) that holds them. A command
reads its own options, builds a config dataclass, calls one core function and ends with
``run.finish(results, config, render)``.

Errors: core code raises :mod:`iclr25.errors` exceptions; this module prints
``Error: <what> — <how to fix>`` on stderr and exits 2 (bad usage/input), 1 (runtime
failure) or 130 (Ctrl-C). ``--verbose`` adds the traceback. With ``--out``, everything is
written to a temporary sibling folder that replaces DIR only when the command succeeds,
so a failed or interrupted run leaves nothing behind and overwrites nothing.

Under ``torchrun`` only rank 0 reports: every other rank runs with ``--quiet``, without
``--out`` or ``--json``, prints nothing on stdout and no error line for a usage or input
error or Ctrl-C (rank 0 prints the same one); see :mod:`iclr25.distributed_torch`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import inspect
import io
import os
import random
import signal
import sys
import threading
import time
import traceback
import warnings as pywarnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from iclr25 import atomic, distributed_torch
from iclr25.errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    IclrError,
    Terminated,
    UsageError,
)
from iclr25.gpu import DEVICE_CHOICES, DeviceChoice, select_device
from iclr25.output import (
    Renderer,
    build_document,
    dumps,
    environment_block,
    render_mapping,
    to_jsonable,
    write_stdout,
)


@dataclasses.dataclass(frozen=True)
class CommonOptions:
    """The options every command accepts (see the module docstring)."""

    json_output: bool = False
    out: Path | None = None
    overwrite: bool = False
    seed: int = 0
    device: str = "auto"
    quiet: bool = False
    verbose: bool = False


class DeviceName(enum.StrEnum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


assert tuple(d.value for d in DeviceName) == DEVICE_CHOICES

_COMMON_PANEL = "Common options"
_COMMON_PARAMS = [
    inspect.Parameter(
        "json_output",
        inspect.Parameter.KEYWORD_ONLY,
        default=False,
        annotation=Annotated[
            bool,
            typer.Option(
                "--json",
                help="Print one JSON document on stdout instead of tables.",
                rich_help_panel=_COMMON_PANEL,
            ),
        ],
    ),
    inspect.Parameter(
        "out",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            Path | None,
            typer.Option(
                "--out",
                help="Write a run directory (config.json, result.json, plots, artifacts).",
                rich_help_panel=_COMMON_PANEL,
            ),
        ],
    ),
    inspect.Parameter(
        "overwrite",
        inspect.Parameter.KEYWORD_ONLY,
        default=False,
        annotation=Annotated[
            bool,
            typer.Option(
                "--overwrite",
                help="Replace existing output (a non-empty --out dir, or a file written).",
                rich_help_panel=_COMMON_PANEL,
            ),
        ],
    ),
    inspect.Parameter(
        "seed",
        inspect.Parameter.KEYWORD_ONLY,
        default=0,
        annotation=Annotated[
            int,
            typer.Option(
                "--seed",
                help="Seed for python, numpy, torch (and cupy).",
                rich_help_panel=_COMMON_PANEL,
            ),
        ],
    ),
    inspect.Parameter(
        "device",
        inspect.Parameter.KEYWORD_ONLY,
        default=DeviceName.auto,
        annotation=Annotated[
            DeviceName,
            typer.Option(
                "--device",
                help="Where to compute: auto (CUDA when usable), cpu or cuda.",
                rich_help_panel=_COMMON_PANEL,
            ),
        ],
    ),
    inspect.Parameter(
        "quiet",
        inspect.Parameter.KEYWORD_ONLY,
        default=False,
        annotation=Annotated[
            bool,
            typer.Option(
                "--quiet",
                "-q",
                help="No progress or logs on stderr.",
                rich_help_panel=_COMMON_PANEL,
            ),
        ],
    ),
    inspect.Parameter(
        "verbose",
        inspect.Parameter.KEYWORD_ONLY,
        default=False,
        annotation=Annotated[
            bool,
            typer.Option(
                "--verbose", "-v", help="Tracebacks on errors.", rich_help_panel=_COMMON_PANEL
            ),
        ],
    ),
]
_COMMON_NAMES = {p.name for p in _COMMON_PARAMS}
#: typer injects the click context here (used for the command path and group callbacks)
_CONTEXT_PARAM = inspect.Parameter(
    "iclr25_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context
)


def seed_everything(seed: int) -> None:
    """Seed python and numpy, and torch / cupy when they are already imported."""
    import numpy as np

    random.seed(seed)
    np.random.seed(seed % 2**32)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
    if "cupy" in sys.modules:
        with contextlib.suppress(Exception):
            sys.modules["cupy"].random.seed(seed % 2**32)


class Run:
    """What a command gets besides its own options: common options, device, output."""

    def __init__(self, command: str, options: CommonOptions) -> None:
        from rich.console import Console

        self.command = command
        self.options = options
        self.warnings: list[str] = []
        self.timings: dict[str, float] = {}
        self.stderr = Console(stderr=True, highlight=False)
        self.stdout = Console(highlight=False)
        self.chatty = not options.quiet and self.stderr.is_terminal
        self._t0 = time.perf_counter()
        self._finished = False
        self.staging: Path | None = None  # set by the decorator while --out is staged
        #: a non-zero code here makes the CLI exit with it *after* the output is written
        #: (e.g. ``track`` returns its child's exit status and keeps its run directory)
        self.exit_code: int = 0
        self.library_warnings: list = []  # filled by warnings.catch_warnings(record=True)
        #: merged into the JSON ``environment`` block (e.g. ``execution``: how tasks ran)
        self.environment_extra: dict[str, Any] = {}
        self.device: DeviceChoice = select_device(options.device)
        seed_everything(options.seed)

    # -- properties ------------------------------------------------------------------
    @property
    def seed(self) -> int:
        return self.options.seed

    @property
    def json(self) -> bool:
        return self.options.json_output

    @property
    def wants_artifacts(self) -> bool:
        """True when --out was given, so plots and artifacts will be kept."""
        return self.staging is not None

    # -- messages --------------------------------------------------------------------
    def log(self, message: str) -> None:
        """A progress or status line on stderr (silent with --quiet or off a terminal)."""
        if self.chatty:
            self.stderr.print(message, markup=False, soft_wrap=True)

    def warn(self, message: str) -> None:
        """A warning: in the JSON ``warnings`` and, one line each, on stderr — terminal or
        not (a script's log must show what was assumed or dropped); only --quiet hides it."""
        if message not in self.warnings:
            self.warnings.append(message)
            if not self.options.quiet:
                self.stderr.print(
                    f"Warning: {message}", style="yellow", markup=False, soft_wrap=True
                )

    def drain_library_warnings(self) -> None:
        """Move warnings raised by libraries (``warnings.warn``) into ``self.warnings``."""
        while self.library_warnings:
            w = self.library_warnings.pop(0)
            text = " ".join(str(w.message).split())  # one line, as the contract says
            self.warn(f"{w.category.__name__}: {text}")

    # -- progress and timing ---------------------------------------------------------
    @contextlib.contextmanager
    def progress(self, description: str, total: float | None = None) -> Iterator[Callable]:
        """Yield ``advance(n=1, **fields)``; shows a transient rich bar when chatty."""
        if not self.chatty:
            yield lambda n=1, **fields: None
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = [SpinnerColumn(), TextColumn("[progress.description]{task.description}")]
        columns += [BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn()]
        columns += [TextColumn("{task.fields[status]}")]
        with Progress(*columns, console=self.stderr, transient=True) as bar:
            task = bar.add_task(description, total=total, status="")

            def advance(n: float = 1, **fields: Any) -> None:
                status = "  ".join(f"{k}={v}" for k, v in fields.items())
                bar.update(task, advance=n, **({"status": status} if fields else {}))

            yield advance

    @contextlib.contextmanager
    def timer(self, key: str) -> Iterator[None]:
        """Add the wall-clock seconds of the block to ``timings[key]``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - t0

    # -- artifacts -------------------------------------------------------------------
    def artifact_path(self, name: str) -> Path | None:
        """Where to write an artifact inside the run directory (None without --out)."""
        if self.staging is None:
            return None
        path = self.staging / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def save_plot(self, figure: Any, name: str) -> Path | None:
        """Save a matplotlib figure as PNG into the run directory and close it."""
        path = self.artifact_path(name if name.endswith(".png") else name + ".png")
        try:
            if path is not None:
                figure.savefig(path, dpi=120, bbox_inches="tight")
        finally:
            import matplotlib.pyplot as plt

            plt.close(figure)
        return path

    # -- the end of a command --------------------------------------------------------
    def document(self, results: Any, config: Any) -> dict:
        self.drain_library_warnings()
        timings = dict(self.timings)
        timings["total_s"] = time.perf_counter() - self._t0
        env = {**environment_block(self.device.as_dict()), **self.environment_extra}
        return build_document(self.command, config, results, timings, self.warnings, env)

    def finish(self, results: Any, config: Any = None, render: Renderer | None = None) -> dict:
        """Print the results (JSON or tables) and write result.json / config.json."""
        if self._finished:
            raise RuntimeError("Run.finish called twice")
        self._finished = True
        doc = self.document(results, config)
        if self.staging is not None:
            run_config = {
                "command": self.command,
                "argv": sys.argv[1:],
                "common": dataclasses.asdict(self.options),
                "config": doc["config"],
            }
            atomic.write_json(self.staging / "config.json", to_jsonable(run_config))
            atomic.write_json(self.staging / "result.json", doc)
        if self.options.json_output:
            write_stdout(dumps(doc))
        else:
            (render or render_mapping)(self.stdout, doc["results"])
            if self.options.out is not None:
                self.log(f"Run directory: {self.options.out}")
        return doc


#: typer's own exception types (typer may vendor click): passed through untouched
_CLI_EXCEPTIONS = (
    typer.Exit,
    typer.Abort,
    next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"),
)


def _command_path(ctx: typer.Context | None) -> str:
    """``carbon-report estimate`` for ``iclr25 carbon-report estimate ...``."""
    names = []
    while ctx is not None:
        if ctx.info_name:
            names.append(ctx.info_name)
        ctx = ctx.parent
    names = names[::-1][1:]  # drop the program name
    return " ".join(names) or "iclr25"


def print_error(message: str) -> None:
    """``Error: <message>`` as one line (a library's multi-line message is joined)."""
    from rich.console import Console

    one_line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    Console(stderr=True, highlight=False).print(
        f"Error: {one_line}", style="red", markup=False, soft_wrap=True
    )


def _report_exception(exc: BaseException, verbose: bool, out: Path | None = None) -> int:
    if verbose:
        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, IclrError):
        print_error(exc.message())
        return exc.exit_code
    if isinstance(exc, Terminated):
        kept = f"{out} was not written" if out is not None else "stopped"
        print_error(f"terminated (SIGTERM) — {kept}")
        return EXIT_TERMINATED
    if isinstance(exc, KeyboardInterrupt):
        kept = f"{out} was not written; " if out is not None else ""
        print_error(f"interrupted (Ctrl-C) — {kept}run the command again to redo the work")
        return EXIT_INTERRUPTED
    if isinstance(exc, MemoryError):
        print_error("out of memory — reduce the problem size (see the command's --help)")
        return EXIT_FAILURE
    hint = "" if verbose else "rerun with --verbose for the traceback, and please report it"
    print_error(f"unexpected failure: {type(exc).__name__}: {exc}" + (f" — {hint}" if hint else ""))
    return EXIT_FAILURE


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` while a command runs, so ``finally`` blocks
    (staged output removal) run as they do on Ctrl-C. Only possible in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_command(fn: Callable, args: tuple, kwargs: dict, common: CommonOptions, name: str) -> Any:
    with pywarnings.catch_warnings(record=True) as caught, _sigterm_unwinds():
        pywarnings.simplefilter("default")
        run = Run(name, common)
        run.library_warnings = caught
        try:
            if common.out is None:
                result = fn(*args, run=run, **kwargs)
            else:
                with atomic.staged_dir(common.out, overwrite=common.overwrite) as staging:
                    run.staging = staging
                    result = fn(*args, run=run, **kwargs)
        finally:
            run.drain_library_warnings()
    if run.exit_code:
        raise typer.Exit(run.exit_code)
    return result


def with_common_options(fn: Callable) -> Callable:
    """Append the common options to ``fn``'s signature and run it inside the contract.

    ``fn`` must take a keyword-only ``run: Run`` parameter. Used as a group callback, the
    wrapper does nothing when a subcommand follows (so the group can have a default action).
    """
    # eval_str: resolve string annotations (``from __future__ import annotations``) in fn's
    # module, or typer would look them up in this module and drop Option help and panels
    sig = inspect.signature(fn, eval_str=True)
    own = [p for p in sig.parameters.values() if p.name != "run"]
    clash = (_COMMON_NAMES | {_CONTEXT_PARAM.name}) & {p.name for p in own}
    if clash:
        raise TypeError(f"{fn.__name__} redefines common options {sorted(clash)}")

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = kwargs.pop(_CONTEXT_PARAM.name)
        if getattr(ctx, "invoked_subcommand", None):
            return None
        values = {name: kwargs.pop(name) for name in _COMMON_NAMES}
        values["device"] = getattr(values["device"], "value", values["device"])
        common = CommonOptions(**values)
        follower = distributed_torch.is_follower()  # torchrun rank > 0: rank 0 reports
        if follower:
            common = dataclasses.replace(common, json_output=False, out=None, quiet=True)
        try:
            with _stdout_silenced(follower):
                return _run_command(fn, args, kwargs, common, _command_path(ctx))
        except _CLI_EXCEPTIONS:
            raise
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(EXIT_FAILURE) from None
        except BaseException as exc:  # noqa: BLE001 - the one error path
            quiet = follower and isinstance(exc, IclrError | KeyboardInterrupt)
            with contextlib.redirect_stderr(io.StringIO()) if quiet else contextlib.nullcontext():
                code = _report_exception(exc, common.verbose, common.out)
            raise typer.Exit(code) from None

    keyword_only = inspect.Parameter.KEYWORD_ONLY
    positional = [p for p in own if p.kind != keyword_only]
    keywords = [p for p in own if p.kind == keyword_only]
    extra = [*_COMMON_PARAMS, _CONTEXT_PARAM]
    wrapper.__signature__ = sig.replace(parameters=positional + keywords + extra)
    hints = {p.name: p.annotation for p in own if p.annotation is not inspect.Parameter.empty}
    if sig.return_annotation is not inspect.Signature.empty:
        hints["return"] = sig.return_annotation
    hints.update({p.name: p.annotation for p in extra})
    wrapper.__annotations__ = hints
    return wrapper


@contextlib.contextmanager
def _stdout_silenced(silenced: bool) -> Iterator[None]:
    if not silenced:
        yield
        return
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        yield


def command(app: typer.Typer, name: str | None = None, **kwargs: Any) -> Callable:
    """``@command(app, "estimate", help=...)``: register ``fn`` with the common options."""

    def decorate(fn: Callable) -> Callable:
        app.command(name, **kwargs)(with_common_options(fn))
        return fn

    return decorate


def require(condition: bool, what: str, fix: str) -> None:
    """Raise a UsageError unless ``condition``: for one-line option checks in commands."""
    if not condition:
        raise UsageError(what, fix)
