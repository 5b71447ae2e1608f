"""The common-options decorator, error path, seeding and warnings, in process."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Annotated

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from iclr25.errors import InputError, RunFailure
from iclr25.runner import Run, command


def make_app() -> typer.Typer:
    app = typer.Typer(no_args_is_help=True)

    @command(app, "draw")
    def draw(n: Annotated[int, typer.Option(help="how many")] = 3, *, run: Run) -> None:
        if n < 0:
            raise InputError(f"--n {n} is negative", "pass --n 0 or more")
        if n == 13:
            raise RunFailure("unlucky", "try another n")
        if n == 99:
            raise ZeroDivisionError("boom")
        if n == 7:
            warnings.warn("library says hi", UserWarning, stacklevel=1)
            run.warn("seven is a lot")
        if n == 8:
            warnings.warn("a library warning\non two lines", UserWarning, stacklevel=1)
        if n == 42:
            path = run.artifact_path("partial.txt")
            if path is not None:
                path.write_text("half")
            raise KeyboardInterrupt
        with run.timer("draw_s"):
            values = np.random.default_rng(run.seed).normal(size=n)
        run.finish({"values": values, "legacy": float(np.random.rand())}, {"n": n})

    @command(app, "other")
    def other(*, run: Run) -> None:
        run.finish({"ok": True})

    return app


runner = CliRunner()


def invoke(*args):
    return runner.invoke(make_app(), list(args))


def test_common_options_after_subcommand_and_json_document():
    result = invoke("draw", "--n", "4", "--json", "--seed", "5", "--device", "cpu")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["command"] == "draw" or doc["command"].endswith("draw")
    assert doc["config"] == {"n": 4}
    assert len(doc["results"]["values"]) == 4
    assert doc["environment"]["device"]["kind"] == "cpu"
    assert "draw_s" in doc["timings"]


def test_same_seed_same_results_different_seed_differs():
    a = json.loads(invoke("draw", "--json", "--seed", "1").stdout)["results"]
    b = json.loads(invoke("draw", "--json", "--seed", "1").stdout)["results"]
    c = json.loads(invoke("draw", "--json", "--seed", "2").stdout)["results"]
    assert a == b  # numpy Generator and the seeded legacy global state
    assert a != c


def test_input_error_exits_2_with_one_line_and_fix():
    result = invoke("draw", "--n", "-1")
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: --n -1 is negative — pass --n 0 or more"


def test_run_failure_exits_1():
    result = invoke("draw", "--n", "13")
    assert result.exit_code == 1
    assert "Error: unlucky — try another n" in result.stderr


def test_unexpected_exception_no_traceback_unless_verbose():
    quiet = invoke("draw", "--n", "99")
    assert quiet.exit_code == 1
    assert "Traceback" not in quiet.stderr
    assert "ZeroDivisionError: boom" in quiet.stderr and "--verbose" in quiet.stderr
    loud = invoke("draw", "--n", "99", "--verbose")
    assert loud.exit_code == 1
    assert "Traceback" in loud.stderr


def test_ctrl_c_exits_130_and_leaves_no_output(tmp_path: Path):
    out = tmp_path / "run"
    result = invoke("draw", "--n", "42", "--out", str(out))
    assert result.exit_code == 130
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_warnings_land_in_json():
    doc = json.loads(invoke("draw", "--n", "7", "--json").stdout)
    assert "seven is a lot" in doc["warnings"]
    assert any("library says hi" in w for w in doc["warnings"])


def test_a_multi_line_library_warning_is_one_stderr_line():
    result = invoke("draw", "--n", "8")
    assert result.exit_code == 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("Warning: ")]
    assert lines == ["Warning: UserWarning: a library warning on two lines"]


def test_out_dir_refused_before_work_starts(tmp_path: Path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("precious")
    result = invoke("other", "--out", str(out))
    assert result.exit_code == 2
    assert (out / "keep.txt").read_text() == "precious"


def test_decorator_refuses_clashing_option_names():
    app = typer.Typer()
    with pytest.raises(TypeError):

        @command(app, "bad")
        def bad(seed: int = 0, *, run: Run) -> None:  # noqa: ARG001
            pass


def test_progress_and_logs_are_silent_off_a_terminal_but_warnings_are_not(capsys):
    from iclr25.runner import CommonOptions

    run = Run("x", CommonOptions(device="cpu"))
    assert not run.chatty  # pytest captures stderr: not a terminal
    with run.progress("work", total=3) as advance:
        for _ in range(3):
            advance(1, loss=0.5)
    run.log("a log line")
    run.warn("a warning")
    run.warn("a warning")  # once only
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "Warning: a warning\n"  # a script's log shows what was assumed
    assert run.warnings == ["a warning"]  # and it reaches the JSON document


def test_quiet_silences_warnings_on_stderr_but_keeps_them_in_json(capsys):
    from iclr25.runner import CommonOptions

    run = Run("x", CommonOptions(device="cpu", quiet=True))
    run.warn("a warning")
    assert capsys.readouterr().err == ""
    assert run.warnings == ["a warning"]


def test_every_json_warning_reaches_a_redirected_stderr():
    result = runner.invoke(make_app(), ["draw", "--n", "7", "--json"])
    doc = json.loads(result.stdout)  # stdout holds the document only
    assert len(doc["warnings"]) == 2
    for message in doc["warnings"]:
        assert f"Warning: {message}" in result.stderr.splitlines()


def test_option_metadata_survives_postponed_annotations():
    # this module uses `from __future__ import annotations`: the Option's help must survive
    result = invoke("draw", "--help")
    assert result.exit_code == 0
    assert "how many" in result.output


def test_exit_code_set_by_command_applies_after_output_is_written(tmp_path: Path):
    app = typer.Typer(no_args_is_help=True)

    @command(app, "child")
    def child(*, run: Run) -> None:
        run.finish({"exit_code": 3})
        run.exit_code = 3  # e.g. a tracked child process exited with 3

    @command(app, "other")
    def other(*, run: Run) -> None:
        run.finish({})

    out = tmp_path / "run"
    result = runner.invoke(app, ["child", "--json", "--out", str(out)])
    assert result.exit_code == 3, result.output
    assert json.loads(result.stdout)["results"] == {"exit_code": 3}
    assert json.loads((out / "result.json").read_text())["results"]["exit_code"] == 3


def test_string_annotations_keep_option_help(tmp_path, monkeypatch):
    """A command module with ``from __future__ import annotations`` (string annotations,
    Annotated aliases defined in that module) keeps its options' help and panels."""
    module = tmp_path / "futcmd.py"
    module.write_text(
        "from __future__ import annotations\n"
        "from typing import Annotated\n"
        "import typer\n"
        "from iclr25.runner import Run, command\n"
        "app = typer.Typer()\n"
        "NOpt = Annotated[int, typer.Option('--n', help='how many things',"
        " rich_help_panel='Panel X')]\n"
        "@command(app, 'draw')\n"
        "def draw(n: NOpt = 3, *, run: Run) -> None:\n"
        "    run.finish({'n': n})\n"
        "@command(app, 'other')\n"
        "def other(*, run: Run) -> None:\n"
        "    run.finish({})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    futcmd = importlib.import_module("futcmd")
    help_text = runner.invoke(futcmd.app, ["draw", "--help"]).output
    assert "how many things" in help_text
    assert "Panel X" in help_text
    result = runner.invoke(futcmd.app, ["draw", "--n", "5", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["results"] == {"n": 5}
